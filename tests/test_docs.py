"""The docs cannot drift from the code: the flags and providers they list are the real ones,
their generated tables are current, and CI runs the README's own commands."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from reasoning_nb.core.capabilities import snapshot_as_of
from reasoning_nb.notebook.magic import ThinkMagics
from reasoning_nb.providers.catalog import PROVIDERS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
NOTEBOOK = (ROOT / "docs" / "notebook.md").read_text()
PROVIDERS_PAGE = (ROOT / "docs" / "providers.md").read_text()
sys.path.insert(0, str(ROOT / "tools"))
import doc_tables  # noqa: E402  (a script in tools/, not a package)


def magic_flags() -> set[str]:
    parser = ThinkMagics.think.parser
    return {s for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")}


def test_flag_table_matches_the_magic():
    rows = re.findall(r"^\| (`-[^|]+) \|", NOTEBOOK, flags=re.M)
    documented = {flag for row in rows for flag in re.findall(r"`(-[-\w]+)", row)}
    assert documented == magic_flags()


def test_provider_table_matches_the_catalog():
    listed = set(re.findall(r"^\| `([a-z][a-z-]*)` \|", PROVIDERS_PAGE, flags=re.M))
    local = {p for p, info in PROVIDERS.items() if info.local}
    assert local <= listed <= set(PROVIDERS)


def test_tables_are_generated_from_the_code():
    for name, (page, table) in doc_tables.TABLES.items():
        found = doc_tables.block((ROOT / "docs" / page).read_text(), name)
        assert found, f"docs/{page} lost its {name} markers"
        assert found.group(1) == table(), "run: python tools/doc_tables.py"


def test_readme_links_only_to_pages_that_exist():
    for target in re.findall(r"\]\(((?:docs|notebooks)/[^)#]+)", README):
        assert (ROOT / target).exists(), target


def test_readme_dates_the_capability_snapshot_as_its_data_does():
    """A refresh (tools/build_capabilities.py) changes the data's ``as_of``; the README's line
    telling how old the snapshot is must follow."""
    said = re.findall(r"\(https://models\.dev\) snapshot of (\d{4}-\d{2}-\d{2})\.", README)
    assert said == [snapshot_as_of()]


def test_readme_commands_are_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text()
    for name in ("install-and-run", "test"):  # CI reads both commands out of the README
        assert f"<!-- readme:{name} -->" in README
        assert f"readme_command.py {name}" in ci


def test_binder_lands_on_the_gallery():
    import json

    workspace = json.loads((ROOT / "binder" / "workspace.json").read_text())["data"]
    opened = workspace["layout-restorer:data"]["main"]["dock"]["widgets"]
    assert opened == ["notebook:notebooks/gallery.ipynb"]
    assert (ROOT / workspace[opened[0]]["data"]["path"]).exists()
    assert "workspaces import binder/workspace.json" in (ROOT / "binder" / "postBuild").read_text()
