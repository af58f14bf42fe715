"""Where two reasoning texts part: a sentence-level alignment, in time linear in the text.

Each text is cut into units: a sentence of prose, a list item, a fenced code block (whole), each
with the whitespace after it, so the units rebuild the text exactly. Units compare with their
whitespace squeezed. The alignment takes the common first and last units, then anchors on units
that occur once on each side, in increasing order on both (the longest increasing run of them,
in n log n), and does the same between anchors, a bounded number of levels deep; what no anchor
reaches is a difference. (A full edit-distance diff, such as difflib's, grows faster than the
square of the text: two long reasonings would take seconds.)
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass

SHARED, ONLY_A, ONLY_B = "shared", "only_a", "only_b"
MAX_DEPTH = 12
"""Levels of anchoring between anchors: each is n log n at most; deeper gaps count as different."""

_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]*_]*[ \t]+(?=\S)")


@dataclass(frozen=True)
class Segment:
    """A run of units: in both texts (``shared``), or in one only. ``a`` and ``b`` are character
    spans, ``[start, end)``; the side a segment is not in has an empty span where it would be."""

    kind: str
    a: tuple[int, int]
    b: tuple[int, int]
    units: int
    """How many sentences (units) the segment holds, on its side (A's for a shared one)."""


@dataclass(frozen=True)
class Alignment:
    a: str
    b: str
    segments: tuple[Segment, ...]

    @property
    def same(self) -> bool:
        """The texts are the same, whitespace aside."""
        return all(s.kind == SHARED for s in self.segments)

    @property
    def parts_at(self) -> int | None:
        """The index of the first segment that is not shared (the fork); None when none is."""
        return next((i for i, s in enumerate(self.segments) if s.kind != SHARED), None)

    @property
    def shared_start(self) -> Segment | None:
        """The units both texts start with, when they do."""
        first = self.segments[0] if self.segments else None
        return first if first is not None and first.kind == SHARED else None

    @property
    def meetings(self) -> tuple[Segment, ...]:
        """The shared runs after the fork: where the texts meet again."""
        at = self.parts_at
        return () if at is None else tuple(s for s in self.segments[at:] if s.kind == SHARED)


def units(text: str) -> list[tuple[int, int]]:
    """The spans of ``text``'s units, in order, covering it exactly."""
    starts: list[int] = []
    fence = ""  # the open fence's marker
    for line in _LINE.finditer(text):
        at, body = line.start(), line.group()
        if fence:
            if _closes(body, fence):
                fence = ""
            continue
        if not body.strip():
            continue  # a blank line ends the unit before it
        starts.append(at)
        opener = _FENCE.match(body)
        if opener:
            fence = opener.group(1)
        elif not _ITEM.match(body):
            starts += [at + m.end() for m in _SENTENCE_END.finditer(body)]
    if not starts:
        return [(0, len(text))] if text else []
    starts[0] = 0  # leading whitespace goes with the first unit
    return list(zip(starts, [*starts[1:], len(text)], strict=True))


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence`` (its character, at least as many)."""
    found = _FENCE.match(line)
    marker = found.group(1) if found else ""
    return marker[:1] == fence[0] and len(marker) >= len(fence) and not line[found.end() :].strip()


def key(piece: str) -> str:
    """What a unit compares as: its words, whitespace squeezed."""
    return " ".join(piece.split())


def align(a: str, b: str) -> Alignment:
    """The segments of ``a`` and ``b``: shared runs and the parts in one text only, in order."""
    spans_a, spans_b = units(a), units(b)
    ids: dict[str, int] = {}
    ka = [ids.setdefault(key(a[s:e]), len(ids)) for s, e in spans_a]
    kb = [ids.setdefault(key(b[s:e]), len(ids)) for s, e in spans_b]
    pairs: list[tuple[int, int]] = []
    _match(ka, kb, 0, len(ka), 0, len(kb), 0, pairs)
    return Alignment(a, b, tuple(_segments(pairs, spans_a, spans_b, len(a), len(b))))


def _match(
    ka: list[int], kb: list[int], a0: int, a1: int, b0: int, b1: int, depth: int,
    out: list[tuple[int, int]],
) -> None:  # fmt: skip
    """Append the matched unit pairs of ``ka[a0:a1]`` and ``kb[b0:b1]`` to ``out``, in order."""
    while a0 < a1 and b0 < b1 and ka[a0] == kb[b0]:
        out.append((a0, b0))
        a0, b0 = a0 + 1, b0 + 1
    tail = []
    while a0 < a1 and b0 < b1 and ka[a1 - 1] == kb[b1 - 1]:
        a1, b1 = a1 - 1, b1 - 1
        tail.append((a1, b1))
    if a0 < a1 and b0 < b1 and depth < MAX_DEPTH:
        at_a, at_b = a0, b0
        for i, j in _anchors(ka, kb, a0, a1, b0, b1):
            _match(ka, kb, at_a, i, at_b, j, depth + 1, out)
            out.append((i, j))
            at_a, at_b = i + 1, j + 1
        if (at_a, at_b) != (a0, b0):  # (no anchor: the gap is a difference)
            _match(ka, kb, at_a, a1, at_b, b1, depth + 1, out)
    out.extend(reversed(tail))


def _anchors(
    ka: list[int], kb: list[int], a0: int, a1: int, b0: int, b1: int
) -> list[tuple[int, int]]:
    """Units once in each range, paired, the longest run of pairs in order on both sides."""
    in_a, in_b = Counter(ka[a0:a1]), Counter(kb[b0:b1])
    where_b = {k: j for j in range(b0, b1) if in_b[k := kb[j]] == 1 and in_a[k] == 1}
    pairs = [(i, where_b[ka[i]]) for i in range(a0, a1) if ka[i] in where_b]
    # Longest increasing subsequence of the B positions (patience sorting with back links).
    tops: list[int] = []  # the smallest B position ending a run of each length
    ends: list[int] = []  # the pair index ending it
    back = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = bisect_left(tops, j)
        back[n] = ends[k - 1] if k else -1
        if k == len(tops):
            tops.append(j)
            ends.append(n)
        else:
            tops[k], ends[k] = j, n
    run, n = [], ends[-1] if ends else -1
    while n >= 0:
        run.append(pairs[n])
        n = back[n]
    return run[::-1]


def _segments(
    pairs: list[tuple[int, int]],
    spans_a: list[tuple[int, int]],
    spans_b: list[tuple[int, int]],
    len_a: int,
    len_b: int,
) -> list[Segment]:
    def at(spans: list[tuple[int, int]], i: int, end: int) -> int:
        return spans[i][0] if i < len(spans) else end

    out: list[Segment] = []
    i = j = 0
    for n, (pi, pj) in enumerate([*pairs, (len(spans_a), len(spans_b))]):
        ai, bj = at(spans_a, i, len_a), at(spans_b, j, len_b)
        if pi > i:
            out.append(Segment(ONLY_A, (ai, at(spans_a, pi, len_a)), (bj, bj), pi - i))
        if pj > j:
            ai = at(spans_a, pi, len_a)
            out.append(Segment(ONLY_B, (ai, ai), (bj, at(spans_b, pj, len_b)), pj - j))
        if n == len(pairs):
            break
        end_a, end_b = spans_a[pi][1], spans_b[pj][1]
        last = out[-1] if out else None
        if last and last.kind == SHARED and last.a[1] == spans_a[pi][0] and pi == i and pj == j:
            out[-1] = Segment(SHARED, (last.a[0], end_a), (last.b[0], end_b), last.units + 1)
        else:
            out.append(Segment(SHARED, spans_a[pi], spans_b[pj], 1))
        i, j = pi + 1, pj + 1
    return out


__all__ = ["ONLY_A", "ONLY_B", "SHARED", "Alignment", "Segment", "align", "key", "units"]
