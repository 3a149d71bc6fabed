#!/usr/bin/env bash
# Refits the time model of `sparsetool analyze` to the corpus benchmark results and regenerates
# docs/recommendation.md (no GPU needed: it reads bench/results). The results come from
# scripts/gpu-corpus.sh on the GPU machine (see BENCHMARKS.md, issue 8).
#   bash scripts/calibrate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RESULTS=${RESULTS:-bench/results/2026-11-22-h100-corpus5}
REPEAT=${REPEAT:-bench/results/2026-11-22-h100-corpus4-repeat}
# the run the repeat repeats, with the same binaries (533167a; corpus5 adds only the f64 L2 hint of the COO kernels)
REPEAT_OF=${REPEAT_OF:-bench/results/2026-11-22-h100-corpus4}
# Held out of the fit: half of the real matrices (every other one, by name) and three generated
# families (circuit-like, power-law alpha 2.5 and FEM-like) at every size.
HOLDOUT=${HOLDOUT:-real-add32,real-bcsstk13,real-cryg2500,real-Groebner_id2003_aug,real-luxembourg,real-memplus_rhs1,real-rajat01,real-CA-HepPh,circ-,pl25-,fem-}
cargo run --release -q -p sparsetool-analyze --example calibrate -- \
    --results "$RESULTS" --repeat "$REPEAT" --repeat-of "$REPEAT_OF" --holdout "$HOLDOUT" \
    --model analyze/calibration/h100.json --report docs/recommendation.md
