"""``ReasoningPreprocessor``: rebuild every ``%%think`` output from its saved trace.

An output is *traced* when its metadata holds one of the package's keys (``core.schema``): its
outputs are recognised by them, not by their text. Each is rebuilt from its trace, read through
:func:`core.trace.read_trace`, in the chosen ``mode``. The saved HTML is never reused: it came
with the notebook, and the notebook may come from anyone. An unreadable trace keeps only its
``text/plain`` (exporters escape it); with ``strip`` even that goes, since reasoning cannot be
told apart from the answer in it. Static targets drop the widget view: it is dead without a
kernel and needs a CDN script to draw.

``strip`` empties the reasoning from traces, pinned cells and what a ``%%think`` cell printed
(its stdout streams the reasoning; an interrupt's traceback may hold part of it). Reasoning
printed elsewhere is found by its text, best effort (``redaction``); a traceback that holds any
of it is replaced whole.
"""

from __future__ import annotations

import re
from typing import Any

from nbconvert.preprocessors import Preprocessor
from nbformat import from_dict
from traitlets import Enum, Int

from ..core.schema import (
    COMPARE_KEY,
    DISPLAY_KEY,
    HISTORY_KEY,
    METADATA_KEY,
    PIN_KEY,
    VARIANTS_KEY,
    saved_variants,
    stripped,
    variants_key,
)
from ..core.trace import Trace, read_trace
from ..views import compare, render
from ..views.cell_runs import CellRuns, first_line
from . import widgets
from .redaction import REMOVED, Redactor

TARGETS = ("auto", "html", "markdown", "notebook")
TRACEBACK_REMOVED = "[traceback removed: it may hold reasoning]"
_RUN_KEYS = (METADATA_KEY, HISTORY_KEY, VARIANTS_KEY, COMPARE_KEY)  # a %%think run's output
_TRACE_KEYS = (*_RUN_KEYS, DISPLAY_KEY)
_THINK_CELL = re.compile(r"\s*%%think\b")
_MARKER_STREAM = {"output_type": "stream", "name": "stdout", "text": REMOVED + "\n"}
_DISPLAY = ("display_data", "execute_result")
_TARGET_BY_MIMETYPE = {"text/markdown": "markdown", "application/json": "notebook"}


