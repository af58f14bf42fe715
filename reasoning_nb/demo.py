"""``python -m reasoning_nb.demo [QUESTION]``: the first run on a fresh machine.

Starts the embedded ``llama-server`` with SmolLM2-135M (``local:smollm2``), streams one answer
to the terminal, and stops the server. Where no prebuilt ``llama-server`` runs, it first builds
one for this CPU, once, showing its progress. The model is a demo: its "thinking" is shaped by
the server, not reasoned.

``--build`` only builds a ``llama-server`` for this CPU (even where the prebuilt one runs) and
checks that it answers; ``--portable`` builds one for any CPU of this kind instead (binder, whose
image runs on machines unknown when it is built).
"""

from __future__ import annotations

import argparse
import sys

import anyio

from .core.events import Done, Notice
from .errors import ReasoningNBError
from .llama_server import build as llama_build
from .llama_server import choice as llama_choice
from .llama_server.process import LlamaServer, find_model
from .llama_server.progress import BuildProgress
from .providers import local
from .providers.profiles.local import LOCAL
from .run import Run
from .views.terminal import TerminalView

QUESTION = "Why is the sky blue?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reasoning_nb.demo", description=__doc__)
    parser.add_argument("question", nargs="*", help=f"what to ask (default: {QUESTION!r})")
    parser.add_argument("--build", action="store_true", help="only build llama-server for this CPU")
    parser.add_argument("--portable", action="store_true", help="with --build: for any such CPU")
    args = parser.parse_args(argv)
    try:
        if args.build:
            flavor = llama_build.PORTABLE if args.portable else llama_build.NATIVE
            return build_only(flavor)
        return ask(" ".join(args.question) or QUESTION)
    except ReasoningNBError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        local.stop()


def build(flavor: llama_build.Flavor, why: str = "") -> None:
    what = f"building llama-server (llama.cpp {llama_build.LLAMA_CPP}) {flavor.target}, once"
    head = f"{why}, so {what}" if why else what[0].upper() + what[1:]
    minutes, where = llama_build.expected_minutes(), flavor.folder().parent
    print(f"{head}: about {minutes} min here, then kept in {where}.", file=sys.stderr)
    progress = BuildProgress(minutes * 60)
    llama_build.build(flavor, progress)
    progress.done()


def build_only(flavor: llama_build.Flavor) -> int:
    find_model()  # the check after the build needs it: say so now, not in four minutes
    if flavor.binary().exists():
        print(f"llama-server {flavor.label} is already built: {flavor.binary()}")
    else:
        build(flavor)
    with LlamaServer(binary=flavor.binary()) as server:
        server.probe()
    print(f"llama-server {flavor.label} answered a probe request: {flavor.binary()}")
    return 0


def ask(question: str) -> int:
    print(f"{LOCAL.notice}\nStarting it…")
    try:
        local.server()
    except llama_choice.NeedsBuild as exc:
        build(exc.flavor, exc.reason)
        local.server()
    print(f"Using {local.describe()}")
    view = TerminalView()

    async def stream() -> None:
        run = Run(question, model="local:smollm2", preset="low")
        print(f"\n> {question}\n")
        async for event in run.events():
            if isinstance(event, Done):
                view.finish(event.trace)
            elif not (isinstance(event, Notice) and event.text == LOCAL.notice):
                view.on_event(event)

    anyio.run(stream)
    print("\nNext: open notebooks/quickstart.ipynb, or point --model at a real reasoning model.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
