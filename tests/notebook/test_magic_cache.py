"""The cache flags and configuration of %%think, in an in-process shell (text path) against the
wire server: --cache, c.ThinkMagics.cache, --refresh, --pace, --clear-cache (a corrupt file
too), c.ThinkMagics.log, c.ThinkMagics.cache_max_mb."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
import wire_fixtures as wf
from provider_harness import serve_chat
from shell_cell import think_cell
from traitlets.config import Config
from wire_server import Reply

from reasoning_nb import ConfigError
from reasoning_nb.notebook.magic import ThinkMagics
from reasoning_nb.notebook.runners import METADATA_KEY
from reasoning_nb.store import db as store

CHAT = "/v1/chat/completions"


@pytest.fixture
def magics(ip, tmp_path, monkeypatch):
    monkeypatch.setenv(store.DB_ENV, str(tmp_path / "cache.sqlite3"))
    monkeypatch.delenv("REASONING_NB_LOG", raising=False)
    monkeypatch.delenv("REASONING_NB_MODEL", raising=False)
    magics = ip.magics_manager.registry["ThinkMagics"]
    yield magics
    magics.cache, magics.log, magics.cache_max_mb = False, False, 200.0


def saved(cap) -> dict:
    [output] = [o for o in cap.outputs if METADATA_KEY in o.metadata]
    return output.metadata[METADATA_KEY]


def posts(server) -> int:
    return len(server.requests_to(CHAT, "POST"))


def test_cache_flag_replays_and_refresh_asks_again(ip, magics, wire_server):
    serve_chat(wire_server, ("r1", "one"), ("r2", "two"))
    line = f"--model llamacpp:m --base-url {wire_server.url}"
    first = saved(think_cell(ip, f"{line} --cache", "Q"))
    again = think_cell(ip, f"{line} --cache --pace recorded", "Q")
    assert "one" in again.stdout and posts(wire_server) == 1
    mark = saved(again).pop("replay")
    assert mark == {"recorded_at": first["started_at"], "pace": "recorded"}
    assert saved(again) | {"replay": None} == first | {"replay": None}
    assert saved(think_cell(ip, line, "Q"))["answer"] == "two"  # no --cache: asks
    assert saved(think_cell(ip, f"{line} --refresh", "Q"))["answer"] == "two"
    assert posts(wire_server) == 3
    replay = saved(think_cell(ip, f"{line} --cache", "Q"))
    assert replay["answer"] == "two" and "replay" in replay and posts(wire_server) == 3


def test_configuration_turns_cache_and_log_on(ip, magics, wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("r", "a")))
    magics.cache, magics.log = True, True
    line = f"--model llamacpp:m --base-url {wire_server.url}"
    think_cell(ip, line, "Q")
    assert "replay" in saved(think_cell(ip, line, "Q")) and posts(wire_server) == 1
    with sqlite3.connect(store.path()) as conn:
        assert conn.execute("SELECT replay FROM runs ORDER BY id").fetchall() == [(0,), (1,)]


def test_clear_cache_line_form(ip, magics, wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("r", "a")))
    line = f"--model llamacpp:m --base-url {wire_server.url} --cache"
    think_cell(ip, line, "Q")
    ip.run_line_magic("think", "--clear-cache")
    assert store.info()["entries"] == 0
    assert "replay" not in saved(think_cell(ip, line, "Q")) and posts(wire_server) == 2


def test_bad_pace_is_one_line(ip, magics):
    cap = think_cell(ip, "--model llamacpp:m --pace slow", "Q")
    assert cap.error.startswith("%think:") and "slow" in cap.error


def test_clear_cache_on_a_corrupt_database_is_one_line(ip, magics):
    """The magic answers as the command line does, in the same words, with no traceback."""
    store.path().write_bytes(b"not a database, " * 100)
    result = ip.run_cell("%think --clear-cache")
    lines = result.error_in_exec._render_traceback_()
    assert len(lines) == 1 and lines[0].startswith("%think: The cache and log database")
    assert str(store.path()) in lines[0] and "delete the file" in lines[0]
    cli = [sys.executable, "-m", "reasoning_nb", "cache", "clear"]
    said = subprocess.run(cli, capture_output=True, text=True).stdout.strip()
    assert said.removeprefix("error: ") == lines[0].removeprefix("%think: ")


def test_cache_max_mb_inf_means_no_cap(ip, magics, wire_server):
    wire_server.route("POST", CHAT, Reply.sse(wf.chat_sse("r", "a")))
    magics.cache_max_mb = float("inf")
    line = f"--model llamacpp:m --base-url {wire_server.url} --cache"
    first = think_cell(ip, line, "Q")
    assert first.error == "" and saved(first)["status"] == "complete"
    assert "replay" in saved(think_cell(ip, line, "Q")) and posts(wire_server) == 1


@pytest.mark.parametrize("bad", [float("nan"), -1.0])
def test_a_bad_cache_max_mb_is_a_config_error_when_set(ip, magics, bad):
    with pytest.raises(ConfigError, match="cache_max_mb"):
        magics.cache_max_mb = bad
    assert magics.cache_max_mb == 200.0
    with pytest.raises(ConfigError, match="cache_max_mb"):  # c.ThinkMagics.cache_max_mb
        ThinkMagics(shell=ip, config=Config({"ThinkMagics": {"cache_max_mb": bad}}))
