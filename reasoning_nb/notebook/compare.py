"""``%%think --compare low,high``: several variants of one prompt, run concurrently, side by side.

Each item of ``--compare`` is a preset name (same model, that preset) or a model id (that model,
the cell's preset). The variants run at once (at most ``MAX_CONCURRENT``), each folding its own
Trace. The widget shows one column per variant (a :class:`~.run_view.RunView` each, flushed by a
single ticker under one message budget), then a summary table and a diff of the answers. The
static output carries the first trace under ``reasoning_nb`` (exactly one output carries it) and
every trace under ``reasoning_nb_compare``.

Model text reaches HTML only escaped or through ``render.markdown_html`` (raw HTML off).
"""

from __future__ import annotations

import difflib
import html
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from IPython.display import display

from .. import render
from ..analytics import cell_text, row
from ..core.events import Done, Event
from ..core.history import Conversation
from ..core.presets import PRESETS
from ..core.trace import Trace
from ..errors import ConfigError, ReasoningNBError
from ..providers import catalog
from ..run import Run
from .runners import LIVE_CLASS, METADATA_KEY, PAIRING_STYLE, STATIC_CLASS, WIDGET_VIEW, error_line

if TYPE_CHECKING:
    from .magic import ThinkMagics

COMPARE_KEY = f"{METADATA_KEY}_compare"
MAX_CONCURRENT = 4
MAX_VARIANTS = 8
COLUMNS = (
    ("variant", "variant"),
    ("reasoning_tokens", "reasoning tokens"),
    ("reasoning_ms", "reasoning time"),
    ("total_ms", "total time"),
    ("tokens_per_s", "tok/s"),
    ("status", "status"),
)
_TABLE = "border-collapse:collapse;font-size:0.9em;margin:0.5em 0"
_CELL = "border:1px solid #d0d7de;padding:2px 8px;text-align:left"
_DIFF = "font-size:0.85em;background:#f6f8fa;padding:0.5em 0.8em;overflow-x:auto"


_ENDED = ("complete", "truncated", "error", "cancelled")


class Variant:
    """One column: its label and the run's options."""

    def __init__(self, label: str, options: dict[str, Any]):
        self.label, self.options = label, options


def parse_variants(spec: str, options: dict[str, Any], prompt: str) -> list[Variant]:
    """``low,high`` or ``ollama:qwen3,ollama:deepseek-r1`` -> variants; ConfigError when an item
    is neither a preset nor a valid model id, or the run's options are invalid."""
    items = [s.strip() for s in spec.split(",")]
    if any(not s for s in items) or len(items) < 2:
        raise ConfigError(
            f"--compare takes two or more comma-separated presets or model ids, not {spec!r}."
        )
    if len(items) > MAX_VARIANTS:
        raise ConfigError(f"--compare takes at most {MAX_VARIANTS} variants, not {len(items)}.")
    if len(set(items)) != len(items):
        raise ConfigError(f"--compare lists a variant twice: {spec!r}.")
    variants = []
    for item in items:
        if item in PRESETS:
            opts = {**options, "preset": item}
            label = f"{item} · {opts.get('model') or '(default model)'}"
        else:
            if ":" not in item:
                raise ConfigError(
                    f"--compare: {item!r} is neither a preset ({', '.join(PRESETS)}) "
                    "nor a model id (PROVIDER:MODEL)."
                )
            catalog.parse_model(item)
            opts = {**options, "model": item}
            label = f"{opts.get('preset') or 'auto'} · {item}"
        Run(prompt, **opts)  # validate now: one clear line instead of a widget
        variants.append(Variant(label, opts))
    return variants


def make_runs(
    variants: list[Variant],
    prompt: str,
    history_for: Callable[[str | None], list[dict[str, Any]]],
) -> list[Run]:
    return [Run(prompt, history=history_for(v.options.get("model")), **v.options) for v in variants]


