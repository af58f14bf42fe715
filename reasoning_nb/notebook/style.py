"""The live view's CSS class names and its stylesheet, in one place at the bottom of notebook/
(it imports none of its modules): the widgets take their classes from here, and the page script
its selectors (:data:`PAGE_CSS`, put before it when it is sent: see ``assets``).

``ThinkWidget`` and ``--compare`` columns get the stylesheet by message (``assets``).
"""

from __future__ import annotations

from ..views import code_look, render
from ..views.render import ERROR_CLASS, ERROR_LOOK
from ..views.theme import lab

LIVE_CLASS, STATIC_CLASS = "reasoning-nb-live", "reasoning-nb-static"
ERROR_IN_CELL_CLASS = "reasoning-nb-error-in-cell"
"""On the static twin of a run whose error ends the cell: the cell's error line says it."""
PANE_CLASS, ANSWER_CLASS = "reasoning-nb-pane", "reasoning-nb-answer"
THOUGHTS_CLASS, TEXT_CLASS = "reasoning-nb-thoughts", "reasoning-nb-text"
"""CSS classes of the reasoning pane, the answer, the reasoning text, and both texts."""
SCROLL_CLASS = "reasoning-nb-scroll"  # the reasoning's box: capped while a run is live
# The pane's title as a button, so the keyboard opens it too (the Accordion's own header, a
# plain div, takes over where no kernel answers).
TOGGLE_CLASS = "reasoning-nb-pane-toggle"
CLOCK_CLASS = "reasoning-nb-clock"  # the live elapsed time, counted on by the page itself
CONT_CLASS = "reasoning-nb-cont"  # an Output that goes on with the one before (a forced cut)
ROOT_CLASSES = (render.CSS_CLASS, LIVE_CLASS)
COMPARE_CLASS = "reasoning-nb-compare-live"  # the root of --compare's live view
HEADER_CLASS, STATUS_CLASS = "reasoning-nb-header", "reasoning-nb-status"
MODEL_CLASS, RUNS_CLASS = "reasoning-nb-model", "reasoning-nb-runs"
STEER_CLASS = "reasoning-nb-steer"
EDIT_CLASS = "reasoning-nb-edit"  # Edit & continue's text area: the reasoning, cut at its end
ASSETS_CLASS = "reasoning-nb-assets"  # a widget that brings the page its assets
# Pin not offered now (hidden; set by its script: ipywidgets applies ``_dom_classes`` to a new
# view after the script ran), and what became of a pin.
IDLE_CLASS, PIN_NOTE_CLASS = "reasoning-nb-idle", "reasoning-nb-pin-note"
_GONE = "jupyter-widgets-disconnected"
_PREFIX = render.CSS_CLASS  # (of the static view's classes: ``render``)
_EXPORT = f"{_PREFIX}-export"  # (its root)
_WIDGET = f".jp-OutputArea-child:has(+ .jp-OutputArea-child .{STATIC_CLASS})"
_TWIN = f".jp-OutputArea-child:has(.{LIVE_CLASS}:not(.{_GONE})) + .jp-OutputArea-child"
# A %%think cell leaves two outputs: the live widget, then the static trace (the one output
# with the metadata). While the widget shows a run's text (live, or an earlier run picked),
# the static twin is hidden; once the twin's run is on screen and ended, the widget shows only
# its header, selector and steering, and the twin its text (its own head, notes and earlier
# runs hidden: the widget says them). Those rules hold only while the widget has a kernel
# behind it, so they come with its stylesheet, which the page asks the kernel for and which is
# never saved (LIVE_PAIRING, in ``STYLE``; see ``assets``). A widget with no kernel behind
# it (reopened, restarted) or none at all ("model not found" in a Lab that did not save widget
# state) is hidden and the twin shows whole: that rule, and the twin's own look, are saved with
# the twin (PAIRING_STYLE). Untrusted notebooks drop the <style>: there the widget never
# renders, and the static output shows.
LIVE_PAIRING = (
    f".jp-OutputArea-child:has(.{LIVE_CLASS}:not(.{_GONE}) .{TEXT_CLASS})"
    f" + .jp-OutputArea-child:has(.{STATIC_CLASS}){{display:none}}"
    f"{_TWIN} .{STATIC_CLASS}>.{_EXPORT}>:is(.{_PREFIX}-which,.{_PREFIX}-meta,"
    f".{_PREFIX}-earlier){{display:none}}"
)
_TEXTS = f".{STATIC_CLASS} :is(.{_PREFIX}-answer,.{_PREFIX}-reasoning>div)"
PAIRING_STYLE = (
    "<style>"
    f"{_WIDGET}:not(:has(.{LIVE_CLASS}:not(.{_GONE}))){{display:none}}"
    # The static twin's blocks spaced as the live view's (each a markdown Output of its own
    # there); its code is drawn as there, with no box of its own (``code_look``)
    f"{_TEXTS}>*{{margin:0 0 .5em}}{_TEXTS}>pre{{margin:0 2em .5em}}"
    "</style>"
)
ERROR_IN_CELL_STYLE = (  # (saved only where it applies)
    f"<style>.{STATIC_CLASS}.{ERROR_IN_CELL_CLASS} .{ERROR_CLASS}{{display:none}}</style>"
)
"""The static twin's error line, where the cell's own error line (just below) says it."""
_L = f".{LIVE_CLASS}"
_BEFORE_CONT = (
    f".{TEXT_CLASS} :is(.widget-output:has(+.{CONT_CLASS}),"
    f".widget-box:has(+.widget-box>.{CONT_CLASS}:first-child)>.widget-output:last-child)"
)
"""The Output before one that goes on with it, in the same page or at the end of the last."""
_TABLE_PIECE = (
    f":is({_BEFORE_CONT} .jp-RenderedMarkdown>table:last-child,"
    f".{TEXT_CLASS} .{CONT_CLASS} .jp-RenderedMarkdown>table:first-child)"
)
"""A piece of a table cut by force."""
STYLE = "".join(
    f"{_L} {rule}"
    for rule in (
        # the header: model, preset, Stop and the status line on one calm row
        # (controls at the top: a status line that grows or shrinks moves none of them)
        f".{HEADER_CLASS}{{gap:.6em;flex-wrap:wrap;align-items:flex-start}}",
        f".{HEADER_CLASS} .widget-dropdown{{width:8em}}",
        f".{HEADER_CLASS} .jupyter-button{{width:auto}}",
        f".{HEADER_CLASS} .jupyter-widgets{{margin:0}}",
        f".{ASSETS_CLASS}.{IDLE_CLASS},.{ASSETS_CLASS}:empty{{display:none}}",  # (assets only)
        f".{HEADER_CLASS} .jupyter-button:disabled{{display:none}}",  # Stop, while nothing runs
        f".{HEADER_CLASS} :is(select,.jupyter-button){{height:24px;line-height:22px;"
        "font-size:.9em}",
        f".{MODEL_CLASS}{{font-weight:600}}",
        f".{STATUS_CLASS}{{flex:1 1 12em;min-width:0;font-size:.85em;"
        f"color:{lab('ui-font-color2')}}}",
        f".{STATUS_CLASS} .widget-html-content{{line-height:1.5;padding-top:3px}}",
        # the run selector: small pills, the shown run filled
        f".{RUNS_CLASS}{{line-height:normal;margin:.35em 0 .15em}}",
        f".{RUNS_CLASS} .widget-toggle-button{{font-size:.8em;height:auto;line-height:1.8;"
        "padding:0 .9em;margin:0 .4em 0 0;background:none;box-shadow:none;border-radius:1em;"
        f"border:1px solid {lab('border-color2')};color:{lab('ui-font-color2')}}}",
        f".{RUNS_CLASS} .widget-toggle-button:hover{{box-shadow:none;"
        f"color:{lab('ui-font-color0')}}}",
        f".{RUNS_CLASS} .widget-toggle-button.mod-active{{background:{lab('layout-color2')};"
        f"color:{lab('ui-font-color0')};border-color:{lab('border-color1')}}}",
        # steering, under a run that ended: Continue and its hint, Pin (an empty row is hidden)
        f".{STEER_CLASS}{{gap:.6em;margin:.3em 0;overflow:visible;align-items:center}}",
        f".{STEER_CLASS} .widget-text{{width:24em}}",
        f".{STEER_CLASS}:not(:has(>:not(.{IDLE_CLASS},:empty))){{display:none}}",
        f".{STEER_CLASS} .jupyter-widgets{{margin:0}}",
        f".{STEER_CLASS} :is(input,.jupyter-button){{height:24px;font-size:.9em}}",
        f".{STEER_CLASS} .jupyter-button{{width:auto;padding:0 1em}}",
        f".{STEER_CLASS}:has(.{EDIT_CLASS}){{flex-wrap:wrap}}",  # the text area: a line of its own
        f".{STEER_CLASS} .{EDIT_CLASS}{{flex:1 0 100%}}",
        f".{EDIT_CLASS} textarea{{font-family:{lab('code-font-family')};font-size:.85em}}",
        f".{PIN_NOTE_CLASS}{{margin-left:.6em;font-size:.85em;color:{lab('ui-font-color2')}}}",
        # text: the front end's own markdown (math, code colours, tables), each block an Output
        # with no prompt and no padding of its own
        f".{TEXT_CLASS} .jupyter-widgets{{margin:0}}",
        f".{TEXT_CLASS} .jp-OutputArea-prompt{{display:none}}",
        f".{TEXT_CLASS} .jp-OutputArea-output{{padding:0;overflow:visible}}",
        f".{TEXT_CLASS} .jp-RenderedMarkdown{{padding-right:0}}",
        f".{TEXT_CLASS} .widget-output:not(:has(.jp-OutputArea-child)){{display:none}}",
        # blocks spaced as paragraphs are, within an Output and between two
        f".{TEXT_CLASS} .jp-RenderedMarkdown>:first-child{{margin-top:0}}",
        f".{TEXT_CLASS} .jp-RenderedMarkdown>:last-child{{margin-bottom:.5em}}",
        # a block cut by force reads as one: the pages and the pieces' Outputs step aside, so
        # a paragraph cut runs on inline and a code box cut goes on closed up
        f".{TEXT_CLASS}.widget-box{{display:block}}",
        f".{TEXT_CLASS}>.widget-box{{display:contents}}",
        f"{_BEFORE_CONT},.{TEXT_CLASS} .{CONT_CLASS}{{display:contents}}",
        f":is({_BEFORE_CONT},.{TEXT_CLASS} .{CONT_CLASS}) "
        ":is(.jp-OutputArea,.jp-OutputArea-child,.jp-RenderedMarkdown){display:contents}",
        f"{_BEFORE_CONT} .jp-RenderedMarkdown>p:last-child,"
        f".{TEXT_CLASS} .{CONT_CLASS} .jp-RenderedMarkdown>p:first-child{{display:inline}}",
        f"{_BEFORE_CONT} .jp-RenderedMarkdown>:last-child"
        "{margin-bottom:0;border-bottom-left-radius:0;border-bottom-right-radius:0}",
        f".{TEXT_CLASS} .{CONT_CLASS} .jp-RenderedMarkdown>:first-child"
        "{margin-top:0;border-top-left-radius:0;border-top-right-radius:0}",
        # ...and a table cut is one table: the pieces' rows laid out in one grid (each piece
        # opens with the table's head again: only the first one's shows)
        f".{TEXT_CLASS} .{CONT_CLASS} .jp-RenderedMarkdown>table:first-child>thead{{display:none}}",
        f"{_TABLE_PIECE},{_TABLE_PIECE}>tbody{{display:contents}}",
        f"{_TABLE_PIECE}>thead th{{border-bottom:{lab('border-width')} solid "
        f"{lab('border-color1')}}}",  # (the head's rule, on its cells: no table box)
        # the reasoning: quieter than the answer, a hairline on its left
        f".{THOUGHTS_CLASS}{{border-left:2px solid {lab('border-color2')};padding-left:.9em}}",
        f".{THOUGHTS_CLASS} .jp-RenderedMarkdown{{color:{lab('content-font-color2')}}}",
        f".{SCROLL_CLASS}{{flex-direction:column}}",  # (the text as wide as the pane)
        f".{SCROLL_CLASS}>.widget-box{{flex:none;overflow:visible}}",
        # its pane: a light one-line title, no grey bar, no box, no deep indent; the title is a
        # button (it opens the pane from the keyboard too), the Accordion's own header hidden
        f".{PANE_CLASS}{{margin:0 0 .35em}}",
        f":is(.{TOGGLE_CLASS},.{PANE_CLASS} .jupyter-widget-Collapse-header){{background:none;"
        "border:none;box-shadow:none;padding:2px 0;font-weight:normal;"
        f"color:{lab('ui-font-color2')}}}",
        f":is(.{TOGGLE_CLASS},.{PANE_CLASS} .jupyter-widget-Collapse-header):is(:hover,"
        f":focus-visible){{color:{lab('ui-font-color0')}}}",
        f".{TOGGLE_CLASS}{{width:fit-content;max-width:100%;height:auto;margin:.3em 0 0;"
        f"text-align:left;font-size:{lab('ui-font-size1')}}}",
        f".{TOGGLE_CLASS}:focus:not(:focus-visible){{outline:none}}",  # (a click: no ring)
        f".{TOGGLE_CLASS}.mod-active{{background:none;box-shadow:none}}",
        f".{PANE_CLASS} .jupyter-widget-Collapse-header{{display:none}}",
        f".{PANE_CLASS} .jupyter-widget-Collapse-contents{{background:none;border:none;"
        "padding:.2em 0 .3em 2px}",
        # a failed run: its error as Jupyter shows one, not in the small grey status line
        f".{ERROR_CLASS} .widget-html-content{{{ERROR_LOOK}}}",
        # restored without a kernel: one "disconnected" mark (on the root), not one per part
        ".jupyter-widgets-disconnected::before{display:none}",
    )
) + (  # ...in the root's corner, not on a line of its own
    # the reasoning, while its run is live (its clock counts), is a box of ~17 lines that
    # follows the newest text unless scrolled up
    f"{_L}:has(.{CLOCK_CLASS}) .{SCROLL_CLASS}{{max-height:30em;overflow-y:auto;"
    "flex-direction:column-reverse}"
    f"{_L}.jupyter-widgets-disconnected{{position:relative}}"
    # ...and no control that needs the kernel looks usable: the preset and run pickers are
    # greyed out, Stop and steering go; the pane opens with the Accordion's header (in the page)
    f"{_L}.jupyter-widgets-disconnected :is(.{HEADER_CLASS} select,.{RUNS_CLASS} button)"
    "{pointer-events:none;opacity:.5}"
    f"{_L}.jupyter-widgets-disconnected :is(.{STEER_CLASS},.{HEADER_CLASS} .jupyter-button,"
    f".{TOGGLE_CLASS}){{display:none}}"
    f"{_L}.jupyter-widgets-disconnected .{PANE_CLASS} .jupyter-widget-Collapse-header"
    "{display:flex}"
    f"{_L}.jupyter-widgets-disconnected::before{{position:absolute;top:0;right:0}}"
)
CLOCK_STYLE = (
    "@property --rn-s{syntax:'<integer>';inherits:false;initial-value:0}"
    "@property --rn-d{syntax:'<integer>';inherits:false;initial-value:0}"
    "@keyframes rn-s{to{--rn-s:360000}}@keyframes rn-d{to{--rn-d:10}}"
    f".{CLOCK_CLASS}{{animation:rn-s 360000s steps(360000,end) forwards,"
    "rn-d 1s steps(10,end) infinite;counter-reset:rn-s var(--rn-s) rn-d var(--rn-d)}"
    f".{CLOCK_CLASS}>span{{display:none}}"
    f".{CLOCK_CLASS}::after{{content:counter(rn-s) '.' counter(rn-d) ' s'}}"
    f".jupyter-widgets-disconnected .{CLOCK_CLASS}{{animation-play-state:paused}}"
)
STYLE += CLOCK_STYLE  # (counted from the status line's ``animation-delay``; paused if no kernel)