class ReasoningPreprocessor(Preprocessor):
    """Show, inline or strip the reasoning of ``%%think`` outputs, from their saved traces."""

    mode = Enum(
        render.MODES,
        default_value="collapsible",
        help=(
            "collapsible: reasoning in a closed <details> with a one-line summary; "
            "inline: reasoning always shown in a delimited block (print, PDF, LaTeX); "
            "strip: no reasoning anywhere (outputs, output metadata, widget state)."
        ),
    ).tag(config=True)
    target = Enum(
        TARGETS,
        default_value="auto",
        help=(
            "What the output becomes: html and markdown are static (widget views dropped; "
            "markdown drops text/html so text/markdown is used); notebook keeps widgets "
            "unless stripping. auto: from the exporter's output mimetype."
        ),
    ).tag(config=True)
    max_warnings_per_output = Int(
        8, help="Problems reported per output before the rest are only counted."
    ).tag(config=True)

    def preprocess(self, nb, resources):
        self._target = self._resolve_target()
        self._warnings: list[str] = []
        self._redact = Redactor(_saved_reasoning(nb)) if self.mode == "strip" else None
        for index, cell in enumerate(nb.get("cells", [])):
            nb.cells[index], resources = self.preprocess_cell(cell, resources, index)
        if self._target != "notebook" or self._redact is not None:
            scrub = self._redact.scrub if self._redact else None
            widgets.prune(nb, scrub=scrub, warn=self._warn)
        if resources is not None:
            resources.setdefault("reasoning_nb", {})["warnings"] = list(self._warnings)
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        if cell.get("cell_type") != "code":
            if self._redact is not None:
                self._strip_text_cell(cell)
            return cell, resources
        outputs = cell.get("outputs")
        if not isinstance(outputs, list):
            return cell, resources
        kept = []
        # A %%think cell's live widget is its own output beside the traced one: dead in a static
        # export, and reasoning-bearing state when stripping.
        drop_twins = (self._target != "notebook" or self.mode == "strip") and any(
            _traced_meta(o, _RUN_KEYS) for o in outputs
        )
        source = cell.get("source")
        think = self._redact is not None and _is_think_cell(source)
        line = first_line(source) if isinstance(source, str) else ""
        for n, output in enumerate(outputs):
            where = f"cell {index + 1}, output {n + 1}"
            meta = _traced_meta(output)
            if drop_twins and widgets.is_view_only(output):
                continue
            if meta is not None:
                kept.append(self._traced(output, meta, where, line))
            elif self._redact is not None and isinstance(output, dict):
                kept.append(self._strip_untraced(output, think))
            else:
                kept.append(output)
        cell.outputs = _one_marker_stream(kept) if think else kept
        return cell, resources

    # -- strip: what the package wrote outside a traced output --------------------------------

    def _strip_untraced(self, output: dict, think: bool) -> dict:
        """``think``: the output of a ``%%think`` cell, whose text is the package's own."""
        kind = output.get("output_type")
        if kind == "error" and (think or self._redact.found(_error_text(output))):
            return _removed_traceback(output)
        if kind == "stream" and think and output.get("name") == "stdout":
            return from_dict(dict(_MARKER_STREAM))
        return self._redact.scrub(output)

    def _strip_text_cell(self, cell) -> None:
        """A pinned cell of reasoning keeps its head line and loses its quote; other markdown
        and raw cells lose the reasoning text found in them (pasted from a pin's clipboard
        copy, say)."""
        meta = cell.get("metadata")
        pinned = isinstance(meta, dict) and PIN_KEY in meta
        origin = meta[PIN_KEY] if pinned and isinstance(meta[PIN_KEY], dict) else {}
        if not pinned or origin.get("part") == "answer":  # (a pinned answer is no reasoning)
            cell["source"] = self._redact.scrub(cell.get("source", ""))
            return
        model, preset = origin.get("model"), origin.get("preset")
        model = model if isinstance(model, str) else ""
        preset = preset if isinstance(preset, str) else "unknown"
        cell["source"] = f"{render.pin_head(model, preset)}\n>\n> {REMOVED}"
        cell.pop("attachments", None)

    # -- one traced output --------------------------------------------------------------------

    def _traced(self, output: dict, meta: dict, where: str, line: str = ""):
        """An output rebuilt from its checked trace, with its earlier runs and the cell ``line``."""
        strip = self.mode == "strip"
        if output.get("output_type") not in _DISPLAY:
            kind = ascii(output.get("output_type"))[:40]
            self._warn(f"{where}: a {kind} output carries a trace; ignored")
            if strip:  # marked as the package's: stripped as a %%think cell's output is
                output = self._strip_untraced(output, think=True)
                if "metadata" in output:
                    output["metadata"] = {}
            return output
        key = next((k for k in (METADATA_KEY, DISPLAY_KEY) if k in meta), None)
        if key is not None:
            trace, problems = read_trace(meta[key])
        else:
            other = next(k for k in _RUN_KEYS if k in meta)
            trace, problems = None, [f"it has {other} but no {METADATA_KEY}"]
        saved = saved_variants(meta)
        variants = self._variants(saved, meta, where, problems) if saved is not None else None
        readable = trace is not None or variants is not None
        history = []
        if readable and key == METADATA_KEY:
            history = self._history(meta.get(HISTORY_KEY), where, problems)
        self._report(where, problems)  # once for the output, its variants and history: bounded
        data = output.get("data") if isinstance(output.get("data"), dict) else {}
        keep_view = self._target == "notebook" and not strip
        model_id = widgets.view_id(data)

        if not readable:
            new_data, new_meta = self._unreadable(data, meta, where)
        else:
            if strip:
                for shown in [trace, *(variants or []), *history]:
                    if shown is not None:
                        shown.reasoning = ""
            if variants is not None:
                new_data = compare.bundle(variants, self.mode)
            else:
                runs = CellRuns(line, tuple(history))
                new_data = render.bundle(trace, self.mode, runs=runs)
            if self._target == "markdown":
                del new_data["text/html"]  # so text/markdown wins for these outputs
            if self._target != "notebook" or strip:
                # Static targets do not show it; kept validated for custom templates.
                new_meta = {}
                if trace is not None:
                    new_meta[key] = _saved(trace, strip)
                if variants is not None:
                    new_meta[COMPARE_KEY] = [_saved(t, strip) for t in variants]
                if strip and self._target == "notebook" and history:
                    new_meta[HISTORY_KEY] = [stripped(t) for t in history]
            else:
                new_meta = meta  # a notebook copy keeps what it was given
        if model_id and keep_view:
            new_data = {widgets.WIDGET_VIEW: data[widgets.WIDGET_VIEW], **new_data}
        output["data"] = from_dict(new_data)
        output["metadata"] = from_dict(new_meta)
        return output

    def _unreadable(self, data: dict, meta: dict, where: str) -> tuple[dict, dict]:
        if self.mode == "strip":
            self._warn(
                f"{where}: output removed (its trace is unreadable, so reasoning and "
                "answer cannot be told apart)"
            )
            return {"text/plain": "[output removed: its saved reasoning trace is unreadable]"}, {}
        self._warn(f"{where}: shown as plain text only (its trace is unreadable)")
        plain = data.get("text/plain")
        if isinstance(plain, list) and all(isinstance(p, str) for p in plain):
            plain = "".join(plain)
        if not isinstance(plain, str):
            plain = "[output not shown: its saved reasoning trace is unreadable]"
        return {"text/plain": plain}, (meta if self._target == "notebook" else {})

    def _variants(
        self, saved: Any, meta: dict, where: str, problems: list[str]
    ) -> list[Trace] | None:
        """The readable variants; None (shown as its single trace) when there are none."""
        name = variants_key(meta)
        if not isinstance(saved, list):
            kind = type(saved).__name__
            self._warn(f"{where}: {name} is {kind}, not a list; shown as a single trace")
            return None
        traces = _readable(saved, "variant", problems)
        if not traces:
            self._warn(f"{where}: no variant in {name} is readable; shown as a single trace")
            return None
        return traces

    def _history(self, history: Any, where: str, problems: list[str]) -> list[Trace]:
        if history is None:
            return []
        if not isinstance(history, list):
            self._warn(f"{where}: {HISTORY_KEY} is not a list; dropped")
            return []
        return _readable(history, "history", problems)

    # -- plumbing -----------------------------------------------------------------------------

    def _resolve_target(self) -> str:
        if self.target != "auto":
            return self.target
        mimetype = getattr(self.parent, "output_mimetype", "") or ""
        return _TARGET_BY_MIMETYPE.get(mimetype, "html")

    def _report(self, where: str, problems: list[str]) -> None:
        limit = self.max_warnings_per_output
        for problem in problems[:limit]:
            self._warn(f"{where}: {problem}")
        if len(problems) > limit:
            self._warn(f"{where}: ... and {len(problems) - limit} more problems")

    def _warn(self, message: str) -> None:
        self._warnings.append(message)
        self.log.warning("reasoning_nb: %s", message)


