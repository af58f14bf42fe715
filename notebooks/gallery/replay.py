"""Serve recorded provider streams over a real loopback socket, so a notebook can replay them
through reasoning_nb's own HTTP path (``--base-url``) with no network and no account.

A recording is a file in ``recordings/``, kept byte for byte as its project published it:

* ``NAME.yaml``: a VCR cassette; the response body of its first streamed interaction is served
  as is (``data: ...`` events, as the provider sent them).
* ``NAME.chunks.txt``: one recorded Chat Completions chunk (JSON) a line, as the project kept
  them, without the SSE framing; each is served as a ``data:`` event, then ``data: [DONE]``, the
  framing Chat Completions servers put around them.

``recordings/sources.json`` names each one's model. ``serve()`` starts the server on a free port
and returns its address; a request for a model (named in its JSON body, or in its path as
Gemini's API names it) gets that model's recording, whatever else it asks: the replay answers
with what the provider answered then.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import yaml

RECORDINGS = Path(__file__).resolve().parent / "recordings"


KINDS = (".yaml", ".chunks.txt")
DONE = b"data: [DONE]\n\n"


def names() -> list[str]:
    return sorted(_name(p) for p in RECORDINGS.iterdir() if _name(p))


def models() -> dict[str, str]:
    """The recording to serve for each model (the model part of its ``PROVIDER:MODEL``)."""
    sources = json.loads((RECORDINGS / "sources.json").read_text(encoding="utf-8"))
    return {
        r["model"].split(":", 1)[1]: _name(RECORDINGS / r["file"]) for r in sources["recordings"]
    }


def asked(path: str, body: bytes) -> str | None:
    """The model a request asks for: the body's ``model``, else the path's ``models/NAME:``."""
    with contextlib.suppress(ValueError, AttributeError):
        if model := json.loads(body).get("model"):
            return model
    found = re.search(r"/models/([^/:]+)", path)
    return unquote(found[1]) if found else None


def _name(path: Path) -> str | None:
    kind = next((k for k in KINDS if path.name.endswith(k)), None)
    return path.name.removesuffix(kind) if kind else None


def _path(name: str) -> Path:
    [path] = [p for p in RECORDINGS.iterdir() if _name(p) == name]
    return path


@cache
def events(name: str) -> tuple[bytes, ...]:
    """The recording's response, cut into the events the server writes one at a time."""
    path = _path(name)
    if path.name.endswith(".chunks.txt"):
        lines = path.read_bytes().splitlines()
        return (*(b"data: " + line + b"\n\n" for line in lines if line.strip()), DONE)
    cassette = yaml.safe_load(path.read_text(encoding="utf-8"))
    [body] = [
        i["response"]["body"]["string"]
        for i in cassette["interactions"]
        if "data:" in (i["response"]["body"].get("string") or "")
    ]
    sep = "\r\n\r\n" if "\r\n\r\n" in body else "\n\n"  # write it event by event, byte for byte
    *whole, last = body.split(sep)
    return tuple((part + sep).encode() for part in whole) + ((last.encode(),) if last else ())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        model = asked(self.path, body)
        name = models().get(model or "")
        if name is None:
            message = f"no recording of model {model!r}; there are {', '.join(models())}"
            error = json.dumps({"error": {"message": message}}).encode()
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(error)))
            self.end_headers()
            self.wfile.write(error)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events(name):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, *args: object) -> None:  # quiet in a notebook
        pass


def serve(port: int = 0) -> str:
    """Start the replay server on this machine (a daemon thread); return its address."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"
