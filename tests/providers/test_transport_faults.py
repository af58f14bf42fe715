"""Answers that are not a model stream, over real sockets: a redirect, a 204, a web page, an
nginx error page, a long Retry-After, a reset before any byte, an untrusted TLS certificate, one
endless line, and a server that goes silent before or after its first byte.

Each must end as one ``ProviderError`` that names what happened and what to do, never as an
empty ``truncated`` run; only what nothing of the answer has reached is retried.
"""

from __future__ import annotations

import re
import shutil
import ssl
import subprocess
import time

import pytest
import wire_fixtures as wf
from needs import unavailable
from scaling import assert_linear
from wire_server import Reply, WireServer

from reasoning_nb import ConfigError, ProviderError, think
from reasoning_nb.config import defaults
from reasoning_nb.providers import http_errors, transport
from reasoning_nb.providers.framing import Framer
from reasoning_nb.providers.transport import Transport

CHAT = "/v1/chat/completions"
OLLAMA = "/api/chat"
KEY = "sk-test-0123456789-secret"
REASONING, ANSWER = "17 × 23 = 340 + 51 = 391.", "391"

# model -> the path its request goes to (base_url = the wire server)
STREAMING = {
    "llamacpp:qwen3": CHAT,
    "vllm:qwen3": CHAT,
    "openai-compatible:qwen3": CHAT,
    "openai:gpt-5.1": "/v1/responses",
    "anthropic:claude-sonnet-4-5": "/v1/messages",
    "gemini:gemini-2.5-flash": "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    "ollama:qwen3": OLLAMA,
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ("REASONING_NB_MODEL", "OLLAMA_HOST", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(defaults, "model", None)
    monkeypatch.setattr(Transport, "_backoff", lambda self, attempt: 0.001)


def ask(server, model: str = "llamacpp:qwen3", **kw):
    return think("What is 17 × 23?", model=model, base_url=server.url, api_key=KEY, **kw)


def failure(server, model: str = "llamacpp:qwen3", **kw) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        ask(server, model, **kw)
    err = info.value
    assert KEY not in err.message and "\n" not in err.message
    return err


# -- 3: a redirect or a 204 is not an empty run ----------------------------------------------------


@pytest.mark.parametrize("status", [302, 307])
@pytest.mark.parametrize("model", ["llamacpp:qwen3", "ollama:qwen3"])
def test_a_redirect_names_its_status_and_location_and_is_not_followed(wire_server, model, status):
    with WireServer() as elsewhere:
        target = elsewhere.url_for(STREAMING[model])
        wire_server.route("POST", STREAMING[model], Reply.redirect(target, status))
        err = failure(wire_server, model)
        assert elsewhere.requests == []  # neither the request nor its key went there
    assert err.status == status and err.trace is None
    assert f"answered {status}" in err.message and target in err.message
    assert "base URL" in err.message


def test_a_204_is_an_error_not_an_empty_run(wire_server):
    wire_server.route("POST", CHAT, Reply(status=204))
    err = failure(wire_server)
    assert err.status == 204 and "204 No Content" in err.message


# -- 4: a web page with status 200 -----------------------------------------------------------------

WEB_UI = "<!doctype html><html><head><title>llama.cpp - chat</title></head><body>…</body></html>"


@pytest.mark.parametrize("model", list(STREAMING))
def test_a_web_page_says_so_and_names_its_content_type(wire_server, model):
    wire_server.route("POST", STREAMING[model], Reply.html(WEB_UI))
    err = failure(wire_server, model)
    assert "web page" in err.message and "text/html" in err.message
    assert "llama.cpp - chat" in err.message and "<" not in err.message
    assert len(wire_server.requests_to(STREAMING[model])) == 1


# -- 10 and 11: what an error status shows ---------------------------------------------------------


def test_a_long_retry_after_says_when_to_retry(wire_server):
    wire_server.route("POST", CHAT, Reply.json({"error": "rate limited"}, 429, retry_after=120))
    err = failure(wire_server)
    assert err.status == 429 and "rate limited" in err.message
    assert re.search(r"HTTP 429; try again in 2 min, after \d\d:\d\d\)", err.message)
    assert len(wire_server.requests_to(CHAT)) == 1  # reported, not slept through


@pytest.fixture
def utc(monkeypatch):
    """The local clock reads UTC, so the hour a message names is known."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


NEW_YEAR = 1_767_225_600.0  # 2026-01-01 00:00 UTC


@pytest.mark.parametrize(
    "seconds,said",
    [
        (45, "in 45 s, after 00:00"),
        (120, "in 2 min, after 00:02"),
        (7200, "in 2.0 h, after 02:00"),
        (30 * 3600, "in 30.0 h, after 2026-01-02 06:00"),
    ],
)
def test_the_time_to_retry_names_how_long_and_until_when(utc, seconds, said):
    assert http_errors.retry_time(seconds, NEW_YEAR) == said


@pytest.mark.parametrize(
    "header,seconds",
    [
        ("120", 120.0),
        ("Thu, 01 Jan 2026 00:01:00 GMT", 60.0),
        ("Wed, 31 Dec 2025 23:00:00 GMT", 0.0),  # a date past: at once
        ("soon", None),
        ("inf", None),
    ],
)
def test_retry_after_reads_seconds_or_a_date_against_the_clock(header, seconds):
    assert http_errors.retry_after(header, NEW_YEAR) == seconds


@pytest.mark.parametrize("value", ["inf", "1e20", "nan"])
def test_a_retry_after_past_any_sense_is_read_as_none(wire_server, value):
    wire_server.route("POST", CHAT, Reply.json({"error": "rate limited"}, 429, retry_after=value))
    err = failure(wire_server)  # a ProviderError, not an OverflowError from the clock
    assert err.status == 429 and "wait a little, then try again" in err.message


def test_a_hosted_rate_limit_keeps_the_time_to_retry(wire_server):
    body = wf.openai_error_body("You exceeded your current quota.", code="insufficient_quota")
    wire_server.route("POST", "/v1/responses", Reply.json(body, 429, retry_after=7200))
    err = failure(wire_server, "openai:gpt-5.1")
    assert "rate limit or quota" in err.message and "current quota" in err.message
    assert "try again in 2.0 h, after" in err.message


def test_an_nginx_error_page_shows_its_status_and_title_not_markup(wire_server):
    wire_server.route("POST", CHAT, Reply.nginx_error(502, "Bad Gateway"))
    err = failure(wire_server)
    assert err.status == 502
    assert "HTTP 502" in err.message and "502 Bad Gateway" in err.message
    assert "<" not in err.message and "nginx" not in err.message
    assert len(wire_server.requests_to(CHAT)) == 4  # 502 is retried, then reported


def test_an_error_page_without_a_title_shows_its_text(wire_server):
    page = "<html><body><h1>Forbidden</h1><p>Sign in &amp; retry</p></body></html>"
    wire_server.route("POST", CHAT, Reply.html(page, 403))
    assert "Forbidden Sign in & retry" in failure(wire_server).message


# -- 12: a reset before any byte -------------------------------------------------------------------


@pytest.mark.parametrize("reset", [True, False], ids=["reset", "closed"])
def test_a_connection_closed_before_any_byte_is_named_and_retried(wire_server, reset):
    wire_server.route("POST", CHAT, Reply(hangup=True, drop_reset=reset))
    err = failure(wire_server)
    assert err.status is None and err.trace is None
    assert "closed the connection before it answered" in err.message
    assert len(wire_server.requests_to(CHAT)) == 4


def test_a_reset_then_an_answer_is_a_complete_run(wire_server):
    answer = Reply.sse(wf.llamacpp_sse(REASONING, ANSWER))
    wire_server.route("POST", CHAT, Reply(hangup=True, drop_reset=True), answer)
    trace = ask(wire_server)
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")


# -- 6: TLS ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 made now: (certificate file, key file)."""
    if shutil.which("openssl") is None:
        unavailable("the openssl command is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    command = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    command += " -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1"
    subprocess.run(
        [*command.split(), "-keyout", key, "-out", cert], check=True, capture_output=True
    )
    return cert, key


@pytest.fixture
def tls_server(certificate):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    with WireServer(tls=context) as server:
        server.route("POST", CHAT, Reply.sse(wf.llamacpp_sse(REASONING, ANSWER)))
        yield server
    assert not server.errors


def test_an_untrusted_certificate_is_named_and_not_retried(tls_server):
    err = failure(tls_server)
    assert err.status is None and err.trace is None
    assert "certificate" in err.message and "self-signed" in err.message
    assert "SSL_CERT_FILE" in err.message and "is the server running" not in err.message
    assert tls_server.connections == 1 and tls_server.requests == []


def test_ssl_cert_file_set_after_a_failure_is_trusted(tls_server, certificate, monkeypatch):
    failure(tls_server)  # as a user meets it first
    monkeypatch.setenv("SSL_CERT_FILE", certificate[0])
    trace = ask(tls_server)
    assert (trace.reasoning, trace.answer, trace.status) == (REASONING, ANSWER, "complete")


def test_a_bundle_that_lacks_the_issuer_is_named(tls_server, monkeypatch):
    import certifi

    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    assert f"SSL_CERT_FILE names {certifi.where()}" in failure(tls_server).message


def test_an_unreadable_ssl_cert_file_is_a_config_error(tls_server, tmp_path, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    with pytest.raises(ConfigError, match="SSL_CERT_FILE"):
        ask(tls_server)
    assert tls_server.connections == 0


def test_https_to_a_plain_http_server_names_the_handshake(wire_server):
    url = wire_server.url.replace("http://", "https://")
    with pytest.raises(ProviderError) as info:
        think("hi", model="llamacpp:qwen3", base_url=url)
    assert "TLS handshake" in info.value.message and "http://" in info.value.message
    assert wire_server.connections == 1


# -- 15: one endless line --------------------------------------------------------------------------


def test_one_long_line_is_read_in_linear_time():
    piece = b"x" * 4096

    def read_one_line(pieces: int) -> None:
        framer = Framer("ndjson")
        for _ in range(pieces):
            assert framer.feed(piece) == []
        [(line, _event)] = framer.feed(b"\n")
        assert len(line) == pieces * len(piece)

    assert_linear(read_one_line, 256)


def test_a_line_past_the_frame_cap_ends_the_run_keeping_what_arrived(wire_server):
    frames = wf.ollama_chat(REASONING, ANSWER)[:-2]  # the reasoning, then a runaway line
    frames.append('{"message": {"content": "' + "x" * 17 * 2**20)  # the cap is 16 MiB
    wire_server.route(
        "POST", OLLAMA, Reply.ndjson(frames, chunking="random", seed=1, max_piece=65536)
    )
    err = failure(wire_server, "ollama:qwen3")
    assert "MiB without a line end" in err.message
    assert err.trace is not None and err.trace.reasoning == REASONING


# -- 19: a silent server ---------------------------------------------------------------------------


def test_silence_before_the_first_byte_names_that_wait(wire_server):
    silent = Reply.sse(wf.llamacpp_sse(REASONING, ANSWER), delay_first_byte=30)
    wire_server.route("POST", CHAT, silent)
    err = failure(wire_server, timeout=0.3)
    assert "0.3 s" in err.message and "the wait for the first byte" in err.message
    assert "timeout=" in err.message and err.trace is None


def test_silence_after_the_first_bytes_names_the_wait_between_bytes(wire_server):
    frames = wf.llamacpp_sse(REASONING, ANSWER)
    wire_server.route("POST", CHAT, Reply.sse(frames, stall_after=4, stall=30))
    err = failure(wire_server, timeout=0.3)
    assert "0.3 s" in err.message and "the wait between bytes" in err.message
    assert err.trace is not None and REASONING.startswith(err.trace.reasoning)


@pytest.mark.parametrize(
    "model,path,wait",
    [("anthropic:claude-sonnet-4-5", "/v1/messages", "0.2 s"), ("vllm:qwen3", CHAT, "0.4 s")],
)
def test_hosted_apis_wait_less_than_local_servers(wire_server, monkeypatch, model, path, wait):
    monkeypatch.setattr(transport, "HOSTED_WAIT", 0.2)
    monkeypatch.setattr(transport, "LOCAL_WAIT", 0.4)
    wire_server.route("POST", path, Reply(delay_first_byte=30))
    err = failure(wire_server, model)
    assert f"for {wait}, the wait for the first byte" in err.message


def test_the_default_waits():
    assert Transport(local=True).wait() == 600.0
    assert Transport(local=False).wait() == 300.0
    assert Transport(timeout=7).wait() == 7.0
