"""The static views of a sweep: the summary per model x preset, the plot, the recommendation and
the No effect flags, as HTML, markdown and text, and the MIME bundle that shows them all.

The HTML uses only inline styles the notebook sanitizer keeps and the plot is an ``<img>`` (see
``plot``), so a saved sweep reads the same untrusted, after a reopen, and in an export. Model ids,
preset names and warnings come from a notebook or a server: every one is shortened and escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..core import cost
from ..core.text import clip, one_line
from ..views.markdown_safety import md_escape
from ..views.stats_table import markdown_lines, plain_lines, td
from ..views.theme import lab
from .analysis import (
    MARGIN,
    MEASURE_LABEL,
    Cell,
    Measure,
    NoEffect,
    Recommendation,
    measure_of,
    no_effect,
    recommend,
    summary,
)
from .plot import Engine, image_html, layout
from .plot import lines as plot_lines
from .rows import Row

HEAD = (
    ("model", "model", False),
    ("preset", "preset", False),
    ("runs", "runs", True),
    ("grade", "mean grade", True),
    ("reasoning", "reasoning tok", True),
    ("output", "output tok", True),
    ("cost", "cost", True),
    ("time", "time", True),
    ("effect", "no effect", False),
)
LEGEND = {
    "": "means over complete and truncated runs; runs: failed ones in brackets",
    "cost": "cost: the estimated total",
    "time": "time: request to the end",
    "effect": (
        "no effect: the provider got the same request (=) or the reasoning tokens are within "
        "noise (≈)"
    ),
}
SMALL = "font-size:0.85em"
NO_ROWS = "No sweep rows: the sweep asked nothing (see its progress: stopped, or no prompts)."


@dataclass(frozen=True)
class Report:
    """Everything the views show of one sweep, worked out once."""

    cells: list[Cell]
    flags: list[NoEffect]
    advice: list[Recommendation]
    margin: float
    measure: Measure

    @classmethod
    def of(cls, rows: Iterable[Row], margin: float = MARGIN, measure: str = "auto") -> Report:
        rows = list(rows)
        kind = measure_of(rows, measure)
        return cls(summary(rows), no_effect(rows), recommend(rows, margin, kind), margin, kind)


def table(report: Report) -> list[list[str]]:
    """The summary as text cells, the head row first (not escaped); a column no row fills
    (cost for local models, no effect when every preset did something) is left out."""
    flags = {(f.model, f.preset): f for f in report.flags}
    out = [[title for _, title, _ in HEAD]]
    for c in report.cells:
        flag = flags.get((c.model, c.preset))
        out.append(
            [
                clip(c.model, 40),
                clip(c.preset, 12),
                f"{c.runs}" + (f" ({c.failed})" if c.failed else ""),
                _grade(c),
                _count(c.reasoning_tokens),
                _count(c.output_tokens),
                cost.label({"usd": c.cost_usd}) if c.cost_usd is not None else "",
                "—" if c.total_s is None else f"{c.total_s:.1f} s",
                _flag(flag),
            ]
        )
    keep = [k for k, (key, _, _) in enumerate(HEAD) if key not in _empty(report)]
    return [[line[k] for k in keep] for line in out]


def columns(report: Report) -> list[tuple[str, str, bool]]:
    """The columns ``table`` shows: (key, title, a number)."""
    return [c for c in HEAD if c[0] not in _empty(report)]


def legend(report: Report) -> str:
    """What the marks and the shown columns mean."""
    shown = {key for key, _, _ in columns(report)} | {""}
    return "; ".join(text for key, text in LEGEND.items() if key in shown)


def _empty(report: Report) -> set[str]:
    empty = set()
    if all(c.cost_usd is None for c in report.cells):
        empty.add("cost")
    if not report.flags:
        empty.add("effect")
    return empty


def _grade(c: Cell) -> str:
    if c.grade is None:
        return "—"
    graded = c.runs - c.failed
    return f"{c.grade:.3g}" + (f" ({c.graded} graded)" if c.graded != graded else "")


def _count(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _flag(flag: NoEffect | None) -> str:
    if flag is None:
        return ""
    mark = "=" if flag.kind == "ignored" else "≈"
    return f"{mark} {clip(flag.like, 12)}" if flag.like else "ignored"


def flag_lines(report: Report) -> list[str]:
    """One sentence per preset that changed nothing, saying which kind."""
    kind = {"ignored": "the effort was ignored", "noise": "no measurable effect"}
    return [
        f"No effect: {clip(f.model, 40)} · {clip(f.preset, 12)} — {kind[f.kind]}: "
        f"{clip(f.reason, 300)}"
        for f in report.flags
    ]


def advice_lines(report: Report) -> list[str]:
    """The recommendations, or why there is none."""
    if report.advice:
        what = MEASURE_LABEL[report.measure]
        head = f"Recommended: the cheapest within {report.margin:g} of the best grade, by {what}"
        return [head, *(f"  {one_line(r.text())}" for r in report.advice)]
    if not any(c.grade is not None for c in report.cells):
        return [
            "No recommendation: no run has a grade. Sweep a prompt set with an expected column "
            "(a CSV or JSONL file, or a DataFrame), or pass grader= (answer, row) -> score."
        ]
    return ["No recommendation: fewer than two model x presets have grades on the same prompts."]


def text(
    rows: Iterable[Row], margin: float = MARGIN, measure: str = "auto", *, plot: bool = True
) -> str:
    """The summary, recommendation, No effect flags and (``plot``) the plot's points as text."""
    rows = list(rows)
    report = Report.of(rows, margin, measure)
    if not report.cells:
        return NO_ROWS
    right = tuple(r for _, _, r in columns(report))
    out = [*plain_lines(table(report), rule=True, right=right), legend(report), ""]
    out += [*advice_lines(report), *flag_lines(report)]
    if plot and (points := plot_lines(layout(rows, report.measure, margin))):
        out += ["", *points]
    return "\n".join(out)