async def run_variants(
    runs: list[Run],
    *,
    on_start: Callable[[int, Trace], None] | None = None,
    on_event: Callable[[int, Event], None] | None = None,
    on_done: Callable[[int, Trace], None] | None = None,
    debug: bool = False,
    limit: int = MAX_CONCURRENT,
) -> list[Trace]:
    """Run them all (at most ``limit`` at once); the traces in order, each finished (complete,
    error or cancelled) also when the group is cancelled."""
    limiter = anyio.CapacityLimiter(limit)

    async def one(i: int) -> None:
        run = runs[i]
        error: BaseException | None = None
        try:
            async with limiter:
                if on_start is not None:
                    on_start(i, run.trace)
                try:
                    async for event in run.events():
                        if on_event is not None and not isinstance(event, Done):
                            on_event(i, event)
                except ReasoningNBError as exc:
                    error = exc
        finally:
            trace = run.trace
            if trace.status not in _ENDED:
                trace.finish("cancelled")
            if error is not None and (not trace.error or debug):
                trace.error = error_line(error, debug)
            if on_done is not None:
                on_done(i, trace)

    async with anyio.create_task_group() as tg:
        for i in range(len(runs)):
            tg.start_soon(one, i)
    return [r.trace for r in runs]


# -- static views -----------------------------------------------------------------------------


def table_rows(labels: list[str], traces: list[Trace]) -> list[list[str]]:
    out = []
    for label, trace in zip(labels, traces, strict=True):
        r = row(trace)
        cells = [label]
        for key, _ in COLUMNS[1:]:
            cells.append(cell_text(r, key, full=True) if key != "status" else trace.status)
        out.append(cells)
    return out


