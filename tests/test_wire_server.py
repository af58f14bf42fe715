"""Self-tests of the wire test server and the frame builders, with raw httpx and raw sockets
(never the project's own client, so a client bug cannot hide a server bug)."""

from __future__ import annotations

import json
import socket

import anyio
import httpx
import pytest
import wire_fixtures as wf
from scaling import assert_linear
from wire_server import Reply, WireServer

FRAMES = [f'data: {{"i":{i},"text":"é→😀 {i}"}}\n\n' for i in range(30)]
PAYLOAD = "".join(FRAMES).encode()


def raw_get(server: WireServer, path: str, timeout: float = 3.0) -> tuple[bytes, list[bytes], int]:
    """GET over a bare socket: (head, decoded HTTP chunks, number of recv() calls with data).

    The chunk list ends with b"" only if the terminating zero-length chunk arrived.
    """
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data, reads = b"", 0
        while block := sock.recv(65536):
            data, reads = data + block, reads + 1
    head, _, rest = data.partition(b"\r\n\r\n")
    chunks = []
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        chunks.append(rest[:size])
        rest = rest[size + 2 :]
        if size == 0:
            break
    return head, chunks, reads


# -- chunking ------------------------------------------------------------------------------------


def test_random_chunking_arrives_in_many_reads_and_reassembles(wire_server):
    reply = Reply.sse(FRAMES, chunking="random", seed=7, pause=0.002)
    wire_server.route("GET", "/sse", reply)
    head, chunks, reads = raw_get(wire_server, "/sse")
    assert b"Transfer-Encoding: chunked" in head
    assert chunks[-1] == b"" and chunks[:-1] == reply.pieces()  # the seed makes it repeatable
    assert b"".join(chunks) == PAYLOAD
    assert reads > 10  # separate TCP reads, not one buffer
    assert wire_server.last.seed == 7


def test_random_chunking_through_httpx_cuts_inside_utf8_and_lines(wire_server):
    wire_server.route("GET", "/sse", Reply.sse(FRAMES, chunking="random", max_piece=5))
    with httpx.Client() as client, client.stream("GET", wire_server.url_for("/sse")) as resp:
        raw = list(resp.iter_raw())
    assert b"".join(raw) == PAYLOAD
    assert len(raw) > len(FRAMES)
    assert any(_cuts_utf8(piece) for piece in raw)
    assert wire_server.last.seed is not None  # printed in failures: replay with seed=


