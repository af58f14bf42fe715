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
from .core.presets import PRESETS
from .errors import ReasoningNBError
from .run import MAX_CHARS, Run
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
    parser.add_argument("-m", "--model", help="PROVIDER:MODEL, e.g. ollama:qwen3")
    parser.add_argument("-p", "--preset", default="auto", choices=PRESETS)
    parser.add_argument("--budget", type=int, help="reasoning token budget (overrides the preset)")
    parser.add_argument("--base-url", help="server address, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="send the key in this environment variable (needed for a provider's key to go to "
        "a --base-url that is not the provider's own)",
    )
    parser.add_argument("--system", help="system prompt")
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument("--temperature", type=float)
    parser.add_argument(
        "--max-chars", type=int, default=MAX_CHARS, help="end a run whose text passes this length"
    )
    parser.add_argument("--hide-reasoning", action="store_true")
    parser.add_argument("--cache", action="store_true", help="replay an identical earlier run")
    parser.add_argument("--refresh", action="store_true", help="ask again; replace the cached run")
    args = parser.parse_args(argv)
    view = TerminalView(show_reasoning=not args.hide_reasoning)
    try:
        run = Run(
            args.prompt,
            model=args.model,
            preset=args.preset,
            budget_tokens=args.budget,
            base_url=args.base_url,
            api_key_env=args.api_key_env,
            system=args.system,
            max_tokens=args.max_tokens,
            temperature=args.temperature,
            max_chars=args.max_chars,
            cache=args.cache,
            refresh=args.refresh,
        )

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