def _readable(saved: list[Any], name: str, problems: list[str]) -> list[Trace]:
    traces = []
    for i, item in enumerate(saved, 1):
        trace, found = read_trace(item)
        problems += [f"{name} {i}: {p}" for p in found]
        if trace is not None:
            traces.append(trace)
    return traces


def _saved_reasoning(nb) -> list[str]:
    """Every reasoning text the notebook's traces hold, read leniently (for redaction)."""
    found = []
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []) if isinstance(cell, dict) else []:
            meta = output.get("metadata") if isinstance(output, dict) else None
            if not isinstance(meta, dict):
                continue
            every = [meta.get(METADATA_KEY), meta.get(DISPLAY_KEY)]
            for key in (HISTORY_KEY, VARIANTS_KEY, COMPARE_KEY):
                more = meta.get(key)
                every += more if isinstance(more, list) else []
            for saved in every:
                if isinstance(saved, dict) and isinstance(saved.get("reasoning"), str):
                    found.append(saved["reasoning"])
    return found


def _saved(trace: Trace, strip: bool) -> dict[str, Any]:
    return stripped(trace) if strip else trace.to_dict()


def _traced_meta(output: Any, keys: tuple[str, ...] = _TRACE_KEYS) -> dict | None:
    meta = output.get("metadata") if isinstance(output, dict) else None
    if isinstance(meta, dict) and any(k in meta for k in keys):
        return meta
    return None


def _is_think_cell(source: Any) -> bool:
    """A ``%%think`` cell: its body is a prompt and all its output is the package's."""
    if isinstance(source, list):
        source = "".join(s for s in source if isinstance(s, str))
    return isinstance(source, str) and _THINK_CELL.match(source) is not None


def _error_text(output: dict) -> str:
    traceback = output.get("traceback")
    parts = [output.get("ename"), output.get("evalue")]
    parts += traceback if isinstance(traceback, list) else []
    return "\n".join(p for p in parts if isinstance(p, str))


def _removed_traceback(output: dict):
    ename = output.get("ename")
    ename = ename if isinstance(ename, str) and ename.isidentifier() and len(ename) <= 80 else ""
    ename = ename or "Error"
    line = f"{ename}: {TRACEBACK_REMOVED}"
    return from_dict(
        {"output_type": "error", "ename": ename, "evalue": TRACEBACK_REMOVED, "traceback": [line]}
    )


def _one_marker_stream(outputs: list) -> list:
    """A %%think cell's stdout, however many pieces it came in, reads the marker once."""
    kept, seen = [], False
    for output in outputs:
        if output == _MARKER_STREAM:
            if seen:
                continue
            seen = True
        kept.append(output)
    return kept
