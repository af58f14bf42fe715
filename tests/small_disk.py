"""A small tmpfs of a test's own, to be filled up or remounted read-only: a user's full or
read-only disk, for root too (a chmod does not stop root). Mounting needs root; where it is
refused, the test is skipped."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest


class SmallDisk:
    def __init__(self, path: Path):
        self.path = path

    def fill(self) -> None:
        with open(self.path / "filler", "wb", buffering=0) as filler, suppress(OSError):
            while filler.write(b"\0" * 65_536):  # until ENOSPC
                pass
        assert shutil.disk_usage(self.path).free < 65_536

    def read_only(self) -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(self.path)], check=True)


@contextmanager
def mounted(path: Path, size: str = "2m") -> Iterator[SmallDisk]:
    path.mkdir()
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    if mount.returncode != 0:
        pytest.skip(f"mounting a tmpfs needs root ({mount.stderr.decode().strip()})")
    try:
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)
