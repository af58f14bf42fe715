"""A scripted HTTP/1.1 server on a real 127.0.0.1 socket, for wire tests.

Every provider test talks to this server through the real client stack (httpx -> socket), so
chunk boundaries, keep-alive, timeouts and dropped connections are real, not mocked.

    with WireServer() as server:                      # or the `wire_server` pytest fixture
        server.route("POST", "/api/chat", Reply.ndjson(frames, chunking="random", seed=3))
        ... client posts to f"{server.url}/api/chat" ...
        assert server.requests[0].json["think"] is True

A route holds a queue of replies: each request takes the next one, the last one repeats.
A reply may also be a callable ``hook(recorded) -> Reply`` (or a dict, sent as JSON).

Stdlib only on the server side; the self-tests in ``test_wire_server.py`` show every feature.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import select
import socket
import ssl
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import KW_ONLY, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

Chunking = Literal["frames", "random", "bytes"] | None
Frame = bytes | str

#: Outcome of one scripted reply, see :attr:`Recorded.outcome`.
Outcome = Literal["complete", "dropped", "client_closed", "stopped"]


class Headers(Mapping[str, str]):
    """Case-insensitive, read-only view of request headers (last value wins)."""

    def __init__(self, items: Any = ()) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        self._data: dict[str, tuple[str, str]] = {}
        for name, value in pairs:
            self._data[name.lower()] = (name, value)

    def __getitem__(self, name: str) -> str:
        return self._data[name.lower()][1]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._data

    def __iter__(self) -> Iterator[str]:
        return (original for original, _ in self._data.values())

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Headers({dict(self.items())!r})"


@dataclass
class Recorded:
    """One request as the server received it, plus what happened to the reply."""

    method: str
    path: str  # without the query string
    query: str  # raw query string ("" if none)
    headers: Headers
    body_bytes: bytes
    json: Any  # parsed body, or None if the body is not JSON
    seed: int | None = None  # the seed used for chunking="random"
    outcome: Outcome | None = None  # set when the reply is finished
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def params(self) -> dict[str, str]:
        """The query string as a dict (last value wins)."""
        return dict(parse_qsl(self.query, keep_blank_values=True))

    @property
    def text(self) -> str:
        return self.body_bytes.decode("utf-8", "replace")

    def wait(self, timeout: float = 5.0) -> Outcome | None:
        """Block until the reply to this request is finished; return its outcome."""
        self.finished.wait(timeout)
        return self.outcome


def _encode(frame: Frame) -> bytes:
    return frame.encode("utf-8") if isinstance(frame, str) else bytes(frame)


@dataclass
class Reply:
    """A scripted response.

    body: a whole body (bytes/str; a dict, or a list of anything but str/bytes, is sent as
    JSON) or frames: ``frames=[...]``, or a list of str/bytes as ``body`` (so use
    ``Reply.json`` for a JSON array of strings). Frames are concatenated; ``chunking`` decides
    where the HTTP chunks fall:

    - ``None``: one write with Content-Length (the default for a whole body);
    - ``"frames"``: one HTTP chunk per frame (the default for frames);
    - ``"random"``: split the concatenated bytes at random positions (1..max_piece bytes,
      ``seed`` for repeatability, so UTF-8 characters and lines get cut too);
    - ``"bytes"``: one byte per HTTP chunk.

    Every piece is one ``sendall`` on a TCP_NODELAY socket; ``pause`` seconds between pieces
    make the client really see separate reads. Faults: ``delay_before_headers`` (alias
    ``delay_first_byte``), ``delay_after_headers``, ``stall`` seconds after ``stall_after``
    pieces, ``drop_after`` (send N body bytes, then close without the final zero-length
    chunk; ``drop_reset`` sends a TCP RST instead of a FIN), ``hangup`` (close before any
    byte of the response).
    """

    body: Any = b""
    _: KW_ONLY
    frames: list[Frame] | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None
    chunking: Chunking | Literal["auto"] = "auto"
    seed: int | None = None
    max_piece: int = 48
    pause: float = 0.0
    delay_before_headers: float = 0.0
    delay_first_byte: float | None = None
    delay_after_headers: float = 0.0
    stall_after: int | None = None
    stall: float = 0.0
    resume: threading.Event | None = None  # ends the stall early once set (by another route)
    drop_after: int | None = None
    drop_reset: bool = False
    hangup: bool = False
    retry_after: float | str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.body, list) and self.frames is None and self._looks_like_frames():
            self.frames, self.body = self.body, b""
        if self.delay_first_byte is not None:
            self.delay_before_headers = self.delay_first_byte
        if self.chunking == "auto":
            self.chunking = "frames" if self.frames is not None else None
        if self.chunking not in (None, "frames", "random", "bytes"):
            raise ValueError(f"unknown chunking {self.chunking!r}")
        if self.content_type is None:
            if isinstance(self.body, dict | list):
                self.content_type = "application/json"
            elif self.frames is None and isinstance(self.body, str):
                self.content_type = "text/plain; charset=utf-8"
            else:
                self.content_type = "application/octet-stream"
        if self.retry_after is not None:
            value = self.retry_after
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            self.headers = {**self.headers, "Retry-After": str(value)}

    def _looks_like_frames(self) -> bool:
        return bool(self.body) and all(isinstance(f, bytes | str) for f in self.body)

    # -- convenience constructors ------------------------------------------------------------

    @classmethod
    def json(cls, obj: Any, status: int = 200, **kw: Any) -> Reply:
        """A JSON body with Content-Length (``Reply.json({"error": "x"}, 404)``)."""
        body = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        return cls(body, status=status, content_type="application/json", **kw)

    @classmethod
    def sse(cls, frames: list[Frame], **kw: Any) -> Reply:
        """``text/event-stream``, one HTTP chunk per frame unless ``chunking`` says otherwise."""
        kw.setdefault("content_type", "text/event-stream")
        return cls(frames=list(frames), **kw)

    @classmethod
    def ndjson(cls, frames: list[Frame], **kw: Any) -> Reply:
        """Ollama's ``application/x-ndjson`` stream."""
        kw.setdefault("content_type", "application/x-ndjson")
        return cls(frames=list(frames), **kw)

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> Reply:
        """A redirect to ``location`` (302 Found, 307 Temporary Redirect...)."""
        return cls(b"", status=status, headers={"Location": location})

    @classmethod
    def html(cls, page: str, status: int = 200, **kw: Any) -> Reply:
        """A web page: a web interface, a proxy's login or error page."""
        return cls(page, status=status, content_type="text/html; charset=utf-8", **kw)

    @classmethod
    def nginx_error(cls, status: int = 502, reason: str = "Bad Gateway") -> Reply:
        """The error page nginx writes itself when the server behind it fails."""
        title = f"{status} {reason}"
        page = (
            f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n"
            f"<center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n"
            "</body>\r\n</html>\r\n"
        )
        return cls(page, status=status, content_type="text/html")

    # -- what goes on the wire ---------------------------------------------------------------

    def payload(self) -> bytes:
        """The whole body as the client should reassemble it."""
        if self.frames is not None:
            return b"".join(_encode(f) for f in self.frames)
        if isinstance(self.body, dict | list):
            return json.dumps(self.body, ensure_ascii=False).encode("utf-8")
        return _encode(self.body)

    def pieces(self, seed: int | None = None) -> list[bytes]:
        """The body split as it will be written (one entry per write / HTTP chunk)."""
        data = self.payload()
        if self.chunking is None:
            return [data] if data else []
        if self.chunking == "frames":
            if self.frames is None:
                return [data] if data else []
            return [b for b in (_encode(f) for f in self.frames) if b]
        if self.chunking == "bytes":
            return [data[i : i + 1] for i in range(len(data))]
        rng = random.Random(self.seed if seed is None else seed)
        out, pos = [], 0
        while pos < len(data):
            step = rng.randint(1, max(1, self.max_piece))
            out.append(data[pos : pos + step])
            pos += step
        return out