# Comments and decorators in the saved views' colours (Lab Dark's read under 4.5:1)
def _ours(dark: bool) -> str:
    return ";".join(
        f"--jp-mirror-editor-{variable}-color:{colours[dark]}"
        for cls, _, _, *colours, _ in code_look.COLOURS
        if (variable := code_look.OURS.get(cls))
    )


STYLE += f"{_L}{{{_ours(False)}}}body[data-jp-theme-light=false] {_L}{{{_ours(True)}}}"
"""One stylesheet, scoped to the live view, sent once with the model label."""
STYLE += LIVE_PAIRING  # (the live widget's side of its pairing with the static twin)
PAGE_CSS = {
    "root": f".{LIVE_CLASS}",
    "panes": {"reasoning": f".{THOUGHTS_CLASS}", "answer": f".{ANSWER_CLASS}"},
    "text": f".{TEXT_CLASS}",  # the widget shows a run's text (else the static twin does)
    # The static twin's run (not its earlier ones): the kernel's HTML, a pane's blocks as children.
    "twin": f".{STATIC_CLASS}>.{_EXPORT}",
    "twinPanes": {
        "reasoning": f":scope>.{_PREFIX}-reasoning>div",
        "answer": f":scope>.{_PREFIX}-answer",
    },
    "idleClass": IDLE_CLASS,
    "noteClass": PIN_NOTE_CLASS,
}
"""What the page script (``static/pin.js``) finds and marks, in its own words."""
