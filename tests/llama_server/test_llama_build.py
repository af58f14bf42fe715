"""The one-time ``llama-server`` build: real cmake and a real compiler on a tiny source tree that
has a ``llama-server`` target, so the driver (configure, compile, progress, cache, failure) is
proved in seconds. The real llama.cpp build runs before the suite (``tools/test.sh``) and is
then used by the real-server tests."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from reasoning_nb.errors import ProviderError
from reasoning_nb.llama_server import build as llama_build
from reasoning_nb.llama_server.progress import BuildProgress

MAIN = '#include <cstdio>\nint main() { std::puts("tiny llama-server"); return 0; }\n'
PART = "int part{n}() {{ return {n}; }}\n"
CMAKE = """cmake_minimum_required(VERSION 3.14)
project(tiny CXX)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
add_executable(llama-server main.cpp part1.cpp part2.cpp part3.cpp)
add_executable(other-tool main.cpp)
"""


def tiny_source(broken: bool = False):
    """A ``fetch`` for ``llama_build.build``: writes the tiny tree and counts its calls."""
    calls = []

    def fetch(work, log):
        calls.append(work)
        source = work / "llama.cpp"
        source.mkdir()
        (source / "CMakeLists.txt").write_text(CMAKE)
        (source / "main.cpp").write_text(MAIN)
        for n in (1, 2, 3):
            text = PART.format(n=n) if not (broken and n == 2) else "int part2( { oops\n"
            (source / f"part{n}.cpp").write_text(text)
        return source

    fetch.calls = calls
    return fetch


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("REASONING_NB_CACHE_DIR", str(tmp_path / "cache"))
    if llama_build.missing_tools():
        pytest.skip(llama_build.missing_tools())
    return tmp_path / "cache"


def test_build_reports_progress_installs_into_the_cache_and_is_done_once(cache):
    reports, fetch = [], tiny_source()
    path = llama_build.build(llama_build.NATIVE, lambda *r: reports.append(r), fetch)
    assert path == llama_build.NATIVE.binary() and path.is_relative_to(cache)
    assert subprocess.run([path], capture_output=True, text=True).stdout == "tiny llama-server\n"
    stages = [stage for stage, fraction in reports if fraction is None]
    assert stages == ["downloading the llama.cpp source", "configuring"]
    fractions = [fraction for stage, fraction in reports if stage == "compiling"]
    assert fractions[0] == 0 and fractions[-1] == 1 and fractions == sorted(fractions)
    assert len(fractions) >= 4  # one report per compile and link step, not only the end
    # only the server target was built, and the work tree is gone
    assert not list(cache.rglob("other-tool")) and not list(cache.rglob(".build-*"))
    assert llama_build.build(llama_build.NATIVE, fetch=fetch) == path and len(fetch.calls) == 1


def test_native_and_portable_builds_live_apart(cache):
    native = llama_build.build(llama_build.NATIVE, fetch=tiny_source())
    portable = llama_build.build(llama_build.PORTABLE, fetch=tiny_source())
    assert native != portable and native.exists() and portable.exists()
    assert llama_build.cpu_fingerprint() in native.parent.name
    assert "portable" in portable.parent.name


def test_a_failed_build_names_the_error_and_keeps_its_log(cache):
    with pytest.raises(ProviderError) as caught:
        llama_build.build(llama_build.NATIVE, fetch=tiny_source(broken=True))
    message = str(caught.value)
    assert message.startswith("Building llama-server failed while compiling (")
    assert "part2.cpp" in message and "error" in message
    log = message.rsplit("the full log is at ", 1)[1].rstrip(".")
    assert "oops" in Path(log).read_text()
    assert not llama_build.NATIVE.binary().exists()
    assert [p.name for p in Path(log).parent.iterdir()] == ["build.log"]  # no source, no objects


def test_a_tampered_source_archive_is_refused(tmp_path):
    archive = tmp_path / llama_build.SDIST_FILE
    with tarfile.open(archive, "w:gz") as tar:
        data = b"not llama.cpp"
        info = tarfile.TarInfo(llama_build.SOURCE_DIR + "CMakeLists.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(ProviderError, match="not the pinned b0a2feb6"):
        llama_build.verify(archive)


def test_missing_cmake_names_pip_install_cmake(monkeypatch):
    monkeypatch.setattr(llama_build, "find_tool", lambda name: None)
    monkeypatch.setenv("CXX", "c++")
    message = llama_build.missing_tools()
    assert message == (
        "Building llama-server for this CPU needs cmake, which this machine lacks: install it "
        f"(`pip install cmake`), then run `{llama_build.BUILD_COMMAND}`."
    )


def test_the_compiler_is_found_where_cmake_would_find_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CXX", raising=False)
    assert "a C++ compiler" in (llama_build.missing_tools() or "")
    monkeypatch.setenv("CXX", shutil.which("true") or "/bin/true")
    assert llama_build.missing_tools() is None or "cmake" in llama_build.missing_tools()


# -- what the terminal shows -----------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_log_gets_one_line_per_stage_and_per_tenth():
    out, clock = io.StringIO(), Clock()
    progress = BuildProgress(240, out, tty=False, clock=clock)
    progress("downloading the llama.cpp source", None)
    clock.now += 5
    progress("configuring", None)
    for step in range(1, 209):  # ninja's 208 steps of the real build, 1 s each
        clock.now += 1
        progress("compiling", step / 208)
    progress.done()
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["  downloading the llama.cpp source… (0:00)", "  configuring… (0:05)"]
    compiling = [line for line in lines if line.startswith("  compiling")]
    assert len(compiling) == 11  # 0%..100% in tenths: never silent for long, never flooding
    # before a tenth is built, the expected total speaks; after it, the pace so far
    assert compiling[0] == "  compiling: 0%  0:06 elapsed, about 3:54 left"
    assert compiling[5] == "  compiling: 50%  1:49 elapsed, about 1:49 left"
    assert lines[-1] == "  built in 3:33"


def test_a_terminal_gets_one_redrawn_bar():
    out, clock = io.StringIO(), Clock()
    progress = BuildProgress(240, out, tty=True, clock=clock)
    progress("configuring", None)
    for step in range(1, 11):
        clock.now += 0.5
        progress("compiling", step / 10)
    progress.done()
    text = out.getvalue()
    assert text.startswith("  configuring… (0:00)\n\r  compiling ██")
    assert text.count("\r") == 10 and "100%" in text
    assert text.endswith("\n  built in 0:05\n")
    assert "█" * 12 + "░" * 12 + "  50%" in text