Responder = Reply | Callable[[Recorded], Any] | dict


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # each piece leaves in its own TCP segment
    server: _HTTPServer

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()
        super().setup()
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = do_GET

    # -- request ------------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _dispatch(self) -> None:
        owner = self.server.owner
        url = urlsplit(self.path)
        body = self._read_body()
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        rec = Recorded(
            method=self.command,
            path=url.path,
            query=url.query,
            headers=Headers(self.headers.items()),
            body_bytes=body,
            json=parsed,
        )
        owner._record(rec)
        try:
            try:
                reply = owner._resolve(rec)
            except Exception as exc:  # a broken hook must fail the test loudly, not hang it
                owner.errors.append(exc)
                reply = Reply.json({"error": f"wire_server hook raised {exc!r}"}, 500)
            rec.outcome = self._send(reply, rec)
        finally:
            rec.finished.set()

    # -- response -----------------------------------------------------------------------------

    def _wait(self, seconds: float, resume: threading.Event | None = None) -> bool:
        """Sleep, waking early if the server stops (False) or the client hangs up (raises
        ConnectionResetError: a stalled reply sees the close as a real server does); True if
        still running."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if resume is not None and resume.is_set():
                return True
            if self.server.owner._stopping.wait(min(left, 0.05)):
                return False
            if self._hung_up():
                raise ConnectionResetError("the client closed the connection")
        return True

    def _hung_up(self) -> bool:
        """The client closed its end: the socket reads as ended (a peek, nothing consumed)."""
        sock = self.connection
        if isinstance(sock, ssl.SSLSocket):  # TLS allows no peek (and no TLS test stalls)
            return False
        try:
            if not select.select([sock], [], [], 0)[0]:
                return False
            return sock.recv(1, socket.MSG_PEEK) == b""
        except OSError:  # reset, or closed already
            return True

    def _abort(self, reset: bool = False) -> None:
        self.close_connection = True
        sock = self.connection
        try:
            if reset:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            else:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.wfile.close()
        self.rfile.close()
        sock.close()  # the fd closes now: makefile() references are gone
        self.wfile, self.rfile = io.BytesIO(), io.BytesIO()  # http.server still flushes wfile

    def _send(self, reply: Reply, rec: Recorded) -> Outcome:
        if reply.chunking == "random":
            rec.seed = (
                reply.seed if reply.seed is not None else int.from_bytes(os.urandom(4), "big")
            )
        pieces = reply.pieces(rec.seed)
        chunked = reply.chunking is not None
        try:
            if not self._wait(reply.delay_before_headers):
                return "stopped"
            if reply.hangup:
                self._abort(reply.drop_reset)
                return "dropped"
            self.send_response_only(reply.status)
            self.send_header("Content-Type", reply.content_type or "application/octet-stream")
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            elif reply.status not in (204, 304):  # these have no body, nor its length
                self.send_header("Content-Length", str(sum(map(len, pieces))))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if not self._wait(reply.delay_after_headers):
                return "stopped"
            if self.command == "HEAD":
                pieces = []
            sent = 0
            for i, piece in enumerate(pieces):
                if reply.drop_after is not None and sent + len(piece) >= reply.drop_after:
                    self._write(piece[: reply.drop_after - sent], chunked)
                    self._abort(reply.drop_reset)
                    return "dropped"
                self._write(piece, chunked)
                sent += len(piece)
                if reply.stall_after is not None and i + 1 == reply.stall_after:
                    if not self._wait(reply.stall, reply.resume):
                        return "stopped"
                elif reply.pause and i + 1 < len(pieces) and not self._wait(reply.pause):
                    return "stopped"
            if reply.drop_after is not None:  # drop_after >= body length: all but the last chunk
                self._abort(reply.drop_reset)
                return "dropped"
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
            return "complete"
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
            return "client_closed"
        except OSError:
            self.close_connection = True
            return "stopped" if self.server.owner._stopping.is_set() else "client_closed"

    def _write(self, data: bytes, chunked: bool) -> None:
        if not data:
            return
        if chunked:
            data = b"%x\r\n%s\r\n" % (len(data), data)
        self.wfile.write(data)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: WireServer

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, address = super().get_request()
        self.owner.connections += 1
        if self.owner.tls is not None:  # the handshake runs on the handler's thread
            conn = self.owner.tls.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        return conn, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | ssl.SSLError) or self.owner._stopping.is_set():
            return  # a client that went away, or refused our certificate, is not a server bug
        self.owner.errors.append(exc)


class WireServer:
    """The scripted server. Use as a context manager (or ``start()`` / ``stop()``).

    ``tls``: a server-side ``ssl.SSLContext`` (with its certificate loaded) makes it an HTTPS
    server. ``connections`` counts the connections accepted, handshakes that fail included.
    """

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, tls: ssl.SSLContext | None = None
    ) -> None:
        self.requests: list[Recorded] = []
        self.errors: list[BaseException] = []  # exceptions raised by hooks
        self.tls = tls
        self.connections = 0
        self._routes: dict[tuple[str, str], list[Responder]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:40123`` (no trailing slash)."""
        host = self._httpd.server_address[0]
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    def url_for(self, path: str) -> str:
        return self.url + (path if path.startswith("/") else "/" + path)

    def start(self) -> WireServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.01},
                name=f"wire-server-{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes replies that are sleeping (delays, pauses, stalls)
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(5)
        with self._lock:
            open_connections = list(self._connections)
        for conn in open_connections:  # idle keep-alive connections would block their threads
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- script -------------------------------------------------------------------------------

    def route(self, method: str, path: str, *responses: Responder) -> WireServer:
        """Script ``method path``: each request takes the next response; the last repeats.

        Routing again replaces the queue. The path must not contain a query string.
        """
        if not responses:
            raise ValueError("route() needs at least one response")
        if "?" in path:
            raise ValueError("route paths match without the query string; drop it")
        with self._lock:
            self._routes[(method.upper(), path)] = list(responses)
        return self

    def reset(self) -> None:
        """Forget routes, recorded requests and hook errors."""
        with self._lock:
            self._routes.clear()
            self.requests.clear()
            self.errors.clear()

    # -- recording ----------------------------------------------------------------------------

    def bodies(self, path: str, method: str | None = None) -> list[Any]:
        """Parsed JSON bodies (raw bytes when not JSON) of the requests to ``path``."""
        return [
            r.json if r.json is not None else r.body_bytes for r in self.requests_to(path, method)
        ]

    def requests_to(self, path: str, method: str | None = None) -> list[Recorded]:
        with self._lock:
            return [
                r
                for r in self.requests
                if r.path == path and (method is None or r.method == method.upper())
            ]

    @property
    def last(self) -> Recorded:
        """The most recent request (IndexError if none)."""
        with self._lock:
            return self.requests[-1]

    # -- internals used by the handler ----------------------------------------------------------

    def _record(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _resolve(self, rec: Recorded) -> Reply:
        with self._lock:
            queue = self._routes.get((rec.method, rec.path))
            if queue is None:
                responder: Responder = Reply.json({"error": "no route"}, 404)
            else:
                responder = queue.pop(0) if len(queue) > 1 else queue[0]
        if callable(responder) and not isinstance(responder, Reply):
            responder = responder(rec)
        if isinstance(responder, dict):
            responder = Reply.json(responder)
        if not isinstance(responder, Reply):
            raise TypeError(f"a route must give a Reply or a dict, got {responder!r}")
        return responder


@contextlib.contextmanager
def in_child_process(serve: Callable[..., None], *args: Any, timeout: float = 600) -> Iterator[Any]:
    """Run ``serve(*args, ready, stop)`` in a spawned child process, for servers whose own work
    must not count in this process (memory and CPU measures): ``serve`` puts what the caller
    needs (its URLs) on the queue ``ready``, then waits for the event ``stop``; this yields that
    value, and on exit sets ``stop`` and ends the child."""
    import multiprocessing

    spawn = multiprocessing.get_context("spawn")
    ready, stop = spawn.Queue(), spawn.Event()
    child = spawn.Process(target=serve, args=(*args, ready, stop), daemon=True)
    child.start()
    try:
        yield ready.get(timeout=timeout)
    finally:
        stop.set()
        child.join(10)
        if child.is_alive():
            child.terminate()
