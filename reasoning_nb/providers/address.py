"""The one reading of a base URL (``normalise``) and of where a key may go (``api_key_for``).

Where a key goes: a key from the environment is sent only to an address the environment pairs it
with, the provider's *home*: its default address, the one in its own base-URL variable
(``OLLAMA_HOST``, ``OPENAI_BASE_URL``) and ``key_homes``; or to this machine (a loopback
address: the key does not leave it, and a local gateway or test server is the user's own). Any
other address, such as a ``base_url=`` pointing at a colleague's server, gets a key only when the
user names one for it: ``api_key=`` (the key) or ``api_key_env=`` (the variable to read). The
exception is ``own_server_key``: ``LLAMACPP_API_KEY`` and ``VLLM_API_KEY`` are the key of the
user's own server, wherever it runs, not of an account on a fixed host, so they go to any address
of that provider. So ``openai-compatible`` sends ``OPENAI_API_KEY`` (the contract's "if set") to a
server on this machine, never to another one unless named.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigError
from .profile import Profile


def base_url_for(info: Profile, base_url: str | None = None) -> str:
    """The base URL to call: explicit > provider env var > default; normalised."""
    url = base_url or (os.environ.get(info.base_url_env) if info.base_url_env else None)
    url = url or info.base_url
    if not url:
        raise ConfigError(
            f"Provider {info.id!r} has no default address; pass base_url='http://HOST:PORT/v1' "
            "(or --base-url in the magic)."
        )
    return normalise(url, info)


_THIS_MACHINE = {"0.0.0.0": "127.0.0.1", "::": "::1"}  # bind addresses, not places to connect to
_HOST_NAME = re.compile(r"[\w-]+(\.[\w-]+)*\.?")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNDER_V1 = ("openai_chat", "openai_responses", "local")  # the OpenAI-style APIs' base path


def normalise(url: str, info: Profile | None = None) -> str:
    """The one reading of a base URL: the request URL, the cache key, discovery and ``--list``
    all start from it. ``http://`` when it names no scheme; a bind address (``0.0.0.0``,
    ``[::]``) is this machine; the host in lower case, the scheme's own port left out, no
    trailing slash, no fragment (a query is refused); ``/v1`` when a Chat-Completions-style base
    names no path; and ``bare_host_port``'s forms for its provider. ``info=None`` (the provider
    is not known yet) reads it with no provider's forms. A ConfigError names what is wrong,
    before any I/O."""
    text = url.strip() if isinstance(url, str) else ""
    if not text.isprintable() or " " in text:  # urlsplit would silently drop a tab or newline
        raise _refused(text, "it holds a space or a control character")
    bare = "://" not in text
    if bare:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise _refused(text, str(exc).rstrip(".").lower()) from None
    forms = info is not None and info.bare_host_port is not None
    host = parts.hostname or ("127.0.0.1" if forms else "")
    if parts.scheme not in _DEFAULT_PORTS:
        raise _refused(text, f"the scheme {parts.scheme!r} is not http or https")
    if not host:
        raise _refused(text, "it names no host")
    if not _is_host(host):
        raise _refused(text, f"{host!r} is not a host name or IP address")
    if port == 0:
        raise _refused(text, "port 0 is not a port a server can listen on")
    if parts.query:  # the endpoint's path is appended to the base: a query would swallow it
        raise _refused(text, "a base URL takes no query; pass a key with api_key= or api_key_env=")
    if port is None and bare and forms:
        port = info.bare_host_port
    if port == _DEFAULT_PORTS[parts.scheme]:
        port = None
    host = _THIS_MACHINE.get(host, host)
    netloc = f"[{host}]" if ":" in host else host
    netloc += f":{port}" if port is not None else ""
    userinfo, at, _ = parts.netloc.rpartition("@")
    path = parts.path.rstrip("/")
    if not path and info is not None and info.protocol in _UNDER_V1:
        path = "/v1"
    return urlunsplit((parts.scheme, userinfo + at + netloc, path, "", ""))


def _is_host(host: str) -> bool:
    if ":" in host:
        try:
            ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            return False
        return True
    return _HOST_NAME.fullmatch(host) is not None


def shown(url: str) -> str:
    """A base URL for a message: never its credentials (``user:key@`` or a ``?key=`` query)."""
    url = re.sub(r"//[^/@]*@", "//…@", url)
    return re.sub(r"\?.*", "?…", url, flags=re.DOTALL)


def _refused(url: str, problem: str) -> ConfigError:
    return ConfigError(
        f"The base URL {shown(url)!r} cannot be used ({problem}); pass one like "
        "http://127.0.0.1:8080/v1."
    )


def api_key_for(
    info: Profile,
    base_url: str,
    api_key: str | None = None,
    api_key_env: str | None = None,
) -> str | None:
    """The key to send to ``base_url`` (normalised): ``api_key=`` > the variable ``api_key_env``
    names > the provider's first key variable that is set, where it belongs (module docstring)."""
    if api_key:
        return header_safe(api_key, "api_key=")
    if api_key_env:
        value = os.environ.get(api_key_env, "")
        if not value.strip():
            raise ConfigError(
                f"api_key_env names {api_key_env}, which is not set in the environment; set it "
                "or pass api_key=."
            )
        return header_safe(value, api_key_env)
    found = [name for name in info.key_envs if os.environ.get(name, "").strip()]
    belongs = key_belongs(info, base_url)
    if found and belongs:
        return header_safe(os.environ[found[0]], found[0])
    if info.local:  # a local server takes a key only where one is set
        return None
    envs = " or ".join(info.key_envs)
    if belongs:
        raise ConfigError(
            f"No API key for {info.id}: set {envs} in the environment or pass api_key=."
        )
    name = (found or info.key_envs)[0]
    homes = " or ".join(map(shown, _homes(info)))
    raise ConfigError(
        f"No API key is sent to {shown(base_url)}: a key in {envs} goes only to {homes}; pass "
        f"api_key_env='{name}' (--api-key-env {name}) to send it there, or pass api_key=."
    )


