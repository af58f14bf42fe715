"""What a failed HTTP answer says: the server's own text, when to retry, a redirect or a web
page where a stream belongs, an untrusted TLS certificate; each in one sentence to act on."""

from __future__ import annotations

import email.utils
import html
import json
import os
import re
import ssl
import time

import httpx

WEB_PAGES = ("text/html", "application/xhtml+xml")


def server_message(body: bytes | str | dict) -> str:
    """The server's own error text from the usual JSON error shapes, else the raw text."""
    if isinstance(body, (bytes, str)):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            body = json.loads(text)
        except ValueError:
            return " ".join(text.split())[:500]
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, str):
            return err
        if isinstance(err, dict):
            for key in ("message", "msg", "detail", "error"):
                if isinstance(err.get(key), str):
                    return err[key]
        if isinstance(body.get("message"), str):
            return body["message"]
        return json.dumps(body)[:500]
    return str(body)[:500]


RETRY_AFTER_LIMIT = 7 * 24 * 3600.0
"""A longer Retry-After (``inf``, ``1e20``) says nothing a user can act on: read as none."""


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (a number, or an HTTP date read against the
    wall clock ``now``), or None when it says nothing usable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - now
    return max(0.0, seconds) if seconds <= RETRY_AFTER_LIMIT else None


def status_error(response: httpx.Response, body: bytes, wait: float | None, now: float) -> str:
    """The message for an error status: the server's own text (a web page's title, not its
    markup), and when to try again if the server said (Retry-After)."""
    status = response.status_code
    if web_page(response, body):
        text = _web_page_message(response, body)
    else:
        text = server_message(body) or f"HTTP {status}"
    if wait is not None and wait >= 1:
        return f"{text} (HTTP {status}; try again {retry_time(wait, now)})"
    if status == 429:
        return f"{text} (HTTP 429; wait a little, then try again)"
    return text


def retry_time(seconds: float, now: float) -> str:
    """``in 2 min, after 14:05``: how long, and until when on the local clock (``now`` is the
    wall clock, in seconds since the epoch)."""
    if seconds < 120:
        span = f"{seconds:.0f} s"
    elif seconds < 2 * 3600:
        span = f"{-(-seconds // 60):.0f} min"
    else:
        span = f"{seconds / 3600:.1f} h"
    at = time.localtime(now + seconds)
    clock = time.strftime("%H:%M" if seconds < 20 * 3600 else "%Y-%m-%d %H:%M", at)
    return f"in {span}, after {clock}"


def not_a_stream(response: httpx.Response, body: bytes) -> str:
    """Why a 2xx or 3xx answer is not the stream asked for: a redirect (never followed: the key
    must not go to another host), no content, or a web page."""
    where, status = origin(str(response.url)), response.status_code
    answered = f"{where} answered {status} {response.reason_phrase}".rstrip()
    if 300 <= status < 400:
        location = response.headers.get("location", "")[:200] or "no Location given"
        return (
            f"{answered}, a redirect to {location}, not a model stream; the request and its key "
            "were not sent there: if that is the model server, use it as the base URL."
        )
    if status == 204:
        return f"{answered}, an empty reply, not a model stream: check the base URL."
    return _web_page_message(response, body)


def web_page(response: httpx.Response, body: bytes = b"") -> bool:
    """A web page by its content type, or (an error's body) by its first tag."""
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind in WEB_PAGES or body.lstrip()[:5].lower() in (b"<!doc", b"<html")


def _web_page_message(response: httpx.Response, body: bytes) -> str:
    """A web page where a model stream belongs: a web interface or a login page (status 200),
    or a proxy's error page; its title or text in one line, never its markup."""
    status = response.status_code
    page = _page_text(body)
    titled = f" ({page})" if page else ""
    if status < 300:
        where = origin(str(response.url))
        kind = response.headers.get("content-type", "").split(";")[0].strip()
        return (
            f"{where} answered with a web page{titled}, {kind}, not a model stream: point the "
            "base URL at the model server's API (with /v1 for OpenAI-compatible servers), not "
            "at a web interface or a login page."
        )
    fix = "check that the model server behind it runs" if status >= 500 else "check the base URL"
    return (
        f"HTTP {status} with a web page{titled}, from a proxy or web server rather than the "
        f"model server: {fix}."
    )


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
_UNSHOWN = re.compile(rb"<(script|style)[^>]*>.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(rb"<[^>]*>")


def _page_text(page: bytes, limit: int = 100) -> str:
    """A web page in one line: its title, else its text without markup."""
    found = _TITLE.search(page)
    text = found.group(1) if found else _TAG.sub(b" ", _UNSHOWN.sub(b" ", page))
    line = " ".join(html.unescape(text.decode("utf-8", "replace")).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def tls_error(exc: BaseException) -> ssl.SSLError | None:
    """The TLS failure behind a connection error, if that is what it was."""
    seen = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def untrusted(url: str, error: ssl.SSLError) -> str:
    where = origin(url)
    if isinstance(error, ssl.SSLCertVerificationError):
        why = error.verify_message or error.reason or "not verified"
        bundle = os.environ.get("SSL_CERT_FILE")
        using = f" (SSL_CERT_FILE names {bundle}, which does not hold it)" if bundle else ""
        return (
            f"The TLS certificate of {where} is not trusted ({why}){using}: if it is your own "
            "server's or your network's (a company proxy), set SSL_CERT_FILE to a PEM file of "
            "the CA certificates that issued it, then run it again."
        )
    why = error.reason or str(error)
    return (
        f"The TLS handshake with {where} failed ({why}): check that the server speaks HTTPS on "
        "that port, or use http:// if it does not."
    )


def origin(url: str) -> str:
    parts = httpx.URL(url)
    return f"{parts.scheme}://{parts.host}{f':{parts.port}' if parts.port else ''}{parts.path}"
