"""Write notebooks/quickstart.ipynb (run `python tools/make_quickstart.py --execute` to refresh
its saved outputs on the embedded demo model). The notebook is code-reviewed as this script."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

PATH = Path(__file__).resolve().parent.parent / "notebooks" / "quickstart.ipynb"

CELLS = [
    new_markdown_cell(
        "# reasoning_nb quickstart\n\n"
        'Reasoning ("thinking") models, first-class in Jupyter. Run the cells in order.\n\n'
        "With no `--model`, `%%think` uses `REASONING_NB_MODEL`, then a running Ollama with a "
        "thinking model, then a running llama.cpp / LM Studio server, then the **embedded demo** "
        "(`local:smollm2`: a real `llama-server` with the 135M-parameter SmolLM2 from PyPI).\n\n"
        '> The embedded model is a demo: its "thinking" is shaped by the server\'s template and '
        "grammar, not real reasoning, so its prompts here ask for descriptions and lists, not "
        "facts. It shows the machinery on any machine. For real reasoning, `ollama pull qwen3` "
        "(or `deepseek-r1`) and run this notebook again: no flag needs to change. To read what "
        "real models think, open [gallery.ipynb](gallery.ipynb): DeepSeek-R1, Qwen3, Claude, "
        "Gemini and o3-mini, replayed from recorded streams."
    ),
    new_code_cell("%load_ext reasoning_nb"),
    new_markdown_cell("What can it see? Providers, running local servers, and the default model:"),
    new_code_cell("%think --list"),
    new_markdown_cell(
        "## A first `%%think`\n\nThe reasoning pane is open and live while the model thinks, "
        "then folds to a one-line summary when the answer starts; click it to read the "
        "reasoning again. The Stop button (or the kernel's interrupt) ends a stream at once and "
        "keeps what arrived."
    ),
    new_code_cell("%%think\nDescribe a sunset."),
    new_markdown_cell(
        "## Presets\n\nOne vocabulary for every provider: `auto`, `off`, `low`, `medium`, "
        "`high`, `max` (or `--budget N` tokens). Each is translated to the provider's own knob "
        "(Ollama `think`, llama.cpp `reasoning_effort`, ...); the trace keeps exactly what was "
        "sent (`_think.request`: here the demo's own knobs; the gallery shows OpenAI's). Change "
        "the preset in the widget's dropdown to re-run the same prompt: earlier runs stay one "
        "click away."
    ),
    new_code_cell("%%think --preset high\nDescribe the sea."),
    new_code_cell("_think.usage, _think.timing"),
    new_code_cell("%%think --preset off\nList three things to pack for a picnic."),
    new_markdown_cell(
        "## Conversations\n\n`--chat NAME` continues a named conversation across cells "
        "(each provider gets the history by its own rule)."
    ),
    new_code_cell("%%think --chat garden --preset low\nDescribe a garden."),
    new_code_cell("%%think --chat garden --preset low\nWhat would you plant in it?"),
    new_markdown_cell(
        "## What more reasoning buys\n\n`--compare low,high` runs the variants at once, side by "
        "side, then a table (reasoning tokens and time, tok/s) and a diff of the answers; "
        "`--compare ollama:qwen3,ollama:deepseek-r1` compares models the same way. "
        "`%think --stats` tabulates every run of the session, with a plot of reasoning tokens by "
        'preset; `reasoning_nb.stats("their.ipynb")` reads the same from a saved notebook.\n\n'
        "Under a stopped run, **Continue** asks again with the reasoning so far and a one-line "
        "hint; under any run, **Pin** copies the reasoning you selected into a markdown cell."
    ),
    new_code_cell("%%think --compare low,high\nDescribe a forest."),
    new_code_cell("%think --stats"),
    new_markdown_cell("## From plain Python\n\n`think()` blocks; `astream()` yields events."),
    new_code_cell(
        "from reasoning_nb import think\n\n"
        'trace = think("Describe the moon in one sentence.", preset="low")\n'
        'print("reasoning:", trace.reasoning[:80], "…")\n'
        'print("answer:   ", trace.answer[:80], "…")\n'
        'print("status:   ", trace.status, trace.usage)'
    ),
    new_code_cell(
        "from reasoning_nb import ReasoningDelta, TextDelta, astream\n\n"
        'chars = {"reasoning": 0, "answer": 0}\n'
        'async for event in astream("Count to three.", preset="low"):\n'
        "    if isinstance(event, ReasoningDelta):\n"
        '        chars["reasoning"] += len(event.text)\n'
        "    elif isinstance(event, TextDelta):\n"
        '        chars["answer"] += len(event.text)\n'
        "print(chars)"
    ),
    new_markdown_cell(
        "## Saved with the notebook\n\nEvery `%%think` output carries the whole trace in its "
        "metadata (`reasoning_nb`) plus static HTML / Markdown, so the reasoning survives "
        "saving, reopening without a kernel, GitHub and nbconvert. To export with reasoning "
        "sections, or to share a copy without them:\n\n"
        "```\n"
        "jupyter nbconvert --to reasoning-html quickstart.ipynb\n"
        "jupyter nbconvert --to reasoning-notebook --ReasoningPreprocessor.mode=strip "
        "quickstart.ipynb\n"
        "```"
    ),
]


def notebook(cells: list) -> nbformat.NotebookNode:
    """A tour notebook of ``cells``, for the default Python kernel."""
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def execute(nb: nbformat.NotebookNode, timeout: int = 300) -> None:
    """Run ``nb`` in a real kernel, in notebooks/ (where it lives), saving its outputs in it."""
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False).execute(
        cwd=str(PATH.parent)
    )


def write(nb: nbformat.NotebookNode, path: Path) -> None:
    """Write ``nb`` to ``path``, run first when the command line says ``--execute``."""
    if "--execute" in sys.argv:
        execute(nb)
    nbformat.write(nb, path)
    print(f"wrote {path}")


def build() -> nbformat.NotebookNode:
    return notebook(CELLS)


def main() -> None:
    write(build(), PATH)


if __name__ == "__main__":
    main()
