"""``python -m reasoning_nb.demo [QUESTION]``: the first run on a fresh machine.

Starts the embedded ``llama-server`` with SmolLM2-135M (``local:smollm2``), streams one answer
to the terminal, and stops the server. The model is a demo: its "thinking" is shaped by the
server, not reasoned.
"""

from __future__ import annotations

import sys

import anyio

from .core.events import Done, Notice
from .errors import ReasoningNBError
from .providers import local
from .run import Run
from .terminal import TerminalView

QUESTION = "Why is the sky blue?"


def main(argv: list[str] | None = None) -> int:
    question = " ".join(argv if argv is not None else sys.argv[1:]) or QUESTION
    print(f"{local.NOTICE}\nStarting it…")
    view = TerminalView()

    async def stream() -> None:
        run = Run(question, model="local:smollm2", preset="low")
        print(f"\n> {question}\n")
        async for event in run.events():
            if isinstance(event, Done):
                view.finish(event.trace)
            elif not (isinstance(event, Notice) and event.text == local.NOTICE):
                view.on_event(event)

    try:
        anyio.run(stream)
    except ReasoningNBError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        local.stop()
    print("\nNext: open notebooks/quickstart.ipynb, or point --model at a real reasoning model.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
