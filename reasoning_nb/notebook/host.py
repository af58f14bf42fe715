"""The private parts of IPython, ipykernel and ipywidgets that the live view relies on, each
behind a plain function: the one place to look when one of them changes.

Each names the version it was checked on (``tests/test_host.py`` tests each one by itself):

- ipykernel 7.4: ``Kernel._publish_status`` and ``Kernel.get_parent`` (:func:`follow_status`,
  :func:`executing_cell_id`), ``Kernel.saved_sigint_handler`` (:func:`on_idle_sigint`).
- IPython 9.18: the call its cell-magic transformer writes (:func:`await_cell_magic`).
- ipywidgets 8.1: ``Widget._states_to_send`` (:func:`sent_keys`) and
  ``Widget._repr_mimebundle_`` (:func:`widget_only`).

More live where their layer is. In the page (JupyterLab 4.6, Notebook 7.6, ipywidgets 8.1): the
notebook's ``sharedModel`` (``notebookOf`` in ``static/pin.js``); the widget manager's
``context.sessionContext`` signals and its ``disconnect``, and the notebook model's ``toJSON``,
which a save calls (``static/session.js``). And the parent-death signal of the demo server (Linux
``prctl``: ``providers.local``).
"""

from __future__ import annotations

import contextlib
import re
import signal
from collections.abc import Callable
from typing import Any

from ..core.schema import WIDGET_VIEW
from ..views.cell_runs import first_line

Publish = Callable[[str], None]
"""Publish a kernel status (``busy``, ``idle``) about the request being handled."""


def follow_status(shell: Any, follow: Callable[[str, dict, Publish], object]) -> Publish | None:
    """After each status the kernel publishes, call ``follow(status, header, again)`` (the
    request's header; ``again`` publishes one more status about it). Returns how to publish a
    shell status, or None (no kernel, or a second call)."""
    kernel = getattr(shell, "kernel", None)
    publish = getattr(kernel, "_publish_status", None)
    if publish is None or getattr(publish, "_reasoning_nb", False):
        return None

    def publish_status(status: str, channel: str, parent: dict | None = None) -> None:
        publish(status, channel, parent)
        header = (parent or kernel.get_parent(channel) or {}).get("header", {})
        follow(status, header, lambda again: publish(again, channel, parent))

    publish_status._reasoning_nb = True  # type: ignore[attr-defined]
    kernel._publish_status = publish_status
    return lambda status: publish(status, "shell")


def on_idle_sigint(shell: Any, handler: Callable[[], object]) -> bool:
    """Call ``handler`` on a SIGINT while the kernel is idle (ipykernel ignores it then).
    False where there is no kernel (a terminal: SIGINT raises KeyboardInterrupt as ever)."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return False
    # ipykernel sets Python's default handler around each message it handles and puts back
    # what it saved before; during a message (this one, %load_ext) the idle handler is the
    # saved one.
    current = signal.getsignal(signal.SIGINT)
    if hasattr(kernel, "saved_sigint_handler") and current is signal.default_int_handler:
        kernel.saved_sigint_handler = _chain(handler, kernel.saved_sigint_handler)
    else:
        with contextlib.suppress(ValueError):  # not the main thread: the cell-end hook works
            signal.signal(signal.SIGINT, _chain(handler, current))
    return True


def _chain(handler: Callable[[], object], previous: Any) -> Callable[[int, Any], None]:
    def on_sigint(signum: int, frame: Any) -> None:
        handler()
        if callable(previous):
            previous(signum, frame)

    return on_sigint


def await_cell_magic(lines: list[str], magic: str, entry: str) -> list[str]:
    """IPython's transformed cell lines, its call of the cell magic ``magic`` made ``await
    entry(line, cell)`` (a coroutine function in the user namespace)."""
    call = re.compile(rf"^(\s*)get_ipython\(\)\.run_cell_magic\({re.escape(repr(magic))}, ")
    if lines and call.match(lines[0]):
        return [call.sub(rf"\1await {entry}(", lines[0], count=1), *lines[1:]]
    return lines


def expand_magic_line(shell, line: str) -> str:
    """``line`` with IPython's ``$name`` and ``{expression}`` expanded in the user's namespace,
    as ``run_cell_magic`` expands it (the awaited call of ``await_cell_magic`` skips that step).
    Like IPython, a line that does not expand is left as it is. IPython 8-9: ``DollarFormatter``.
    """
    from IPython.utils.text import DollarFormatter

    try:
        return DollarFormatter().vformat(line, args=[], kwargs=dict(shell.user_ns))
    except Exception:
        return line


def _request(part: str, key: str) -> str:
    """A text field of the request the kernel is handling now, or "" (no kernel)."""
    try:
        from IPython import get_ipython

        parent = get_ipython().kernel.get_parent()
    except Exception:
        return ""
    section = parent.get(part) if isinstance(parent, dict) else None
    value = section.get(key) if isinstance(section, dict) else None
    return value if isinstance(value, str) else ""


def executing_cell_id() -> str:
    """The id of the notebook cell being run (JupyterLab sends it with the request), or ""."""
    return _request("metadata", "cellId")


def executing_cell_line() -> str:
    """The ``%%think`` line of the cell being run, as the front end sent it, or ""."""
    return first_line(_request("content", "code"))


def sent_keys(widget: Any, traits: dict[str, Any]) -> list[str]:
    """The state keys the update of ``widget`` will send, for ``traits`` set inside its
    ``hold_sync()`` (call it there: a Dropdown's ``value`` travels as ``index``)."""
    return [k for k in getattr(widget, "_states_to_send", traits) if k in widget.keys]


def widget_only(widget: Any) -> dict[str, Any]:
    """A display bundle of ``widget`` with no fallback text of its own (``raw=True``)."""
    return {WIDGET_VIEW: widget._repr_mimebundle_()[WIDGET_VIEW], "text/plain": ""}


__all__ = [
    "WIDGET_VIEW",
    "await_cell_magic",
    "executing_cell_id",
    "executing_cell_line",
    "follow_status",
    "on_idle_sigint",
    "sent_keys",
    "widget_only",
]
