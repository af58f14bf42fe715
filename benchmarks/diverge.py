"""Where two reasonings part: the alignment's time on two 50,000-character texts.

    python benchmarks/diverge.py [--chars 50000] [--repeat 7]

The two texts share a start, part, meet again, part again and end the same (prose sentences,
list items and a code block, as reasonings hold). It prints the median of ``--repeat`` runs of
``core.diverge.align`` and of the whole fold (``reasoning_nb.diverge`` and its HTML), and, to
show the growth is linear, the same at twice the length. No timing is asserted anywhere.

Measured on 2 shared cores under load from other jobs, 50,000 characters each (7 segments,
parting at the second, meeting again twice): align 2.5-3.6 ms, with the HTML fold 3.7 ms; at
100,000 characters 7.3 ms (x2.0); 500,000 characters 38 ms, 1,000,000 78 ms (x2.0).
"""

from __future__ import annotations

import argparse
import statistics
import time

from reasoning_nb.core.diverge import align
from reasoning_nb.views.diverge_view import diverge, parting_html


def sentences(tag: str, start: int, chars: int) -> str:
    out, n, size = [], start, 0
    while size < chars:
        if n % 17 == 0:
            piece = f"\n- step {n}: check the {tag} case of item {n}.\n"
        elif n % 41 == 0:
            piece = f"\n```python\n{tag}_{n} = {n} * 2\nprint({tag}_{n})\n```\n"
        else:
            piece = f"Sentence {n} of the {tag} thought weighs option {n % 7} again. "
        out.append(piece)
        size += len(piece)
        n += 1
    return "".join(out)


def texts(chars: int) -> tuple[str, str]:
    """Two texts of about ``chars`` each: shared 40%, parted 20%, met 20%, parted 10%, met."""
    share = lambda tag, at, part: sentences(tag, at, int(chars * part))  # noqa: E731
    start, middle, end = share("shared", 0, 0.4), share("shared", 10**6, 0.2), share("end", 0, 0.1)
    a = start + share("first", 0, 0.2) + middle + share("first", 10**5, 0.1) + end
    b = start + share("second", 0, 0.2) + middle + share("second", 10**5, 0.1) + end
    return a, b


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chars", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    a, b = texts(args.chars)
    found = align(a, b)
    print(
        f"{len(a):,} and {len(b):,} characters: {len(found.segments)} segments, "
        f"parts at segment {found.parts_at}, meets again {len(found.meetings)} times"
    )
    base = median_ms(lambda: align(a, b), args.repeat)
    whole = median_ms(lambda: parting_html(diverge(a, b)), args.repeat)
    a2, b2 = texts(args.chars * 2)
    double = median_ms(lambda: align(a2, b2), args.repeat)
    print(f"align: {base:.1f} ms (median of {args.repeat}); with the HTML fold: {whole:.1f} ms")
    print(f"twice the length: {double:.1f} ms (x{double / base:.2f})")


if __name__ == "__main__":
    main()
