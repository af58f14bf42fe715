"""Prompt sets from what a user has at hand, and the one-sentence errors of a bad one."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from reasoning_nb.errors import ConfigError
from reasoning_nb.sweep.prompts import Prompt, load


def test_a_list_of_strings():
    assert load(["a", "b"]) == [Prompt("a"), Prompt("b")]


def test_a_frame_keeps_expected_and_its_other_columns():
    table = pd.DataFrame(
        {"prompt": ["2+2?", "3+3?"], "expected": ["4", 6], "topic": ["add", "add"]}
    )
    assert load(table) == [
        Prompt("2+2?", "4", {"topic": "add"}),
        Prompt("3+3?", "6", {"topic": "add"}),
    ]
    assert load(table["prompt"]) == [Prompt("2+2?"), Prompt("3+3?")]


def test_a_named_expected_column_and_a_blank_cell():
    table = pd.DataFrame({"prompt": ["x", "y"], "gold": ["1", None]})
    assert [p.expected for p in load(table, "gold")] == ["1", None]
    with pytest.raises(ConfigError, match="no 'truth' column"):
        load(table, "truth")


def test_csv_jsonl_and_text_files(tmp_path):
    csv_file = tmp_path / "set.csv"
    csv_file.write_text('prompt,expected\n"Café, ☕?",yes\nWhy?,because\n', encoding="utf-8")
    assert load(csv_file) == [Prompt("Café, ☕?", "yes"), Prompt("Why?", "because")]
    jsonl = tmp_path / "set.jsonl"
    jsonl.write_text(json.dumps({"prompt": "a", "expected": "b"}) + "\n\n" + json.dumps("c") + "\n")
    assert load(str(jsonl)) == [Prompt("a", "b"), Prompt("c")]
    text = tmp_path / "set.txt"
    text.write_text("one\n\n two \n")
    assert load(text) == [Prompt("one"), Prompt(" two ")]


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ([], "empty"),
        ([""], "no text"),
        ([{"prompt": None}], "no text"),
        ([3], "each must be text"),
        ("notes.md", "not a prompt file"),
        (42, "not int"),
    ],
)
def test_bad_prompt_sets_say_what_to_do(source, says):
    with pytest.raises(ConfigError, match=says):
        load(source)


def test_a_missing_or_broken_file(tmp_path):
    with pytest.raises(ConfigError, match="could not be read"):
        load(tmp_path / "nope.csv")
    broken = tmp_path / "b.jsonl"
    broken.write_text('{"prompt": "a"}\n{oops\n')
    with pytest.raises(ConfigError, match="Line 2 of"):
        load(broken)
