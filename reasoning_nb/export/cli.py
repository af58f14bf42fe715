"""``python -m reasoning_nb export NB.ipynb --mode strip --to notebook``.

A thin wrapper over ``jupyter nbconvert --to reasoning-<format>
--ReasoningPreprocessor.mode=<mode>``: same writer, same output names (``NB.html``, ``NB.md``,
``NB.nbconvert.ipynb``), same logging.
"""

from __future__ import annotations

import argparse
import glob

from ..views.render import MODES

FORMATS = {
    "html": "reasoning-html",
    "md": "reasoning-markdown",
    "markdown": "reasoning-markdown",
    "notebook": "reasoning-notebook",
    "ipynb": "reasoning-notebook",
}


def nbconvert_args(args: argparse.Namespace) -> list[str]:
    argv = [*args.notebooks, f"--to={FORMATS[args.to]}"]
    argv.append(f"--ReasoningPreprocessor.mode={args.mode}")
    if args.output:
        argv.append(f"--output={args.output}")
    if args.output_dir:
        argv.append(f"--output-dir={args.output_dir}")
    return argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reasoning_nb export",
        description="Export notebooks with their %%think reasoning collapsible, inline or "
        "stripped (runs jupyter nbconvert with the reasoning exporters).",
    )
    parser.add_argument("notebooks", nargs="+", metavar="NB.ipynb")
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="collapsible",
        help="collapsible: reasoning in a closed <details>; inline: always shown in a "
        "delimited block (print/PDF); strip: no reasoning anywhere (default: collapsible)",
    )
    parser.add_argument(
        "--to", choices=tuple(FORMATS), default="html", help="output format (default: html)"
    )
    parser.add_argument("-o", "--output", help="output file name, without extension")
    parser.add_argument("--output-dir", help="directory to write to")
    args = parser.parse_args(argv)
    missing = [nb for nb in args.notebooks if not glob.glob(nb)]
    if missing:  # nbconvert would answer with its whole --help
        parser.error(f"no such notebook: {', '.join(missing)}")

    from nbconvert.nbconvertapp import NbConvertApp

    try:
        NbConvertApp.launch_instance(argv=nbconvert_args(args))
    except SystemExit as exc:  # nbconvert exits on a failed conversion
        return exc.code if isinstance(exc.code, int) else 1
    return 0
