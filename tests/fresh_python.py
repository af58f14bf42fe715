"""A fresh Python process: what importing a module costs as a new kernel or exporter meets it."""

from __future__ import annotations

import subprocess
import sys

NETWORK_STACK = ("httpx", "anyio", "ipywidgets")


def printed(code: str) -> str:
    """What a fresh Python prints running ``code``."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def network_stack_after(*modules: str) -> str:
    """The modules of the network stack a fresh Python holds once it imported ``modules``, as a
    printed list (``[]``: none)."""
    held = f"sorted(m for m in {NETWORK_STACK!r} if m in sys.modules)"
    return printed(f"import sys, {', '.join(modules)}; print({held})")
