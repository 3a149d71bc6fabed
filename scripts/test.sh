#!/usr/bin/env bash
# Runs every test: the Rust test suites of all crates, the interop checks
# against NumPy/SciPy, and the Python package (python/: built into .venv with
# maturin, then its pytest suite). A Python venv in .venv is created on first use.
# GPU tests report "SKIPPED: no CUDA device" on machines without a GPU; run
# scripts/gpu-test.sh on a GPU machine for those.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${SPARSETOOL_PYTHON:-}" ]; then
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import numpy, scipy' 2>/dev/null; then
    if command -v python3 >/dev/null; then
      echo "== creating .venv with numpy and scipy (interop tests)"
      python3 -m venv .venv
      .venv/bin/python -m pip install -q --disable-pip-version-check numpy scipy maturin pytest
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

# The Python package: built into the venv (maturin's `wheel` profile: release
# speed, a shorter build than the workspace's LTO release), then pytest.
if [ -n "${SPARSETOOL_PYTHON:-}" ]; then
  echo "== Python package: build (maturin develop) and test (pytest python/tests)"
  py="$SPARSETOOL_PYTHON"
  if ! "$py" -c 'import maturin, pytest' 2>/dev/null; then
    "$py" -m pip install -q --disable-pip-version-check maturin pytest
  fi
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
  if "$py" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)'; then
    # A venv: an editable install; the extension lands in python/sparsetool/.
    VIRTUAL_ENV="$("$py" -c 'import sys; print(sys.prefix)')" \
      "$py" -m maturin develop --quiet --profile wheel -m python/Cargo.toml
  else
    "$py" -m maturin build --quiet --profile wheel -m python/Cargo.toml -o "$CARGO_TARGET_DIR/wheels"
    "$py" -m pip install -q --force-reinstall --no-deps "$CARGO_TARGET_DIR"/wheels/sparsetool-*.whl
  fi
  "$py" -m pytest -q -rs python/tests
elif [ -n "${SPARSETOOL_REQUIRE_PYTHON:-}" ]; then
  echo "SPARSETOOL_REQUIRE_PYTHON is set but no Python was found for the package tests" >&2
  exit 1
fi
