"""``python -m reasoning_nb "question" --model ollama:qwen3 --preset high``: one streamed call.

``python -m reasoning_nb export NB.ipynb --mode strip --to html|md|notebook``: export a notebook
with its reasoning collapsible, inline or stripped (see ``reasoning_nb.export``).

``python -m reasoning_nb cache info|clear [--log]``: the replay cache and run log database.
"""

from __future__ import annotations

import argparse
import sys

import anyio

from .core.events import Done
from .errors import ReasoningNBError
from .options import HIDE_REASONING, given, option_flags
from .run import Run
from .views.terminal import TerminalView, inert


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "export":
        from .export.cli import main as export_main

        return export_main(argv[1:])
    if argv and argv[0] == "cache":
        from .store.cli import main as cache_main

        return cache_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m reasoning_nb", description=__doc__)
    parser.add_argument("prompt", help="what to ask")
    for flag in (*option_flags(), HIDE_REASONING):
        parser.add_argument(*flag.names, **flag.spec())
    args = parser.parse_args(argv)
    view = TerminalView(show_reasoning=not args.hide_reasoning)
    try:
        run = Run(args.prompt, **given(args))

        async def stream() -> None:
            async for event in run.events():
                if isinstance(event, Done):
                    view.finish(event.trace)
                else:
                    view.on_event(event)

        anyio.run(stream)
    except ReasoningNBError as exc:
        print(f"\nerror: {inert(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\n(stopped)", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
