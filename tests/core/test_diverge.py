"""core.diverge: sentence units, the alignment's segments, and its linear growth."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scaling import assert_linear

from reasoning_nb.core.diverge import ONLY_A, ONLY_B, SHARED, align, units

# Sentences that stay one unit each: a capitalised word run ending in a full stop.
WORD = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
SENTENCE = st.lists(WORD, min_size=1, max_size=5).map(lambda ws: "W " + " ".join(ws) + ".")
SEP = st.sampled_from([" ", "  ", "\n", "\n\n", " \n"])
ANY_TEXT = st.text(alphabet=st.sampled_from(list("ab .!?-*1`~\n\t")), max_size=200)


def join(sentences: list[str], seps: list[str]) -> str:
    return "".join(s + seps[i % len(seps)] for i, s in enumerate(sentences))


def rebuilt(found, side: str) -> str:
    text = getattr(found, side)
    skip = ONLY_B if side == "a" else ONLY_A
    return "".join(text[slice(*getattr(s, side))] for s in found.segments if s.kind != skip)


def kinds(found) -> list[tuple[str, int]]:
    return [(s.kind, s.units) for s in found.segments]


# -- units ---------------------------------------------------------------------------------------


def test_units_keep_code_blocks_and_list_items_whole():
    text = (
        "  First. Then this!\n\n- an item. still the item\n2) numbered. too\n"
        "```py\nx = 1. y = 2\n\nz = 3\n```\nLast one? yes"
    )
    pieces = [text[s:e] for s, e in units(text)]
    assert pieces == [
        "  First. ",
        "Then this!\n\n",
        "- an item. still the item\n",
        "2) numbered. too\n",
        "```py\nx = 1. y = 2\n\nz = 3\n```\n",
        "Last one? ",
        "yes",
    ]


def test_an_unclosed_fence_runs_to_the_end():
    text = "Look.\n~~~\ncode. more\n```\nstill code.\n"
    assert [text[s:e] for s, e in units(text)] == ["Look.\n", "~~~\ncode. more\n```\nstill code.\n"]


@given(ANY_TEXT)
def test_units_cover_any_text_exactly(text):
    spans = units(text)
    assert "".join(text[s:e] for s, e in spans) == text
    assert all(e > s for s, e in spans)


# -- the alignment -------------------------------------------------------------------------------


def test_shared_start_fork_and_meeting_points():
    a = "We read. We add two. It is four. So we check. Done."
    b = "We read.  We add three.\nIt is four. So we check twice. Done."
    found = align(a, b)
    assert kinds(found) == [
        (SHARED, 1), (ONLY_A, 1), (ONLY_B, 1), (SHARED, 1), (ONLY_A, 1), (ONLY_B, 1), (SHARED, 1)
    ]  # fmt: skip
    assert found.parts_at == 1
    assert a[slice(*found.shared_start.a)] == "We read. "
    assert b[slice(*found.shared_start.b)] == "We read.  "
    assert [a[slice(*m.a)] for m in found.meetings] == ["It is four. ", "Done."]
    assert [b[slice(*m.b)] for m in found.meetings] == ["It is four. ", "Done."]


def test_whitespace_does_not_part_them():
    found = align("One  two.\nThree.", "One two. Three.\n\n")
    assert found.same and kinds(found) == [(SHARED, 2)]


def test_an_added_sentence_is_in_one_side_only():
    found = align("A one. A two. A three.", "A one. A new. A two. A three.")
    assert kinds(found) == [(SHARED, 1), (ONLY_B, 1), (SHARED, 2)]
    only = found.segments[1]
    assert only.a[0] == only.a[1] == len("A one. ")  # where it would be in A


def test_anchors_past_a_moved_block_keep_the_longest_order():
    a = "S1. S2. S3. S4. S5. S6."
    b = "S1. S5. S2. S3. S4. S6."  # S5 moved up: the longer run S2-S4 stays the shared one
    found = align(a, b)
    assert kinds(found) == [(SHARED, 1), (ONLY_B, 1), (SHARED, 3), (ONLY_A, 1), (SHARED, 1)]


def test_repeated_sentences_match_by_their_neighbours():
    a = "Start. Hmm. X one. Hmm. Y one. End."
    b = "Start. Hmm. X two. Hmm. Y one. End."
    found = align(a, b)
    assert kinds(found) == [(SHARED, 2), (ONLY_A, 1), (ONLY_B, 1), (SHARED, 3)]


def test_empty_and_one_sided():
    assert align("", "").segments == ()
    assert kinds(align("", "Only B. Two.")) == [(ONLY_B, 2)]
    assert kinds(align("Only A.", "")) == [(ONLY_A, 1)]
    found = align("Totally. Different.", "Nothing. Alike.")
    assert found.shared_start is None and found.parts_at == 0 and found.meetings == ()


@given(ANY_TEXT, ANY_TEXT)
def test_segments_rebuild_each_text_exactly(a, b):
    found = align(a, b)
    assert rebuilt(found, "a") == a
    assert rebuilt(found, "b") == b
    for s, t in zip(found.segments, found.segments[1:], strict=False):  # no gap, no overlap
        assert s.a[1] == t.a[0] and s.b[1] == t.b[0]


@given(st.lists(SENTENCE, min_size=1, max_size=30), st.lists(SENTENCE, max_size=30), st.data())
def test_segments_rebuild_texts_of_sentences(left, right, data):
    a = join(left, data.draw(st.lists(SEP, min_size=1, max_size=3)))
    b = join(right, data.draw(st.lists(SEP, min_size=1, max_size=3)))
    found = align(a, b)
    assert (rebuilt(found, "a"), rebuilt(found, "b")) == (a, b)
    shared = [s for s in found.segments if s.kind == SHARED]
    for s in shared:  # shared runs hold the same words
        assert a[slice(*s.a)].split() == b[slice(*s.b)].split()


@given(st.lists(SENTENCE, min_size=1, max_size=30), st.lists(SEP, min_size=1, max_size=3))
def test_identical_texts_are_one_shared_segment(sentences, seps):
    text = join(sentences, seps)
    found = align(text, text)
    assert kinds(found) == [(SHARED, len(sentences))] and found.parts_at is None


@settings(max_examples=200)
@given(st.lists(SENTENCE, min_size=1, max_size=30, unique=True), st.data())
def test_one_changed_sentence_parts_exactly_there(sentences, data):
    k = data.draw(st.integers(0, len(sentences) - 1))
    new = data.draw(SENTENCE.filter(lambda s: s not in sentences))
    changed = [*sentences[:k], new, *sentences[k + 1 :]]
    found = align(" ".join(sentences), " ".join(changed))
    after = len(sentences) - k - 1
    expected = (
        [(SHARED, k)] * bool(k) + [(ONLY_A, 1), (ONLY_B, 1)] + [(SHARED, after)] * bool(after)
    )
    assert kinds(found) == expected
    assert found.parts_at == int(bool(k))
    fork = found.segments[found.parts_at]
    assert found.a[slice(*fork.a)].strip() == sentences[k]
    assert found.b[slice(*found.segments[found.parts_at + 1].b)].strip() == new


# -- time ----------------------------------------------------------------------------------------


def two_reasonings(n: int) -> tuple[str, str]:
    """``n`` sentences each: a shared start, a fork, a shared middle, a fork, a shared end."""

    def run(tag: str, count: int) -> str:
        return " ".join(f"Step {i} of {tag} holds {i % 7}." for i in range(count)) + "\n"

    fifth = max(n // 5, 1)
    a = run("start", fifth) + run("left", fifth) + run("mid", fifth) + run("left2", fifth)
    b = run("start", fifth) + run("right", fifth) + run("mid", fifth) + run("right2", fifth)
    return a + run("end", fifth), b + run("end", fifth)


def test_two_parted_reasonings_align_in_linear_time():
    assert_linear(lambda n: align(*two_reasonings(n)), 1_000)


@pytest.mark.parametrize("tags", [("x", "y"), ("x", "x")])
def test_no_unique_anchor_costs_linear_time(tags):
    """Sentences that repeat all through (no anchor at all): the gap is one difference."""

    def work(n: int):
        return align(f"Hmm {tags[0]}. Wait. " * n, f"Wait. Hmm {tags[1]}. Hmm {tags[1]}. " * n)

    assert_linear(work, 2_000)
