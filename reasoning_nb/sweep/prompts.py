"""A prompt set, read from what a user has at hand: a list, a DataFrame or one of its columns,
or a CSV, JSONL or text file. Each prompt keeps its expected answer, if the set has one, and
the set's other columns (a grader may need them)."""

from __future__ import annotations

import csv
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError

PROMPT = "prompt"
EXPECTED = "expected"
FILES = (".csv", ".jsonl", ".ndjson", ".txt")
WHAT = (
    "a list of strings, a DataFrame with a 'prompt' column (or one of its columns), or the "
    "path of a CSV, JSONL or text file"
)


@dataclass(frozen=True)
class Prompt:
    text: str
    expected: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    sample: int = 0
    """How many times the same text came before it in the set: a repeat is a sample of its own
    (its own key in the replay cache), not a replay of the first."""


def load(source: Any, expected: str | None = None) -> list[Prompt]:
    """The prompts of ``source``; ``expected`` names the column that holds the expected answers
    (default: ``expected`` where there is one)."""
    if isinstance(source, str | os.PathLike):
        records = _read_file(Path(source))
    elif hasattr(source, "columns") and hasattr(source, "to_dict"):  # a pandas DataFrame
        records = source.to_dict("records")
    elif hasattr(source, "tolist"):  # a pandas Series, a numpy array
        records = source.tolist()
    elif isinstance(source, Iterable) and not isinstance(source, bytes | Mapping):
        records = list(source)
    else:
        raise ConfigError(f"The prompts must be {WHAT}, not {type(source).__name__}.")
    if not records:
        raise ConfigError(f"The prompt set is empty: pass {WHAT}, with at least one prompt.")
    prompts = [_prompt(record, place, expected) for place, record in enumerate(records)]
    seen: Counter[str] = Counter()
    for place, prompt in enumerate(prompts):
        if seen[prompt.text]:
            prompts[place] = replace(prompt, sample=seen[prompt.text])
        seen[prompt.text] += 1
    return prompts


def _prompt(record: Any, place: int, expected: str | None) -> Prompt:
    if isinstance(record, str):
        record = {PROMPT: record}
        if expected is not None:
            raise ConfigError(
                f"The grader names the column {expected!r}, but the prompts are plain strings: "
                "pass a table (a DataFrame, CSV or JSONL) with that column."
            )
    if not isinstance(record, Mapping):
        raise ConfigError(f"Prompt {place} is of type {type(record).__name__}: each must be text.")
    record = dict(record)
    if PROMPT not in record and len(record) == 1:  # a one-column table: that column
        record = {PROMPT: next(iter(record.values()))}
    text = record.pop(PROMPT, None)
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(
            f"Prompt {place} has no text (its {PROMPT!r} column): fill it in or drop the row."
        )
    column = expected or EXPECTED
    if expected is not None and column not in record:
        raise ConfigError(
            f"Prompt {place} has no {column!r} column, which the grader names: add it, or name "
            "the column that holds the expected answers."
        )
    answer = record.pop(column, None)
    if answer is not None and not isinstance(answer, str):
        answer = None if answer != answer else str(answer)  # NaN: a blank cell
    return Prompt(text, answer, record)


def _read_file(path: Path) -> list[Any]:
    suffix = path.suffix.lower()
    if suffix not in FILES:
        raise ConfigError(
            f"{str(path)[:80]!r} is not a prompt file ({', '.join(FILES)}): pass {WHAT}."
        )
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"The prompt file {path} could not be read ({exc.strerror}).") from None
    if suffix == ".csv":
        return list(csv.DictReader(text.splitlines()))
    if suffix == ".txt":
        return [line for line in text.splitlines() if line.strip()]
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except ValueError:
                raise ConfigError(
                    f"Line {number} of {path} is not JSON: each line of a JSONL file is one "
                    "prompt, a string or an object with a 'prompt' field."
                ) from None
    return records
