"""A Chat Completions server that streams at a fixed rate through a fixed number of slots: the
local server of ``benchmarks/sweep.py``.

A request waits for a free slot (as a request waits for one of ``llama-server --parallel N``'s),
then streams ``tokens`` SSE chunks, half ``reasoning_content`` and half ``content``, the i-th
leaving at ``start + (i + 1) * delay`` on the event loop's clock (so the time spent writing never
adds up), then a last chunk with ``usage`` and ``[DONE]``. No client can finish R requests
sooner than ``ceil(R / slots) * tokens * delay``: the server's own limit. Any other request gets
a 404. Stdlib only; it runs in a process of its own (``wire_server.in_child_process``), so its
work never counts in the client's.
"""

from __future__ import annotations

import asyncio
import json

HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
)
NOT_FOUND = (
    b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
)


def limit_s(requests: int, slots: int, tokens: int, delay: float) -> float:
    """The server's own limit: the wall time of ``requests`` with every slot always busy."""
    waves = -(-requests // slots)
    return waves * tokens * delay


def sse(payload: object) -> bytes:
    data = b"data: " + (payload if isinstance(payload, bytes) else json.dumps(payload).encode())
    data += b"\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


def token(i: int, tokens: int) -> bytes:
    field = "reasoning_content" if i < tokens // 2 else "content"
    return sse({"choices": [{"index": 0, "delta": {field: f"t{i} "}}]})


async def stream(writer: asyncio.StreamWriter, tokens: int, delay: float) -> None:
    loop = asyncio.get_running_loop()
    writer.write(HEAD)
    start = loop.time()
    for i in range(tokens):
        await asyncio.sleep(max(0.0, start + (i + 1) * delay - loop.time()))
        writer.write(token(i, tokens))
        await writer.drain()
    usage = {"prompt_tokens": 8, "completion_tokens": tokens}
    writer.write(sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    writer.write(sse({"choices": [], "usage": usage}))
    writer.write(sse(b"[DONE]") + b"0\r\n\r\n")
    await writer.drain()


async def handle(reader, writer, slots: asyncio.Semaphore, tokens: int, delay: float) -> None:
    """One keep-alive connection: request after request until the client closes it."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            await reader.readexactly(length)
            method, path, _ = lines[0].split(" ", 2)
            if method != "POST" or not path.endswith("/chat/completions"):
                writer.write(NOT_FOUND)
                await writer.drain()
                continue
            async with slots:
                await stream(writer, tokens, delay)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass  # the client closed the connection
    finally:
        writer.close()


async def main(slots: int, tokens: int, delay: float, ready, stop) -> None:
    free = asyncio.Semaphore(slots)
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, free, tokens, delay), "127.0.0.1", 0, backlog=1024
    )
    port = server.sockets[0].getsockname()[1]
    ready.put(f"http://127.0.0.1:{port}")
    async with server:
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)


def serve(slots: int, tokens: int, delay: float, ready, stop) -> None:
    """Child process entry (``in_child_process``): serve until ``stop`` is set."""
    asyncio.run(main(slots, tokens, delay, ready, stop))
