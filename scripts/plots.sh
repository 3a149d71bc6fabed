#!/usr/bin/env bash
# Regenerates the plots in docs/img from the bundled matrices with
# `sparsetool analyze --plot` (the images README.md shows).
#
#   scripts/plots.sh [OUT_DIR]      default OUT_DIR: docs/img
#
# SPARSETOOL=path/to/sparsetool uses that binary; otherwise the release
# binary is built first. cli/tests/plots.rs runs this script into a
# temporary directory and compares the result with the committed images.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/docs/img}"
bin="${SPARSETOOL:-}"
if [[ -z "$bin" ]]; then
    (cd "$root" && cargo build --release -q -p sparsetool)
    bin="${CARGO_TARGET_DIR:-$root/target}/release/sparsetool"
fi
mkdir -p "$out"
# name of the bundled matrix, and the image file
plots=(
    "memplus memplus.png"
    "arrow arrow.svg"
)
for p in "${plots[@]}"; do
    read -r name file <<<"$p"
    "$bin" analyze "$root/fixtures/matrices/real/$name.mtx.gz" --plot "$out/$file" --force >/dev/null
    echo "wrote $out/$file"
done
