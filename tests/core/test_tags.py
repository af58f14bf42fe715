"""The inline splitter: each marker family, each rule, and chunkings that change nothing."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasoning_nb.core.events import Notice, ReasoningDelta, Reclassify, TextDelta
from reasoning_nb.core.tags import (
    DEFAULT_MARKERS,
    UNCLOSED_WARNING,
    InlineSplitter,
    Marker,
    Markers,
    split_all,
)
from reasoning_nb.core.trace import Trace, answer_start

R, T = ReasoningDelta, TextDelta


def run(chunks, **kw):
    splitter = InlineSplitter(**kw)
    events = []
    for chunk in chunks:
        events += splitter.feed(chunk)
    return events + splitter.close()


def fold(events):
    trace = Trace()
    trace.start()
    for event in events:
        trace.fold(event)
    trace.finish()
    return trace.reasoning, trace.answer, trace.warnings


def texts(events):
    """Per-kind concatenation, with Reclassify moving the answer so far into reasoning."""
    reasoning = answer = ""
    for event in events:
        if isinstance(event, Reclassify):
            reasoning, answer = reasoning + answer, ""
        elif isinstance(event, R):
            reasoning += event.text
        elif isinstance(event, T):
            answer += event.text
    return reasoning, answer


def splits(text):
    """The text cut into two at every position, and one character at a time."""
    yield from ([text[:i], text[i:]] for i in range(len(text) + 1))
    yield list(text)


# -- marker families ---------------------------------------------------------------------------

FAMILIES = [
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("[THINK]", "[/THINK]"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|channel>thought\n", "<channel|>"),
    ("<|channel|>analysis<|message|>", "<|end|>"),
]


@pytest.mark.parametrize(("open_", "close"), FAMILIES)
def test_each_family_splits_whole(open_, close):
    events = run([f"{open_}Let me see.{close}\n\nThe answer."])
    assert events == [R("Let me see."), T("\n\nThe answer.")]


@pytest.mark.parametrize(("open_", "close"), FAMILIES)
def test_each_family_survives_any_split(open_, close):
    text = f"{open_}Let me see.{close}The answer."
    for chunks in splits(text):
        assert texts(run(chunks)) == ("Let me see.", "The answer."), chunks


def test_gemma_label_newline_split_from_its_label():
    assert texts(run(["<|channel>thought", "\nhmm<channel|>ok"])) == ("hmm", "ok")
    assert texts(run(["<|channel>thought", "", "\n", "hmm<channel|>ok"])) == ("hmm", "ok")
    # Only the one newline after the label goes.
    assert texts(run(["<|channel>thought\n\nhmm<channel|>ok"])) == ("\nhmm", "ok")


def test_harmony_full_turn():
    stream = (
        "<|channel|>analysis<|message|>User asks 2+2.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>4<|return|>"
    )
    for chunks in splits(stream):
        assert texts(run(chunks)) == ("User asks 2+2.", "4")


def test_harmony_tokens_never_reach_the_answer():
    events = run(["<|start|>assistant<|channel|>final<|message|>Hi<|end|> there<|return|>"])
    assert events == [T("Hi there")]


def test_harmony_commentary_header_is_dropped():
    stream = (
        "<|channel|>analysis<|message|>Need a tool.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get <|constrain|>json<|message|>"
        '{"x": 1}<|call|>'
    )
    for chunks in splits(stream):
        assert texts(run(chunks)) == ("Need a tool.", '{"x": 1}')


def test_harmony_commentary_header_never_finished_is_dropped_at_close():
    assert texts(run(["ok<|channel|>commentary to=functions.get"])) == ("", "ok")


# -- rule 1: partial markers are held back, nothing else ---------------------------------------


def test_plain_text_goes_out_at_once():
    splitter = InlineSplitter()
    assert splitter.feed("Hello <b>bold</b> [1] a<b") == [T("Hello <b>bold</b> [1] a<b")]
    assert splitter.close() == []


@pytest.mark.parametrize(
    ("chunk", "emitted"),
    [
        ("Hi <", "Hi "),
        ("Hi </thi", "Hi "),
        ("Hi [/TH", "Hi "),
        ("Hi <|chan", "Hi "),
        ("Hi <|channel|>analysis<|mess", "Hi "),
        ("Hi <<", "Hi <"),
        ("Hi <x", "Hi <x"),
        ("Hi [x", "Hi [x"),
    ],
)
def test_only_a_possible_marker_start_is_held(chunk, emitted):
    splitter = InlineSplitter()
    assert texts(splitter.feed(chunk)) == ("", emitted)
    # What was held is flushed as text when it never became a marker.
    assert texts(splitter.close()) == ("", chunk[len(emitted) :])


def test_held_back_part_completes_a_marker_next_chunk():
    splitter = InlineSplitter()
    assert splitter.feed("A <thi") == [T("A ")]
    assert splitter.feed("nk>b") == [R("b")]
    assert splitter.saw_markers


def test_a_marker_that_extends_another_waits_for_the_longer_one():
    table = Markers(
        (
            Marker("<t>", "open", "t"),
            Marker("<t>x", "open", "tx"),
            Marker("</t>", "close", "t"),
            Marker("</t>x", "close", "tx"),
        )
    )
    splitter = InlineSplitter(markers=table)
    assert splitter.feed("a<t>") == [T("a")]
    assert splitter.feed("xb</t>xc") == [R("b"), T("c")]
    assert texts(run(["a<t>"], markers=table)) == ("", "a")


# -- rule 2: several blocks --------------------------------------------------------------------


def test_blocks_after_answer_text_are_new_blocks():
    stream = "<think>one</think>Partial answer.<think>two</think>Done."
    events = run([stream])
    assert events == [R("one"), T("Partial answer."), R("two"), T("Done.")]
    assert fold(events) == ("one\n\ntwo", "Partial answer.Done.", [])


# -- rule 3: lone closers ----------------------------------------------------------------------


@pytest.mark.parametrize("close", ["</think>", "</thinking>", "</reasoning>", "<|END_THINKING|>"])
def test_lone_closer_reclassifies(close):
    events = run([f"Thinking hard.{close}\n\nAnswer."])
    assert events == [Reclassify(), R("Thinking hard."), T("\n\nAnswer.")]
    assert fold(events) == ("Thinking hard.", "Answer.", [])


def test_lone_closer_in_a_later_chunk():
    splitter = InlineSplitter()
    first = splitter.feed("Thinking ")
    second = splitter.feed("hard.</think>Answer.")
    assert first == [T("Thinking ")]
    assert second == [Reclassify(), R("hard."), T("Answer.")]
    assert fold(first + second + splitter.close()) == ("Thinking hard.", "Answer.", [])


def test_lone_closer_split_anywhere_gives_the_same_trace():
    stream = "  Step one.\nStep two.</think>\n\nAnswer."
    for chunks in splits(stream):
        events = run(chunks)
        assert events.count(Reclassify()) == 1
        # the leading spaces were held as a possible indent, then moved with the text
        assert fold(events) == ("  Step one.\nStep two.", "Answer.", []), chunks


def test_second_lone_closer_is_dropped():
    events = run(["a</think>b</think>c"])
    assert events == [Reclassify(), R("a"), T("bc")]


def test_closer_after_a_closed_block_is_dropped():
    assert run(["<think>a</think>b</think>c"]) == [R("a"), T("bc")]


@pytest.mark.parametrize("close", ["[/THINK]", "<|end|>", "<channel|>"])
def test_lone_closer_of_other_families_is_only_dropped(close):
    assert run([f"Plain answer{close} goes on."]) == [T("Plain answer goes on.")]


def test_preopened_starts_in_reasoning():
    events = run(["\nThinking.", "</think>\n\nAnswer."], preopened=True)
    assert events == [R("\nThinking."), T("\n\nAnswer.")]
    assert Reclassify() not in events
    assert fold(events) == ("Thinking.", "Answer.", [])


def test_preopened_block_ends_at_any_closer():
    assert texts(run(["x[/THINK]y"], preopened=True)) == ("x", "y")


def test_preopened_then_explicit_opener_is_dropped():
    assert texts(run(["<think>x</think>y"], preopened=True)) == ("x", "y")


# -- rules 4 and 5: unclosed and empty blocks --------------------------------------------------


def test_unclosed_block_is_reasoning_with_a_notice():
    splitter = InlineSplitter()
    assert splitter.feed("<think>still going") == [R("still going")]
    assert splitter.close() == [Notice(UNCLOSED_WARNING)]
    assert split_all("<think>still going") == ("still going", "", [UNCLOSED_WARNING])


def test_unclosed_block_flushes_held_text_as_reasoning():
    splitter = InlineSplitter()
    splitter.feed("<think>a </th")
    assert splitter.close() == [R("</th"), Notice(UNCLOSED_WARNING)]


def test_preopened_stream_that_never_closes_warns():
    assert split_all("all thought", preopened=True) == ("all thought", "", [UNCLOSED_WARNING])


def test_preopened_empty_stream_does_not_warn():
    assert run([], preopened=True) == []
    assert run([""], preopened=True) == []


def test_empty_block_gives_nothing():
    events = run(["<think></think>\n\nHello."])
    assert events == [T("\n\nHello.")]
    assert fold(events) == ("", "Hello.", [])
    for chunks in splits("<think></think>Hi"):
        assert split_all("".join(chunks)) == ("", "Hi", [])
        assert fold(run(chunks)) == ("", "Hi", [])


# -- rule 6: merged events ---------------------------------------------------------------------


def test_same_kind_events_in_one_feed_are_merged():
    events = run(["a<|return|>b<|start|>assistantc<think>d<think>e</think>f[/THINK]g"])
    assert events == [T("abc"), R("de"), T("fg")]


def test_other_familys_closer_inside_a_block_is_text():
    assert texts(run(["<think>use [/THINK] or <|end|></think>ok"])) == (
        "use [/THINK] or <|end|>",
        "ok",
    )


def test_saw_markers():
    splitter = InlineSplitter()
    splitter.feed("plain <b>html</b> [x] <|foo|>")
    assert not splitter.saw_markers
    splitter.feed("<|return|>")
    assert splitter.saw_markers


def test_events_equal_normally_built_ones():
    splitter = InlineSplitter()
    splitter.feed("warm up")
    (event,) = splitter.feed("fast path")
    assert type(event) is TextDelta
    assert event == TextDelta("fast path")
    assert hash(event) == hash(TextDelta("fast path"))


def test_blank_lines_before_the_answer_are_dropped_but_not_its_indentation():
    assert run(["\n\n", "  Hello"]) == [T("  Hello")]
    assert run(["\n  ", "\n", "    x = 1\n    y = 2"]) == [T("    x = 1\n    y = 2")]
    assert run(["  \n", " <think>a</think>b"]) == [R("a"), T("b")]  # nor before a block


def test_custom_table():
    table = Markers((Marker("<scratch>", "open", "s"), Marker("</scratch>", "close", "s", True)))
    assert split_all("a<scratch>b</scratch>c", markers=table) == ("b", "ac", [])
    assert split_all("a</scratch>c", markers=table) == ("a", "c", [])
    assert split_all("<think>x</think>", markers=table) == ("", "<think>x</think>", [])


def test_default_table_is_one_place():
    texts_ = [m.text for m in DEFAULT_MARKERS.items]
    assert len(texts_) == len(set(texts_))
    assert {"open", "close", "drop"} == {m.role for m in DEFAULT_MARKERS.items}


# -- properties: chunking never changes the result ---------------------------------------------

MARKER_TEXTS = [m.text for m in DEFAULT_MARKERS.items]
PARTS = st.one_of(
    st.sampled_from(MARKER_TEXTS),
    st.sampled_from(["<thi", "</", "<", "[", "<|", "[/TH", "<|chan", "<|channel|>", "thought"]),
    st.sampled_from(["\n", "\n\n", " ", "Hello", "x < y", "a[0]", "<b>", "ok."]),
    st.text(alphabet="ab <>|[]/\n", max_size=6),
)
STREAMS = st.lists(PARTS, max_size=14).map("".join)


@st.composite
def chunked(draw):
    text = draw(STREAMS)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    bounds = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in pairwise(bounds)]


@settings(deadline=None, max_examples=300)
@given(chunked(), st.booleans())
def test_any_chunking_folds_to_the_same_trace(case, preopened):
    text, chunks = case
    whole = run([text], preopened=preopened)
    split = run(chunks, preopened=preopened)
    assert fold(split) == fold(whole)
    assert texts(split) == texts(whole)


@settings(deadline=None, max_examples=200)
@given(chunked(), st.booleans())
def test_emitted_texts_match_split_all(case, preopened):
    text, chunks = case
    reasoning, answer = texts(run(chunks, preopened=preopened))
    folded = split_all(text, preopened=preopened)

    def squash(s):
        return "".join(s.split())  # Trace only adds block separators and trims whitespace

    assert (squash(reasoning), squash(answer)) == (squash(folded[0]), squash(folded[1]))


@settings(deadline=None, max_examples=200)
@given(chunked())
def test_events_are_merged_and_never_empty(case):
    _, chunks = case
    splitter = InlineSplitter()
    for chunk in [*chunks, None]:
        events = splitter.feed(chunk) if chunk is not None else splitter.close()
        for a, b in pairwise(events):
            assert type(a) is not type(b)
        assert all(e.text for e in events if isinstance(e, (R, T)))


@settings(deadline=None, max_examples=200)
@given(st.lists(st.text(alphabet="ab <[|/\n", max_size=12), max_size=10))
def test_without_markers_only_a_short_tail_waits(chunks):
    longest = max(map(len, MARKER_TEXTS))
    splitter = InlineSplitter()
    fed = emitted = ""
    for chunk in chunks:
        fed += chunk
        emitted += texts(splitter.feed(chunk))[1]
        assert shown(fed).startswith(emitted)
        assert len(shown(fed)) - len(emitted) < longest
    emitted += texts(splitter.close())[1]
    assert emitted == shown(fed)


def shown(fed: str) -> str:
    """What the answer shows of ``fed``: nothing while it is blank, then all but blank lines."""
    return answer_start("", fed)[0]


def run_after_native(chunks):
    """The content of a stream whose reasoning came in a native field."""
    splitter = InlineSplitter()
    splitter.tags_end_with_answer()
    events = []
    for chunk in chunks:
        events += splitter.feed(chunk)
    return events + splitter.close()


def test_after_native_reasoning_only_a_leading_block_is_a_block():
    assert fold(run_after_native(["<think>copy</think>Use <think>x</think> here"])) == (
        "copy",  # the leading block: a copy of the native reasoning (the parser drops it)
        "Use <think>x</think> here",
        [],
    )
    assert fold(run_after_native(["a</think>b"])) == ("", "a</think>b", [])  # not reclassified
    assert fold(run_after_native(["Quote <thi", "nk> tags"])) == ("", "Quote <think> tags", [])
    # answer text on the fast path (no marker in sight) also ends the tags (hypothesis found it)
    assert fold(run_after_native(["</think>", ">", "<think>"])) == ("", "><think>", [])


@given(st.lists(st.text(alphabet="ab <>/thinkTHINK\n", max_size=12), max_size=8))
def test_after_native_reasoning_any_split_gives_the_same_answer(chunks):
    assert fold(run_after_native(chunks)) == fold(run_after_native(["".join(chunks)]))
