#!/usr/bin/env bash
# Runs every test: the Rust test suites of all crates, plus the interop checks
# against NumPy/SciPy (a Python venv in .venv is created on first use).
# GPU tests report "SKIPPED: no CUDA device" on machines without a GPU; run
# scripts/gpu-test.sh on a GPU machine for those.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${SPARSETOOL_PYTHON:-}" ]; then
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import numpy, scipy' 2>/dev/null; then
    if command -v python3 >/dev/null; then
      echo "== creating .venv with numpy and scipy (interop tests)"
      python3 -m venv .venv
      .venv/bin/python -m pip install -q --disable-pip-version-check numpy scipy
    fi
  fi
  if [ -x .venv/bin/python ]; then export SPARSETOOL_PYTHON="$PWD/.venv/bin/python"; fi
fi

echo "== cargo test --workspace"
cargo test --workspace "$@"

# cargo hides the output of passing tests: show plainly whether the GPU tests
# ran on a device or were skipped for lack of one.
echo "== GPU tests: device or skipped?"
cargo test -p sparsetool-gpu --test gpu -- --nocapture --test-threads=1 2>&1 \
  | grep -E "SKIPPED|^test result" | sed "s/^[.]*//" | sort | uniq -c
