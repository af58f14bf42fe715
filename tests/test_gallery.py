"""notebooks/gallery.ipynb: recorded streams of real providers, replayed over a real socket
through reasoning_nb's own HTTP path. Each recording is kept byte for byte, splits into reasoning
and answer exactly as the provider's own fields say, and the saved outputs are what the package
makes of it now, so the gallery cannot go stale silently."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from reasoning_nb import think
from reasoning_nb.errors import ProviderError

ROOT = Path(__file__).resolve().parent.parent
GALLERY = ROOT / "notebooks" / "gallery"
sys.path.insert(0, str(ROOT / "tools"))
import make_gallery  # noqa: E402  (tools/ is not a package)
from make_quickstart import execute  # noqa: E402


def _load_replay():
    spec = importlib.util.spec_from_file_location("gallery_replay", GALLERY / "replay.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


replay = _load_replay()
RECORDINGS = make_gallery.recordings()
ids = [r["file"] for r in RECORDINGS]


def provider_fields(wire: str, body: str) -> tuple[str, str]:
    """Reasoning and answer as the provider's own fields carry them, read here independently
    of the package: each wire's reasoning field, its answer field, in stream order."""
    reasoning: dict[tuple, list[str]] = {}  # one block per summary part (Responses)
    answer: list[str] = []
    for event in _events(body):
        if wire == "chat":
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                block = reasoning.setdefault((), [])
                block.append(delta.get("reasoning_content") or delta.get("reasoning") or "")
                answer.append(delta.get("content") or "")
        elif wire == "anthropic":
            delta = event.get("delta") or {}
            if delta.get("type") == "thinking_delta":
                reasoning.setdefault((), []).append(delta["thinking"])
            elif delta.get("type") == "text_delta":
                answer.append(delta["text"])
        elif wire == "gemini":
            for candidate in event.get("candidates") or []:
                for part in (candidate.get("content") or {}).get("parts") or []:
                    into = reasoning.setdefault((), []) if part.get("thought") else answer
                    into.append(part.get("text", ""))
        elif wire == "responses":
            if event.get("type") == "response.reasoning_summary_text.delta":
                key = (event["item_id"], event["summary_index"])
                reasoning.setdefault(key, []).append(event["delta"])
            elif event.get("type") == "response.output_text.delta":
                answer.append(event["delta"])
    blocks = ["".join(parts) for parts in reasoning.values()]
    return "\n\n".join(blocks), "".join(answer)


def _events(body: str):
    for line in body.replace("\r\n", "\n").split("\n"):
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            yield json.loads(line[5:])


def expected(recording: dict) -> tuple[str, str]:
    """What a trace must hold: the provider's fields, with the leading and trailing blank lines
    that the package's fold always trims (core.trace)."""
    body = b"".join(replay.events(recording_name(recording))).decode()
    reasoning, answer = provider_fields(recording["wire"], body)
    return reasoning.strip("\n"), answer.strip("\n")


def recording_name(recording: dict) -> str:
    return replay.models()[recording["model"].split(":", 1)[1]]


@pytest.fixture(scope="module")
def address() -> str:
    return replay.serve()


@pytest.mark.parametrize("recording", RECORDINGS, ids=ids)
def test_recording_is_kept_byte_for_byte(recording):
    data = (GALLERY / "recordings" / recording["file"]).read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's id of the file
    assert blob == recording["git_blob"], "the upstream file at that commit, unchanged"
    assert recording["licence"] in ("MIT", "Apache-2.0")
    for name in recording["licence_files"]:
        assert (GALLERY / "recordings" / name).read_text().strip()


@pytest.mark.parametrize("recording", RECORDINGS, ids=ids)
def test_replay_splits_as_the_provider_fields(recording, address):
    trace = think(
        recording["prompt"], model=recording["model"], base_url=address, api_key="not-a-key"
    )
    reasoning, answer = expected(recording)
    assert trace.status == "complete" and not trace.warnings and not trace.error
    assert len(reasoning) > 150 and answer  # real reasoning, then an answer
    assert trace.reasoning == reasoning
    assert trace.answer == answer


def test_replay_refuses_a_model_it_has_no_recording_of(address):
    with pytest.raises(ProviderError, match="no recording of model 'deepseek-chat'"):
        think("Hi", model="deepseek:deepseek-chat", base_url=address, api_key="not-a-key")


def saved_traces(nb) -> list[dict]:
    return [
        o.metadata["reasoning_nb"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "reasoning_nb" in o.get("metadata", {})
    ]


@pytest.mark.kernel
def test_saved_gallery_is_what_the_package_makes_of_each_recording_now():
    saved = nbformat.read(ROOT / "notebooks" / "gallery.ipynb", as_version=4)
    fresh = make_gallery.build()
    assert [c.source for c in saved.cells] == [c.source for c in fresh.cells], (
        "run: python tools/make_gallery.py --execute"
    )
    execute(fresh)
    outputs = [o for c in fresh.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    now, then = saved_traces(fresh), saved_traces(saved)
    assert [t["model"] for t in then] == [r["model"] for r in RECORDINGS]
    fields = ("model", "prompt", "preset", "status", "reasoning", "answer", "usage", "request")
    for recording, new, old in zip(RECORDINGS, now, then, strict=True):
        assert {k: new[k] for k in fields} == {k: old[k] for k in fields}, recording["file"]
        assert (old["reasoning"], old["answer"]) == expected(recording)
        shown = " ".join(words(HTMLText.of(saved_html(saved, old))))
        assert " ".join(words(old["answer"].splitlines()[0])) in shown  # the answer, rendered


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


class HTMLText(HTMLParser):
    """The text a browser shows of some HTML (style and script left out)."""

    @classmethod
    def of(cls, markup: str) -> str:
        parser = cls()
        parser.feed(markup)
        return " ".join(parser.parts)

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs) -> None:
        self.hidden += tag in ("style", "script")

    def handle_endtag(self, tag) -> None:
        self.hidden -= tag in ("style", "script")

    def handle_data(self, data) -> None:
        if not self.hidden:
            self.parts.append(data)


def saved_html(nb, trace: dict) -> str:
    """The saved static HTML of the output that holds ``trace``: what GitHub shows."""
    [output] = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.get("metadata", {}).get("reasoning_nb") is trace
    ]
    return output.data["text/html"]
