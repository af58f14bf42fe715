"""The README cannot drift from the code: flags and providers it lists are the real ones."""

from __future__ import annotations

import re
from pathlib import Path

from reasoning_nb.notebook.magic import ThinkMagics
from reasoning_nb.providers.catalog import PROVIDERS

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def magic_flags() -> set[str]:
    parser = ThinkMagics.think.parser
    return {s for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")}


def test_readme_flag_table_matches_the_magic():
    rows = re.findall(r"^\| (`-[^|]+) \|", README, flags=re.M)
    documented = {flag for row in rows for flag in re.findall(r"`(-[-\w]+)", row)}
    assert documented == magic_flags()


def test_readme_provider_table_matches_the_catalog():
    listed = set(re.findall(r"^\| `([a-z][a-z-]*)` \|", README, flags=re.M))
    local = {p for p, info in PROVIDERS.items() if info.local}
    assert local <= listed <= set(PROVIDERS)


def generated(name: str) -> str:
    """The README's block between the ``name`` markers."""
    block = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", README, re.S)
    assert block, f"README lost its {name} markers"
    return block.group(1)


def test_readme_tables_are_generated_from_the_code():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    from readme_tables import flag_table, preset_table

    assert generated("preset-table") == preset_table(), "run: python tools/readme_tables.py"
    assert generated("flag-table") == flag_table(), "run: python tools/readme_tables.py"


def test_readme_commands_are_what_ci_runs():
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    for name in ("install-and-run", "test"):  # CI reads both commands out of the README
        assert f"<!-- readme:{name} -->" in README
        assert f"readme_command.py {name}" in ci
