"""``%think --sweep`` and ``%%think --sweep`` in the in-process shell (the text path): what a
cell asks for reaches the engine as models x presets, and every mistake is one line, before
any request."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output
from shell_cell import think_cell

CHAT = "/v1/chat/completions"


def line_magic(ip, line: str):
    with capture_output() as cap:
        result = ip.run_cell(f"%think {line}")
    failed = result.error_before_exec or result.error_in_exec
    cap.error = "\n".join(failed._render_traceback_()) if failed else ""
    return cap


@pytest.mark.parametrize(
    ("line", "body", "said"),
    [
        ("--presets low,high", "", "%think: --presets is for --sweep; add --sweep to the line."),
        ("--sweep", None, "--sweep needs a FILE (CSV or JSONL) in the line form"),
        ("--sweep", "  \n\n", "the cell has no prompts: write one prompt per line"),
        ("--sweep q.csv", "Why?", "--sweep q.csv reads its prompts from the file: empty the cell"),
        ("--sweep --compare low,high", "Why?", "--sweep does not take --compare"),
        ("--sweep --chat c", "Why?", "--sweep does not take --chat"),
        ("--sweep --presets low,low", "Why?", "--presets lists an item twice: 'low,low'."),
        ("--sweep --presets low,,high", "Why?", "--presets takes comma-separated items"),
        ("--sweep --presets low,hgih", "Why?", "hgih"),
        ("--sweep --model llamacpp:m,nowhere", "Why?", "nowhere"),
    ],
)
def test_mistakes_are_one_line_before_any_request(ip, wire_server, line, body, said):
    line = f"{line} --base-url {wire_server.url}"
    if "--model" not in line:
        line += " --model llamacpp:m"
    cap = line_magic(ip, line) if body is None or line.startswith("--presets") else None
    if cap is None:
        cap = think_cell(ip, line, body)
    assert said in cap.error
    assert len(cap.error.splitlines()) == 1
    assert wire_server.requests == []
