"""core.subject: what the reasoning is about now, over the summary shapes providers send.

The OpenAI and Gemini streams are served by ``wire_server`` (wire_fixtures' shapes) and read by
the real parsers, so the deltas the extractor sees are the ones a run sees.
"""

from __future__ import annotations

import itertools

import pytest
import wire_fixtures as wf
from hypothesis import given, settings
from hypothesis import strategies as st
from provider_harness import Provider
from test_gemini_wire import REASONING as GEMINI_REASONING
from test_openai_wire import PART2 as OPENAI_PART2
from test_openai_wire import REASONING as OPENAI_REASONING

from reasoning_nb import ReasoningDelta
from reasoning_nb.core.subject import LIMIT, Subject, shorten, subject_of

KEY = "sk-proj-test-0123456789"
# Summary parts as OpenAI's Responses API writes them: a bold title line, a blank line, prose.
OPENAI_PARTS = [
    "**Evaluating the request**\n\nThe user wants 17 × 23. I'll multiply in two steps.",
    "**Computing the product**\n\n17 × 20 = 340 and 17 × 3 = 51, so it is 391.",
    "**Double-checking the result**\n\nDividing 391 by 17 gives 23, which confirms it.",
]
# Gemini thought parts: the same titles; a part may follow the last with no newline between.
GEMINI_THOUGHTS = (
    "**Locating Alice**\n\nI'm reading the note for where Alice lives.\n\n"
    "**Weighing the clues**\n\nThe note mentions Paris and a river nearby."
    "**Settling on Paris**\n\nParis fits every clue, so that is the answer.\n\n"
)
RAW = (  # reasoning with no titles (DeepSeek, Qwen, Claude): paragraphs of prose
    "Okay, the user asks where Alice lives. The note is short.\n\n"
    "Wait, it says *Paris* — near the river, e.g. the Seine. So $x = 2$ works.\n\n"
    "Let me write the answer with `code` now and keep it brief without any more detours"
)
SHAPES = [
    "\n\n".join(OPENAI_PARTS),
    f"{OPENAI_REASONING}\n\n{OPENAI_PART2}",
    GEMINI_REASONING,
    GEMINI_THOUGHTS,
    RAW,
]


def served_deltas(server, path: str, frames: list[str], model: str) -> list[str]:
    provider = Provider(model, path, KEY, "Q?")
    provider.serve(server, frames, seed=3, max_piece=17)
    return [e.text for e in provider.events(server) if isinstance(e, ReasoningDelta)]


def subjects_along(deltas: list[str]) -> list[str]:
    """The subject after each delta, checked against a one-shot read of the text so far."""
    subject, text, seen = Subject(), "", []
    for delta in deltas:
        subject.feed(delta)
        text += delta
        assert subject.current == subject_of(text)
        if subject.current and (not seen or seen[-1] != subject.current):
            seen.append(subject.current)
    return seen


def test_openai_summary_parts_give_their_titles_in_turn(wire_server):
    frames = wf.responses_sse("", "391.", parts=OPENAI_PARTS)
    deltas = served_deltas(wire_server, "/v1/responses", frames, "openai:gpt-5.1")
    assert "".join(deltas) == "\n\n".join(OPENAI_PARTS)  # (the parser's own separator)
    titles = ["Evaluating the request", "Computing the product", "Double-checking the result"]
    assert subjects_along(deltas) == titles


def test_openai_wire_fixture_texts(wire_server):
    frames = wf.responses_sse("", "391.", parts=[OPENAI_REASONING, OPENAI_PART2])
    deltas = served_deltas(wire_server, "/v1/responses", frames, "openai:gpt-5.1")
    seen = subjects_along(deltas)
    assert "Planning the product: 17 × 23 = 340 + 51 = 391." in seen  # (a bold word, no title)
    assert seen[-1] == "Checking"


@pytest.mark.parametrize(
    "thoughts,subjects",
    [
        (GEMINI_REASONING, ["Analyzing"]),
        (GEMINI_THOUGHTS, ["Locating Alice", "Weighing the clues", "Settling on Paris"]),
    ],
)
def test_gemini_thought_parts(wire_server, thoughts, subjects):
    path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    frames = wf.gemini_sse(thoughts, "Paris.")
    deltas = served_deltas(wire_server, path, frames, "gemini:gemini-2.5-flash")
    assert "".join(deltas) == thoughts
    assert subjects_along(deltas) == subjects


def test_raw_reasoning_gives_the_first_sentence_of_the_current_paragraph():
    first, second, _ = RAW.split("\n\n")
    assert subject_of(first) == "Okay, the user asks where Alice lives."
    # "e.g." ends no sentence; emphasis and math marks go, their text stays
    assert (
        subject_of(f"{first}\n\n{second}")
        == "Wait, it says Paris — near the river, e.g. the Seine."
    )
    assert subject_of(RAW) == "Let me write the answer with code now and keep it brief without…"
    assert len(subject_of(RAW)) <= LIMIT + 1


def test_half_a_word_is_never_shown():
    assert subject_of("The note sa") == "The note"
    assert subject_of("The note says") == "The note"  # ("says" may be "sayst" still)
    assert subject_of("The note says.\n") == "The note says."
    # a new paragraph with no whole word yet: the one before still says it
    assert subject_of("First idea here.\n\nSeco") == "First idea here."
    assert subject_of("**Evaluating the req") == ""  # a title still arriving
    assert subject_of("**Evaluating the request**") == "Evaluating the request"


@pytest.mark.parametrize("text", SHAPES)
def test_where_the_deltas_split_never_matters(text):
    whole = subject_of(text)
    for i in range(len(text) + 1):
        subject = Subject()
        subject.feed(text[:i])
        subject.feed(text[i:])
        assert subject.current == whole, i
    # and one character at a time, every prefix reads as it would at once
    assert subjects_along(list(text))


@settings(max_examples=150, deadline=None)
@given(
    text=st.sampled_from(SHAPES),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_any_split_reads_as_the_whole(text, cuts):
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    subject = Subject()
    for a, b in itertools.pairwise(bounds):
        subject.feed(text[a:b])
    assert subject.current == subject_of(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab é  .,*$\n"), max_size=200))
def test_shorten_cuts_only_between_words(text):
    short = shorten(text)
    flat = " ".join(text.split())
    assert len(short) <= LIMIT + 1
    if short == flat:
        return
    if short:
        kept = short.removesuffix("…")
        assert short.endswith("…") and flat.startswith(kept)
        assert flat[len(kept)] in " ,;:–—-"  # (the cut fell on a space, trailing marks dropped)
    else:
        assert " " not in flat[: LIMIT + 1]  # its first word alone is too long


def test_work_per_delta_is_bounded():
    """A long paragraph on one line, fed in small deltas: the extractor holds a bounded amount
    of it (so each delta and each read cost the same however long the reasoning is)."""
    subject = Subject()
    held = []
    for i in range(3000):
        subject.feed(f"word{i} and more words without an end ")
        held.append(sum(len(v) for v in vars(subject).values() if isinstance(v, str)))
    assert max(held) <= 4 * 256 and held[-1] == held[1000]
    assert subject.current.startswith("word0 and more words")
    subject.feed(
        "at last. **Wrapping up**\n"
    )  # a title glued to the end of that long line still counts
    assert subject.current == "Wrapping up"