def markdown(rows: Iterable[Row], margin: float = MARGIN, measure: str = "auto") -> str:
    """The same in markdown; the plot's points in a code block (a picture would be a data URL
    that a markdown file's renderer may drop)."""
    rows = list(rows)
    report = Report.of(rows, margin, measure)
    if not report.cells:
        return NO_ROWS
    right = tuple(r for _, _, r in columns(report))
    out = [*markdown_lines(table(report), right), "", f"*{md_escape(legend(report))}*", ""]
    out += [md_escape(line) + "  " for line in [*advice_lines(report), *flag_lines(report)]]
    if points := plot_lines(layout(rows, report.measure, margin)):
        fence = "````" if any("```" in line for line in points) else "```"
        out += ["", fence + "text", *points, fence]
    return "\n".join(out)


def html_view(
    rows: Iterable[Row], margin: float = MARGIN, measure: str = "auto", engine: Engine = "auto"
) -> str:
    """The summary table, the plot, the recommendation and the No effect flags as HTML."""
    rows = list(rows)
    report = Report.of(rows, margin, measure)
    e = html.escape
    if not report.cells:
        return f"<p>{e(NO_ROWS)}</p>"
    head = "".join(
        f'<th style="padding:1px 6px;text-align:{"right" if number else "left"}">{e(title)}</th>'
        for _, title, number in columns(report)
    )
    body = []
    for line in table(report)[1:]:
        cells = [
            td(value, number=number)
            for value, (_, _, number) in zip(line, columns(report), strict=True)
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    faint = f"{SMALL};color:{lab('content-font-color2')}"
    advice, *choices = advice_lines(report)
    out = [
        '<div class="reasoning-nb-sweep">',
        f'<table style="font-size:0.9em;margin:0.3em 0"><thead><tr>{head}</tr></thead>',
        f"<tbody>{''.join(body)}</tbody></table>",
        f'<div style="{faint}">{e(legend(report))}</div>',
        image_html(layout(rows, report.measure, margin), engine),
        f'<div style="margin-top:0.4em;font-weight:bold">{e(advice)}</div>',
        *(f'<div style="margin-left:1em">{e(line.strip())}</div>' for line in choices),
        *(
            f'<div style="{SMALL};margin-top:0.2em">⚠ {e(line)}</div>'
            for line in flag_lines(report)
        ),
        "</div>",
    ]
    return "".join(out)


def bundle(
    rows: Iterable[Row], margin: float = MARGIN, measure: str = "auto", engine: Engine = "auto"
) -> dict[str, str]:
    """The MIME bundle of a finished sweep: HTML (with the plot), markdown and text."""
    rows = list(rows)
    return {
        "text/html": html_view(rows, margin, measure, engine),
        "text/markdown": markdown(rows, margin, measure),
        "text/plain": text(rows, margin, measure),
    }


class Shown:
    """A sweep's rows as Jupyter shows them: ``display(Shown(rows))``."""

    def __init__(
        self,
        rows: Iterable[Row],
        margin: float = MARGIN,
        measure: str = "auto",
        engine: Engine = "auto",
    ) -> None:
        self.rows, self.margin, self.measure, self.engine = list(rows), margin, measure, engine

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return bundle(self.rows, self.margin, self.measure, self.engine)

    def __repr__(self) -> str:
        return text(self.rows, self.margin, self.measure)


__all__ = [
    "Report",
    "Shown",
    "advice_lines",
    "bundle",
    "columns",
    "flag_lines",
    "html_view",
    "markdown",
    "table",
    "text",
]
