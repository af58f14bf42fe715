"""Write notebooks/gallery.ipynb: real reasoning from real models, replayed from recorded streams
(`notebooks/gallery/recordings/sources.json` says where each comes from, and its licence).

Run `python tools/make_gallery.py --execute` to refresh its saved outputs: a real kernel replays
each recording through reasoning_nb's own HTTP path, so what is saved is what the widget makes of
the real stream. The notebook is code-reviewed as this script.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from make_quickstart import notebook, write  # (tools/ is on the path when run)
from nbformat.v4 import new_code_cell, new_markdown_cell

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATH = NOTEBOOKS / "gallery.ipynb"
SOURCES = NOTEBOOKS / "gallery" / "recordings" / "sources.json"
KEY = "REPLAY_KEY"
"""The variable the cells take their key from: the replay takes any key, so none is real."""


def recordings() -> list[dict]:
    return json.loads(SOURCES.read_text(encoding="utf-8"))["recordings"]


def cell_source(recording: dict) -> str:
    """The cell: the recorded model and prompt, with the flags that ask what the recording asked
    (reasoning_nb words it its own way; the replay answers the same whatever is asked)."""
    flags = f" {recording['flags']}" if "flags" in recording else ""
    return f"%%think --model {recording['model']}{flags}\n{recording['prompt']}"


def about(recording: dict) -> str:
    project = recording["repository"].removeprefix("https://github.com/")
    licences = ", ".join(f"[{f}](gallery/recordings/{f})" for f in recording["licence_files"])
    note = f" ({recording['prompt_note']})" if "prompt_note" in recording else ""
    return (
        f"## {recording['title']}\n\n"
        f"**A replay of a recording**: [{recording['file']}](gallery/recordings/"
        f"{recording['file']}), the stream `{recording['model']}` sent to {project}'s "
        f"[tests]({recording['url']}) (commit `{recording['commit'][:10]}`), "
        f"{recording['licence']} licence ({licences}). The reasoning arrived in the provider's "
        f"`{recording['reasoning_field']}` field. The prompt is the recorded one{note}."
    )


def request_note(recording: dict) -> str:
    return (
        f"What reasoning_nb sent for `{recording['flags']}`: only the provider's reasoning "
        "knobs are kept in the trace (`_think` is the last cell's trace). The replay ignored "
        "them; the recording's own request had asked for "
        f"`{json.dumps(recorded_request(recording)['reasoning'])}`."
    )


def recorded_request(recording: dict) -> dict:
    """The request body the provider was sent when the recording was made (a cassette's)."""
    import yaml

    path = SOURCES.parent / recording["file"]
    [request] = [i["request"] for i in yaml.safe_load(path.read_text())["interactions"]]
    return request["parsed_body"]


INTRO = (
    "# Gallery: real reasoning from real models\n\n"
    "Each `%%think` cell below replays a stream that a real provider sent: DeepSeek-R1, "
    "Qwen3, Claude, Gemini and o3-mini. Open projects keep such streams, byte for byte, to test "
    "their clients; these come from [pydantic-ai](https://github.com/pydantic/pydantic-ai) (MIT) "
    "and [vercel/ai](https://github.com/vercel/ai) (Apache-2.0). No text here is invented.\n\n"
    "`gallery/replay.py` serves the recordings over a real socket on this machine, and the "
    "first cell points every `%%think` of this notebook there (`%think --base-url`). "
    "reasoning_nb reads each reply as it would read the provider's: the same HTTP path, the "
    "same parser, the same widget. The replay answers a request for a model with that model's "
    "recording, whatever else was asked, so the cells run anywhere, with no account and no "
    "key (`REPLAY_KEY` is a stand-in). The text is the provider's; the times are the replay's.\n\n"
    "To ask the real providers instead, skip the first cell's last line and set their keys "
    "(`DEEPSEEK_API_KEY`, `ANTHROPIC_API_KEY`, ...)."
)

SETUP = (
    "%load_ext reasoning_nb\n"
    "import os\n\n"
    "from gallery.replay import serve\n\n"
    f'os.environ["{KEY}"] = "not-a-key"\n'
    "replay = serve()  # the recorded streams, on a free port of this machine\n"
    f"%think --base-url $replay --api-key-env {KEY}"
)


def build() -> nbformat.NotebookNode:
    cells = [new_markdown_cell(INTRO), new_code_cell(SETUP)]
    for recording in recordings():
        cells += [new_markdown_cell(about(recording)), new_code_cell(cell_source(recording))]
        if recording.get("show_request"):
            cells += [new_markdown_cell(request_note(recording)), new_code_cell("_think.request")]
    return notebook(cells)


def main() -> None:
    write(build(), PATH)


if __name__ == "__main__":
    main()