def _cuts_utf8(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def test_frames_and_bytes_chunking(wire_server):
    wire_server.route("GET", "/frames", Reply.sse(FRAMES))
    wire_server.route("GET", "/bytes", Reply.sse(FRAMES[:2], chunking="bytes"))
    _, chunks, _ = raw_get(wire_server, "/frames")
    assert chunks == [f.encode() for f in FRAMES] + [b""]
    _, chunks, _ = raw_get(wire_server, "/bytes")
    assert (
        all(len(c) == 1 for c in chunks[:-1]) and b"".join(chunks) == "".join(FRAMES[:2]).encode()
    )


def test_async_client_streams_lines(wire_server):
    wire_server.route("POST", "/api/chat", Reply.ndjson(wf.ollama_chat("Hmm, 17*23.", "391")))

    async def main() -> list[dict]:
        async with (
            httpx.AsyncClient(base_url=wire_server.url) as client,
            client.stream("POST", "/api/chat", json={"think": True}) as resp,
        ):
            assert resp.headers["content-type"] == "application/x-ndjson"
            return [json.loads(line) async for line in resp.aiter_lines() if line]

    lines = anyio.run(main)
    assert "".join(x["message"].get("thinking", "") for x in lines) == "Hmm, 17*23."
    assert lines[-1]["done"] is True


# -- faults --------------------------------------------------------------------------------------


def test_drop_after_closes_without_final_chunk(wire_server):
    wire_server.route("GET", "/drop", Reply.sse(FRAMES, drop_after=100))
    _, chunks, _ = raw_get(wire_server, "/drop")
    assert len(b"".join(chunks)) == 100 and chunks[-1] != b""
    with (
        httpx.Client() as client,
        pytest.raises(httpx.RemoteProtocolError),
        client.stream("GET", wire_server.url_for("/drop")) as resp,
    ):
        for _ in resp.iter_raw():
            pass
    assert wire_server.last.wait() == "dropped"


def test_drop_variants(wire_server):
    wire_server.route("GET", "/whole", Reply(b"x" * 100, drop_after=40))  # Content-Length body
    wire_server.route("GET", "/rst", Reply.sse(FRAMES, drop_after=10, drop_reset=True))
    wire_server.route("GET", "/hangup", Reply(hangup=True))
    with httpx.Client(base_url=wire_server.url) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            client.get("/whole")
        with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
            client.get("/rst")
        with pytest.raises(httpx.RemoteProtocolError):
            client.get("/hangup")


@pytest.mark.parametrize("where", ["delay_before_headers", "delay_after_headers", "stall"])
def test_delays_trip_httpx_read_timeout(wire_server, where):
    options = {"stall": {"stall_after": 2, "stall": 3.0}}.get(where, {where: 3.0})
    wire_server.route("GET", "/slow", Reply.sse(FRAMES, **options))
    with (  # (a 3 s delay that ended first would give a body, not the timeout)
        httpx.Client(timeout=httpx.Timeout(5.0, read=0.2)) as client,
        pytest.raises(httpx.ReadTimeout),
        client.stream("GET", wire_server.url_for("/slow")) as resp,
    ):
        for _ in resp.iter_raw():
            pass


def test_delay_first_byte_is_before_headers_and_pause_paces_frames(wire_server):
    """Each wait is seen as a client sees it: a read that waits less than it times out."""
    wire_server.route("GET", "/slow", Reply({"ok": 1}, delay_first_byte=0.5))
    wire_server.route("GET", "/paced", Reply.sse(FRAMES[:5], pause=0.5))
    impatient = httpx.Timeout(5.0, read=0.1)
    with httpx.Client(base_url=wire_server.url, timeout=impatient) as client:
        with pytest.raises(httpx.ReadTimeout):  # no headers within 0.1 s
            client.get("/slow")
        with client.stream("GET", "/paced") as resp:
            pieces = resp.iter_raw()
            assert next(pieces)  # the first frame at once...
            with pytest.raises(httpx.ReadTimeout):  # ...then 0.5 s before the next
                next(pieces)
    with httpx.Client(base_url=wire_server.url) as client:
        assert client.get("/slow").json() == {"ok": 1}
        assert client.get("/paced").content == "".join(FRAMES[:5]).encode()


def test_client_closing_early_is_recorded(wire_server):
    wire_server.route("GET", "/long", Reply.sse(FRAMES * 10, pause=0.01))
    with httpx.Client() as client, client.stream("GET", wire_server.url_for("/long")) as resp:
        next(resp.iter_raw())
    assert wire_server.last.wait(3) == "client_closed"


# -- routes and recording -----------------------------------------------------------------------


def test_route_queue_retry_after_then_ok_then_repeat(wire_server):
    wire_server.route(
        "POST",
        "/v1/chat/completions",
        Reply.json({"error": {"message": "busy"}}, 503, retry_after=2),
        Reply.sse(wf.chat_sse("r", "a")),
    )
    with httpx.Client(base_url=wire_server.url) as client:
        first = client.post("/v1/chat/completions", json={"n": 1})
        assert first.status_code == 503 and first.headers["Retry-After"] == "2"
        assert first.json()["error"]["message"] == "busy"
        for n in (2, 3):  # the last reply repeats
            resp = client.post("/v1/chat/completions", json={"n": n})
            assert resp.status_code == 200 and resp.text.endswith("data: [DONE]\n\n")
    assert wire_server.bodies("/v1/chat/completions") == [{"n": 1}, {"n": 2}, {"n": 3}]


def test_redirects_empty_replies_and_web_pages(wire_server):
    wire_server.route("GET", "/moved", Reply.redirect("http://elsewhere.test/v1", 307))
    wire_server.route("GET", "/empty", Reply(status=204))
    wire_server.route("GET", "/ui", Reply.html("<title>UI</title>"))
    wire_server.route("GET", "/proxy", Reply.nginx_error(504, "Gateway Time-out"))
    with httpx.Client(base_url=wire_server.url) as client:
        moved = client.get("/moved")
        assert moved.status_code == 307 and moved.headers["location"] == "http://elsewhere.test/v1"
        empty = client.get("/empty")
        assert empty.status_code == 204 and "content-length" not in empty.headers
        ui = client.get("/ui")
        assert ui.headers["content-type"].startswith("text/html") and ui.text == "<title>UI</title>"
        proxy = client.get("/proxy")
        assert proxy.status_code == 504 and "<title>504 Gateway Time-out</title>" in proxy.text


def test_recorded_request(wire_server):
    wire_server.route("POST", "/v1beta/models/m:streamGenerateContent", {"ok": True})
    with httpx.Client() as client:
        resp = client.post(
            wire_server.url_for("/v1beta/models/m:streamGenerateContent?alt=sse"),
            json={"contents": [{"parts": [{"text": "hé"}]}]},
            headers={"X-Goog-Api-Key": "k"},
        )
        client.post(wire_server.url_for("/v1beta/models/m:streamGenerateContent"), content=b"\xff")
    assert resp.json() == {"ok": True}
    rec, raw = wire_server.requests
    assert (rec.method, rec.path, rec.query, rec.params) == (
        "POST",
        "/v1beta/models/m:streamGenerateContent",
        "alt=sse",
        {"alt": "sse"},
    )
    assert rec.headers["x-goog-api-key"] == "k" and "CONTENT-TYPE" in rec.headers
    assert rec.json == {"contents": [{"parts": [{"text": "hé"}]}]}
    assert raw.json is None and raw.body_bytes == b"\xff"


def test_unrouted_is_404_and_hooks_see_the_request(wire_server):
    wire_server.route("POST", "/echo", lambda rec: Reply.json({"got": rec.json}, 201))
    with httpx.Client(base_url=wire_server.url) as client:
        missing = client.get("/api/tags")
        assert missing.status_code == 404 and missing.json() == {"error": "no route"}
        echoed = client.post("/echo", json={"a": 1})
        assert echoed.status_code == 201 and echoed.json() == {"got": {"a": 1}}
        assert client.post("/echo", content=b"").json() == {"got": None}  # keep-alive reuse


def test_hook_error_becomes_500_and_is_kept():
    with WireServer() as server:
        server.route("GET", "/boom", lambda rec: 1 / 0)
        assert httpx.get(server.url_for("/boom")).status_code == 500
    assert isinstance(server.errors[0], ZeroDivisionError)


# -- builders ------------------------------------------------------------------------------------


def sse_objects(frames: list[str]) -> list[dict]:
    """A deliberately naive SSE reader for builder checks (comments and [DONE] skipped)."""
    text = "".join(frames).replace("\r\n", "\n")
    out = []
    for event in text.split("\n\n"):
        data = [line[5:].strip() for line in event.split("\n") if line.startswith("data:")]
        if data and data[0] != "[DONE]":
            out.append(json.loads("\n".join(data)))
    return out


def split_chat(frames: list[str], field: str = "reasoning_content") -> tuple[str, str]:
    deltas = [c["choices"][0]["delta"] for c in sse_objects(frames) if c.get("choices")]
    return (
        "".join(d.get(field) or "" for d in deltas),
        "".join(d.get("content") or "" for d in deltas),
    )


REASONING, ANSWER = "The user asks 17*23. 17*20=340, 17*3=51.", "It is **391**."


def test_tokens_round_trip():
    text = "Hé,  well…\n\n17*23 = 391!  "
    assert "".join(wf.tokens(text)) == text and len(wf.tokens(text)) > 5
    assert wf.tokens(["</", "think", ">"]) == ["</", "think", ">"]


@pytest.mark.parametrize(
    ("frames", "field"),
    [
        (wf.chat_sse(REASONING, ANSWER), "reasoning_content"),
        (wf.llamacpp_sse(REASONING, ANSWER), "reasoning_content"),
        (wf.vllm_sse(REASONING, ANSWER), "reasoning"),
        (wf.lmstudio_sse(REASONING, ANSWER, gpt_oss=True), "reasoning"),
        (wf.deepseek_sse(REASONING, ANSWER), "reasoning_content"),
        (wf.openrouter_sse(REASONING, ANSWER), "reasoning"),
        (wf.many_chunks(50), "reasoning_content"),
    ],
)
def test_chat_builders_carry_the_texts(frames, field):
    expected = wf.many_chunks_texts(50) if len(frames) > 50 else (REASONING, ANSWER)
    assert split_chat(frames, field) == expected
    assert frames[-1] == wf.SSE_DONE


def test_inline_builders():
    assert split_chat(wf.chat_sse(REASONING, ANSWER, field=None))[1] == (
        f"<think>{REASONING}</think>{ANSWER}"
    )
    forced = wf.chat_sse(REASONING, ANSWER, field=None, tags_open=False, tag_newlines=True)
    assert split_chat(forced)[1] == f"{REASONING}</think>\n\n{ANSWER}"
    both = split_chat(wf.chat_sse(REASONING, ANSWER, both=True))
    assert both == (REASONING, f"<think>{REASONING}</think>{ANSWER}")
    harmony = split_chat(wf.chat_sse(REASONING, ANSWER, field=None, harmony=True))[1]
    assert harmony.startswith("<|channel|>analysis<|message|>The user")
    assert harmony.endswith(f"<|end|><|start|>assistant<|channel|>final<|message|>{ANSWER}")


def test_llamacpp_none_matches_the_real_capture():
    frames = wf.llamacpp_sse(
        "The capital of France", "The answer is: Paris", reasoning_format="none"
    )
    chunks = sse_objects(frames)
    contents = [c["choices"][0]["delta"].get("content") for c in chunks]
    assert contents[:3] == [None, "<think>\nThe", " capital"]
    assert contents[5:10] == ["</", "think", ">", "\n", "\n"]
    assert list(chunks[0]) == ["choices", "created", "id", "model", "system_fingerprint", "object"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and "timings" in chunks[-1]


def test_chat_usage_extras_and_errors():
    objs = sse_objects(wf.chat_sse("r", "a", usage=True, usage_chunk=True))
    assert objs[-1]["choices"] == [] and objs[-1]["usage"]["completion_tokens"] == 2
    pinged = wf.with_pings(wf.chat_sse("r", "a"), every=1)
    assert pinged[0] == ": ping\n\n" and len(sse_objects(pinged)) == 4
    assert sse_objects([wf.sse_error("boom", code=500)]) == [
        {"error": {"code": 500, "message": "boom", "type": "server_error"}}
    ]
    with pytest.raises(json.JSONDecodeError):
        sse_objects([wf.malformed_frame()])


def test_ollama_builders():
    lines = [json.loads(x) for x in wf.ollama_chat(REASONING, ANSWER)]
    assert "".join(x["message"].get("thinking", "") for x in lines) == REASONING
    assert "".join(x["message"]["content"] for x in lines) == ANSWER
    final = lines[-1]
    assert final["done"] and final["done_reason"] == "stop" and final["total_duration"] > 10**9
    inline = [json.loads(x) for x in wf.ollama_chat("r", "a", inline_tags=True, usage=False)]
    assert "".join(x["message"]["content"] for x in inline) == "<think>r</think>a"
    assert "eval_count" not in inline[-1] and "thinking" not in inline[0]["message"]
    gen = [json.loads(x) for x in wf.ollama_generate("r", "a")]
    assert (gen[0]["thinking"], gen[1]["response"]) == ("r", "a")
    assert json.loads(wf.ollama_error_line("oops")) == {"error": "oops"}
    err = wf.ollama_invalid_think("x")
    assert err.status == 400 and b'invalid think value: \\"x\\"' in err.payload()
    assert wf.ollama_not_found("m").status == 404
    assert wf.ollama_no_thinking("m").payload() == b'{"error": "\\"m\\" does not support thinking"}'


def test_cloud_builders():
    anth = sse_objects(wf.anthropic_sse(REASONING, ANSWER, redacted="opaque"))
    thinking = "".join(e["delta"].get("thinking", "") for e in anth if e["type"].endswith("delta"))
    text = "".join(e["delta"].get("text", "") for e in anth if e["type"] == "content_block_delta")
    assert (thinking, text) == (REASONING, ANSWER)
    assert [e["type"] for e in anth][-2:] == ["message_delta", "message_stop"]
    resp = sse_objects(wf.responses_sse(REASONING, ANSWER))
    summary = "".join(e["delta"] for e in resp if e["type"].endswith("summary_text.delta"))
    answer = "".join(e["delta"] for e in resp if e["type"] == "response.output_text.delta")
    assert (summary, answer) == (REASONING, ANSWER) and resp[-1]["type"] == "response.completed"
    assert [e["sequence_number"] for e in resp] == list(range(len(resp)))
    gem_frames = wf.gemini_sse(REASONING, ANSWER)
    assert all(f.endswith("\r\n\r\n") for f in gem_frames)
    parts = [c["candidates"][0]["content"]["parts"][0] for c in sse_objects(gem_frames)]
    assert "".join(p["text"] for p in parts if p.get("thought")) == REASONING
    assert "".join(p["text"] for p in parts if not p.get("thought")) == ANSWER


def test_many_chunks_over_the_wire_grow_linearly(wire_server):
    def serve_and_read(n: int) -> None:
        frames = wf.many_chunks(n, kind="ollama")
        wire_server.route("POST", "/api/chat", Reply.ndjson(frames))
        with httpx.Client() as client:
            body = client.post(wire_server.url_for("/api/chat")).content
        assert body == "".join(frames).encode() and len(frames) == n + 1

    serve_and_read(25_000)
    assert_linear(serve_and_read, 1000)  # (the server's thread counts: it is this process's)