def refused_key(info: Profile, base_url: str, sent: bool, message: str) -> str:
    """What to do when ``base_url`` refused a request (401/403) for want of the right key."""
    if sent:
        envs = " or ".join(info.key_envs) or "api_key= or api_key_env="
        return f"The server refused the API key ({message}): check {envs}."
    held = [n for n in info.key_envs if os.environ.get(n, "").strip()]
    if held and not key_belongs(info, base_url):  # set, but not this address's to have
        name = held[0]
        why = f"{name} is set, but a key from the environment goes only to its provider's address"
        return (
            f"{shown(base_url)} asks for an API key ({message}) and none was sent: {why}; pass "
            f"api_key_env='{name}' (--api-key-env {name}) to send it there."
        )
    return (
        f"{shown(base_url)} asks for an API key ({message}) and none was sent: pass "
        "api_key_env='NAME' (--api-key-env NAME) naming the variable that holds it, or api_key=."
    )


def key_belongs(info: Profile, base_url: str) -> bool:
    """Whether the provider's env key may go to ``base_url`` without the user naming it."""
    if info.own_server_key or on_this_machine(base_url):
        return True
    origin = _origin(base_url)
    return any(_origin(home) == origin for home in _homes(info))


@lru_cache(maxsize=256)  # (asked several times a run; a sweep asks it thousands of times)
def on_this_machine(url: str) -> bool:
    """Does ``url`` name a loopback address (``localhost``, 127.0.0.0/8, ``::1``)?"""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _homes(info: Profile) -> list[str]:
    """Where the provider's env key belongs, normalised; a malformed variable adds nothing."""
    env = os.environ.get(info.base_url_env) if info.base_url_env else None
    homes = []
    for url in filter(None, (info.base_url, env, *info.key_homes)):
        with contextlib.suppress(ConfigError):  # a malformed variable: base_url_for says so
            homes.append(normalise(url, info))
    return homes


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port


def header_safe(key: str, source: str) -> str:
    """Keys read from files often end in a newline: strip it. A key no header can carry is
    refused here, naming where it came from and never its value (an HTTP library's own error
    would quote it)."""
    key = key.strip()
    if not (key.isascii() and key.isprintable()):
        raise ConfigError(
            f"The API key in {source} holds a control character or non-ASCII text, which no "
            "HTTP header can carry; set it to the key alone."
        )
    return key
