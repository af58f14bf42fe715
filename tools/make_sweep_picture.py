"""Write docs/sweep.png, the README's picture of a sweep: a real sweep on the embedded demo
(`local:smollm2`), three presets over a small prompt set graded by its expected words, drawn by
the sweep's own plot. Run `python tools/make_sweep_picture.py` to make it again.

The demo is not a reasoning model (its thinking length is the preset's grammar), so the picture
shows the machinery: cost in tokens against grade, the Pareto front, the recommendation."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import anyio

from reasoning_nb.sweep import plot, views
from reasoning_nb.sweep.engine import asweep

OUT = Path(__file__).resolve().parent.parent / "docs" / "sweep.png"
PROMPTS = [
    {"prompt": "What colour is the sky on a clear day? Answer in one word.", "expected": "blue"},
    {"prompt": "What colour is grass? Answer in one word.", "expected": "green"},
    {"prompt": "Name the star at the centre of our solar system.", "expected": "sun"},
    {"prompt": "What do bees make?", "expected": "honey"},
    {"prompt": "What is frozen water called?", "expected": "ice"},
    {"prompt": "Which animal says meow?", "expected": "cat"},
]


def main() -> None:
    done = anyio.run(
        partial(
            asweep,
            PROMPTS,
            models=["local:smollm2"],
            presets=["off", "low", "high"],
            grader="expected",
            cache=False,
        )
    )
    OUT.write_bytes(plot.png(plot.layout(done.rows)))
    print(views.text(done.rows))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