def table_html(labels: list[str], traces: list[Trace]) -> str:
    head = "".join(f'<th style="{_CELL}">{html.escape(h)}</th>' for _, h in COLUMNS)
    body = "".join(
        "<tr>" + "".join(f'<td style="{_CELL}">{html.escape(c)}</td>' for c in cells) + "</tr>"
        for cells in table_rows(labels, traces)
    )
    return (
        f'<table class="reasoning-nb-compare-table" style="{_TABLE}">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def _md_cell(text: str) -> str:
    return html.escape(text).replace("|", "\\|").replace("\n", " ")


def table_markdown(labels: list[str], traces: list[Trace]) -> str:
    lines = ["| " + " | ".join(h for _, h in COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for cells in table_rows(labels, traces):
        lines.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def table_plain(labels: list[str], traces: list[Trace]) -> str:
    rows = [[h for _, h in COLUMNS], *table_rows(labels, traces)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def answer_diff(labels: list[str], traces: list[Trace]) -> str:
    """Unified diffs of the answers: the first variant against each other one (plain text)."""
    if len(traces) < 2:
        return ""
    first = traces[0].answer.splitlines()
    parts = []
    for label, trace in zip(labels[1:], traces[1:], strict=True):
        lines = difflib.unified_diff(
            first, trace.answer.splitlines(), labels[0], label, lineterm="", n=2
        )
        parts.append("\n".join(lines) or f"(the answers of {labels[0]} and {label} are the same)")
    return "\n\n".join(parts)


def diff_html(labels: list[str], traces: list[Trace]) -> str:
    diff = answer_diff(labels, traces)
    if not diff:
        return ""
    return (
        '<div class="reasoning-nb-compare-diff"><b>Answer diff</b>'
        f'<pre style="{_DIFF}">{html.escape(diff)}</pre></div>'
    )


def bundle(labels: list[str], traces: list[Trace]) -> dict[str, str]:
    """The static MIME bundle: summary table, each variant's section, the diff."""
    html_parts = [table_html(labels, traces)]
    md_parts = [table_markdown(labels, traces)]
    plain_parts = [table_plain(labels, traces)]
    for label, trace in zip(labels, traces, strict=True):
        one = render.bundle(trace)
        html_parts.append(f"<h4>{html.escape(label)}</h4>{one['text/html']}")
        md_parts.append(f"#### {_md_cell(label)}\n\n{one['text/markdown']}")
        plain_parts.append(f"== {label} ==\n{one['text/plain']}")
    diff = answer_diff(labels, traces)
    if diff:
        html_parts.append(diff_html(labels, traces))
        fence = "~~~~" if "~~~" not in diff else "`" * (max(4, diff.count("`") + 1))
        md_parts.append(f"**Answer diff**\n\n{fence}diff\n{diff}\n{fence}")
        plain_parts.append(f"== answer diff ==\n{diff}")
    return {
        "text/html": f'<div class="reasoning-nb-compare">{"".join(html_parts)}</div>',
        "text/markdown": "\n\n".join(md_parts),
        "text/plain": "\n\n".join(plain_parts),
    }


def save(labels: list[str], traces: list[Trace], *, static_class: bool) -> dict[str, Any]:
    data = bundle(labels, traces)
    if static_class:
        data["text/html"] = f'<div class="{STATIC_CLASS}">{PAIRING_STYLE}{data["text/html"]}</div>'
    metadata = {METADATA_KEY: traces[0].to_dict(), COMPARE_KEY: [t.to_dict() for t in traces]}
    display(data, raw=True, metadata=metadata)
    return metadata


def _ended(trace: Trace) -> Trace:
    return trace if trace.status in _ENDED else trace.finish("cancelled")


def _remember(magics: ThinkMagics, traces: list[Trace], chat: Conversation | None) -> None:
    for i, trace in enumerate(traces):
        magics.traces.append(trace)
        if i == 0:
            magics.last = trace
    if magics.shell is not None:
        magics.shell.user_ns["_think"] = traces[0]
        magics.shell.user_ns["_compare"] = traces
    if chat is not None:
        chat.add(traces[0])


# -- runners ----------------------------------------------------------------------------------


class CompareTextRunner:
    """No widget: run concurrently, print each variant's result as it finishes."""

    def __init__(self, magics: ThinkMagics, *, hide: bool, debug: bool):
        self.magics, self.hide, self.debug = magics, hide, debug

    async def run(self, prompt: str, variants: list[Variant], chat: Conversation | None):
        labels = [v.label for v in variants]
        print(f"comparing {len(variants)} variants: {' | '.join(labels)}")

        def done(i: int, trace: Trace) -> None:
            print(f"\n== {labels[i]} ==")
            if trace.reasoning and not self.hide:
                print(f"[{render.summary(trace)}]\n{trace.reasoning}\n[/reasoning]")
            if trace.answer:
                print(trace.answer)
            print(f"({render.footer(trace)})")
            if trace.error:
                print(f"error ({labels[i]}): {trace.error}", file=sys.stderr)

        runs = make_runs(variants, prompt, lambda model: self.magics.history_for(chat, model))
        try:
            await run_variants(runs, on_done=done, debug=self.debug)
        finally:
            traces = [_ended(r.trace) for r in runs]
            _remember(self.magics, traces, chat)
            save(labels, traces, static_class=False)
        return None


class CompareWidget:
    """Columns side by side (one RunView each), a summary table and the answers' diff."""

    def __init__(
        self,
        labels: list[str],
        *,
        hide_reasoning: bool,
        fold_on_answer: bool,
        max_rate: float,
        clock: Callable[[], float] = time.monotonic,
    ):
        import ipywidgets as W

        from .throttle import Meter

        self.labels, self.hide, self.fold = labels, hide_reasoning, fold_on_answer
        self.max_rate, self.clock = max(1.0, max_rate), clock
        self.meter = Meter()
        self.views: list[Any] = [None] * len(labels)
        self.statuses = [W.HTML(value="waiting…") for _ in labels]
        self.slots = [W.VBox() for _ in labels]
        self.columns = [
            W.VBox(
                [W.HTML(f"<b>{html.escape(label)}</b>"), status, slot],
                layout=W.Layout(flex="1 1 0", min_width="0", padding="0 0.5em"),
            )
            for label, status, slot in zip(labels, self.statuses, self.slots, strict=True)
        ]
        self.summary = W.HTML()
        self.root = W.VBox(
            [W.HBox(self.columns, layout=W.Layout(width="100%")), self.summary],
            _dom_classes=("reasoning-nb-compare-live",),
        )
        # 80% of the rate, a fifth of it as burst: a window of one second stays within the rate,
        # with room for the unpaced messages (a column's start and final render).
        self._refill_rate, self._burst = 0.8 * self.max_rate, max(3.0, self.max_rate / 5)
        self._budget = self._burst  # messages we may send now (a token bucket; below zero
        # after unpaced messages such as a column's start and final render, which it repays)
        self._at = clock()
        self._next = 0  # round-robin
        self._status_at = [float("-inf")] * len(labels)

    def _refill(self, now: float) -> None:
        self._budget = min(self._burst, self._budget + (now - self._at) * self._refill_rate)
        self._at = now

    def _charge(self, since: int) -> None:
        """Unpaced messages (sent since the meter read ``since``) count against the budget."""
        self._refill(self.clock())
        self._budget -= self.meter.msgs - since

    def start(self, i: int, trace: Trace) -> None:
        from .run_view import RunView

        now, mark = self.clock(), self.meter.msgs
        view = RunView(trace, i + 1, now, hide_reasoning=self.hide, meter=self.meter)
        self.views[i] = view
        self.meter.set(self.slots[i], children=(view.root,))
        self.meter.set(self.statuses[i], value=view.status_html(now))
        self._charge(mark)

    def on_event(self, i: int, event: Event) -> None:
        view = self.views[i]
        view.apply(event, self.clock(), fold=self.fold)

    def tick(self) -> int:
        """One flush round under the shared budget: columns in turn, text then status line."""
        now = self.clock()
        self._refill(now)
        sent = 0
        n = len(self.views)
        for k in range(n):
            i = (self._next + k) % n
            view = self.views[i]
            if view is None or view.finished:
                continue
            cost = view.max_cost(merge=False)
            status_due = now >= self._status_at[i] + 0.5
            need = cost + status_due
            if not need or self._budget < min(need, self._burst):
                continue  # (a flush dearer than the burst goes out once the bucket is full)
            got = view.flush(merge=False) if cost else 0
            if status_due:
                got += self.meter.set(self.statuses[i], value=view.status_html(now))
                self._status_at[i] = now
            self._budget -= got
            sent += got
            self._next = (i + 1) % n
        return sent

    def finish(self, i: int, trace: Trace) -> None:
        view = self.views[i]
        now, mark = self.clock(), self.meter.msgs
        if view is None:  # cancelled before it started
            self.start(i, trace)
            view = self.views[i]
        view.end(trace, now)
        view.phase = {"complete": "done", "truncated": "done", "cancelled": "stopped"}.get(
            trace.status, "error"
        )
        view.detail = trace.error or ""
        view.warnings += [w for w in trace.warnings if w not in view.warnings]
        view.finalize(fold=self.fold)
        self.meter.set(self.statuses[i], value=view.status_html(now))
        self._charge(mark)

    def show_summary(self, traces: list[Trace]) -> None:
        self.meter.set(
            self.summary, value=table_html(self.labels, traces) + diff_html(self.labels, traces)
        )


class CompareWidgetRunner:
    """The live columns; then the static output with every trace."""

    def __init__(self, magics: ThinkMagics, *, hide: bool, debug: bool):
        self.magics, self.hide, self.debug = magics, hide, debug

    async def run(self, prompt: str, variants: list[Variant], chat: Conversation | None):
        labels = [v.label for v in variants]
        view = CompareWidget(
            labels,
            hide_reasoning=self.hide,
            fold_on_answer=self.magics.fold_reasoning,
            max_rate=self.magics.max_updates_per_second,
        )
        self.view = view
        view.root.add_class(LIVE_CLASS)
        live = {WIDGET_VIEW: view.root._repr_mimebundle_()[WIDGET_VIEW], "text/plain": ""}
        display(live, raw=True)
        interval = 1.0 / view.max_rate
        runs = make_runs(variants, prompt, lambda model: self.magics.history_for(chat, model))
        try:
            async with anyio.create_task_group() as tg:

                async def ticker() -> None:
                    while True:
                        await anyio.sleep(interval)
                        view.tick()

                tg.start_soon(ticker)
                try:
                    await run_variants(
                        runs,
                        on_start=view.start,
                        on_event=view.on_event,
                        on_done=view.finish,
                        debug=self.debug,
                    )
                finally:
                    tg.cancel_scope.cancel()
        finally:
            traces = [_ended(r.trace) for r in runs]
            view.show_summary(traces)
            _remember(self.magics, traces, chat)
            save(labels, traces, static_class=True)
        return None
