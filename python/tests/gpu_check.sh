#!/usr/bin/env bash
# GPU checks of the Python package on a machine without Rust (the GPU box):
# needs Python >= 3.9 with NumPy (CuPy for the device-vector checks; SciPy
# for COO/CSR/CSC) and the extension built here by scripts/test.sh, carried
# in the working tree at the git-ignored path
#   python/sparsetool/_native.abi3.so
# Run from anywhere:  bash python/tests/gpu_check.sh   (PYTHON=... to choose)
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! ls python/sparsetool/_native*.so >/dev/null 2>&1; then
  echo "python/sparsetool/_native.abi3.so is missing: build it with scripts/test.sh (or" >&2
  echo "maturin develop --profile wheel -m python/Cargo.toml) and carry that path" >&2
  exit 1
fi
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" exec "${PYTHON:-python3}" python/tests/gpu_check.py
