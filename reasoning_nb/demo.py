"""``python -m reasoning_nb.demo``: the first run on a fresh machine, no server or key needed.

Starts the embedded ``llama-server`` with SmolLM2-135M, streams one answer to the terminal, and
stops the server. The model is a demo: its "thinking" is shaped by the server's template.
"""

from __future__ import annotations

import sys

import anyio

from .core.events import Done
from .errors import ReasoningNBError
from .providers.embedded import LlamaServer
from .run import Run
from .terminal import TerminalView

QUESTION = "What is the capital of France?"


def main(argv: list[str] | None = None) -> int:
    question = " ".join(argv if argv is not None else sys.argv[1:]) or QUESTION
    print("Starting the embedded llama-server (SmolLM2-135M, a demo model, not a real reasoner)…")
    try:
        with LlamaServer() as server:
            run = Run(
                question,
                model="llamacpp:smollm2",
                base_url=server.url,
                budget_tokens=5,
                max_tokens=96,
            )
            view = TerminalView()
            print(f"\n> {question}\n")

            async def stream() -> None:
                async for event in run.events():
                    view.finish(event.trace) if isinstance(event, Done) else view.on_event(event)

            anyio.run(stream)
    except ReasoningNBError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
