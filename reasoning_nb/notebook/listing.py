"""``%think --list``: the providers we know, and what the local servers offer right now.

A :class:`Listing` shows as an HTML table in Jupyter and as text in columns elsewhere; the text
wraps on words inside its column (an address or a command never breaks), so a line never wraps
mid-word in an output area or a terminal.
"""

from __future__ import annotations

import html
import os
import textwrap
from dataclasses import dataclass, field

import anyio

from ..core.capabilities import snapshot_as_of
from ..errors import ReasoningNBError
from ..llama_server.process import INSTALL_HINT
from ..providers import local
from ..providers.address import base_url_for
from ..providers.catalog import PROVIDERS
from ..providers.discovery import embedded_installed, local_servers, resolve_default
from ..providers.profile import Profile
from ..providers.protocols import protocol_module
from ..views.stats_table import td

WIDTH = 100
"""Characters a text line may take: Lab's usual 968 px output area holds about 120 of its 13 px
monospace, so a line this long never wraps there."""
TITLE = "Providers (model id = PROVIDER:MODEL)"
NO_SERVER = "No local server answered (ollama serve, llama-server, LM Studio, vLLM)."


@dataclass
class Server:
    provider: str
    base_url: str
    models: list[tuple[str, bool]]  # (model id, whether it thinks)


@dataclass
class Listing:
    providers: list[tuple[str, str, str]]  # (id, where a call goes, its API key's state)
    servers: list[Server] = field(default_factory=list)
    lines: list[tuple[str, str]] = field(default_factory=list)  # (label, text): demo, default

    def __str__(self) -> str:
        out = [TITLE + ":"]
        out += columns([("provider", "address", "API key"), *self.providers], indent=2)
        out.append("")
        out += [NO_SERVER] if not self.servers else []
        for server in self.servers:
            out.append(f"{server.provider} at {server.base_url}:")
            out += columns([(m, "thinks" if t else "") for m, t in server.models], indent=2)
        for label, text in self.lines:
            out += textwrap.wrap(f"{label}: {text}", WIDTH, subsequent_indent="  ", **_WHOLE)
        return "\n".join(out)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        e = html.escape
        head = "".join(
            f'<th style="text-align:left">{e(t)}</th>' for t in ("provider", "address", "API key")
        )
        out = [f'<div class="reasoning-nb-list"><div style="font-weight:bold">{e(TITLE)}</div>']
        out.append(f'<table style="margin:0.3em 0"><thead><tr>{head}</tr></thead><tbody>')
        for pid, where, key in self.providers:
            out.append(f"<tr>{td(pid)}{td(where, wraps=True)}{td(key, wraps=True)}</tr>")
        out.append("</tbody></table>")
        out += [f"<div>{e(NO_SERVER)}</div>"] if not self.servers else []
        for server in self.servers:
            out.append(f"<div>{e(server.provider)} at <code>{e(server.base_url)}</code>:</div>")
            out.append('<table style="margin:0.3em 0"><tbody>')
            for model, thinks in server.models:
                out.append(f"<tr>{td(model)}{td('thinks' if thinks else '')}</tr>")
            out.append("</tbody></table>")
        out += [f"<div><b>{e(label)}:</b> {_words(text)}</div>" for label, text in self.lines]
        out.append("</div>")
        return "".join(out)


_WHOLE = {"break_long_words": False, "break_on_hyphens": False}
"""Wrap between words only: an address, a model id or a command stays whole."""


def _words(text: str) -> str:
    """``text`` escaped, each word with a hyphen kept whole (a browser may break a line after
    a hyphen: ``llama-`` / ``server``)."""
    return " ".join(
        f'<span style="white-space:nowrap">{html.escape(w)}</span>' if "-" in w else html.escape(w)
        for w in text.split()
    )


def columns(rows: list[tuple[str, ...]], indent: int = 0) -> list[str]:
    """Rows in aligned columns; the last column wraps on words under itself past ``WIDTH``."""
    if not rows:
        return []
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]) - 1)]
    out = []
    for row in rows:
        lead = " " * indent + "".join(c.ljust(w + 2) for c, w in zip(row, widths, strict=False))
        room = max(WIDTH - len(lead), 24)
        last = textwrap.wrap(row[-1], room, **_WHOLE) or [""]
        out.append((lead + last[0]).rstrip())
        out += [" " * len(lead) + more for more in last[1:]]
    return out


async def listing() -> Listing:
    providers = []
    for info in PROVIDERS.values():
        key = ""
        if info.key_envs:
            have = any(os.environ.get(k) for k in info.key_envs)
            key = f"{' or '.join(info.key_envs)}: {'set' if have else 'not set'}"
        providers.append((info.id, _address(info), key))
    found = await local_servers()
    servers = [
        Server(s.provider, s.base_url, [(f"{s.provider}:{m}", m in s.thinking) for m in s.models])
        for s in found
    ]
    for server in servers:
        server.models = server.models or [("(no models)", False)]
    lines = [("Embedded demo (local:smollm2)", await embedded_text())]
    try:
        model, why = await resolve_default(found)
        lines.append(("Default model", f"{model} ({why})"))
    except ReasoningNBError as exc:
        lines.append(("Default model", f"none. {exc}"))
    lines.append(("Model facts", f"efforts and budgets from models.dev as of {snapshot_as_of()}"))
    return Listing(providers, servers, lines)


async def list_text() -> str:
    """The listing as text (the CLI's and a terminal's)."""
    return str(await listing())


def _address(info: Profile) -> str:
    """Where a call with no base_url goes: the address a run would use (OLLAMA_HOST read as a
    run reads it), or why there is none."""
    if not info.base_url:
        started = protocol_module(info.protocol).SERVER is not None
        return "started on demand" if started else "base_url required"
    try:
        return base_url_for(info)
    except ReasoningNBError as exc:
        return f"unusable: {exc}"


async def embedded_text() -> str:
    if not embedded_installed():
        return f"not installed (`{INSTALL_HINT}`)"
    try:
        return f"runs {await anyio.to_thread.run_sync(local.describe)}"
    except ReasoningNBError as exc:
        return f"cannot start. {exc}"
