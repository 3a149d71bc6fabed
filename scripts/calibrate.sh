#!/usr/bin/env bash
# Refits the device profiles of `sparsetool analyze` to corpus benchmark results and regenerates
# docs/recommendation.md (no GPU needed: it reads bench/results). Corpus results come from
# scripts/gpu-corpus.sh on the GPU machine, quick profiles from scripts/gpu-calibrate.sh
# (`sparsetool calibrate`); see BENCHMARKS.md.
#   bash scripts/calibrate.sh                      the shipped H100 and H200 profiles and the report
#   bash scripts/calibrate.sh DIR OUT.json [NAME]  fit any corpus folder (every run trains) into OUT.json
set -euo pipefail
cd "$(dirname "$0")/.."
EX=(cargo run -q -p sparsetool-analyze --example calibrate --)
if [ $# -ge 2 ]; then
    "${EX[@]}" --results "$1" --model "$2" --name "${3:-$(basename "$2" .json)}" --report /dev/null
    exit
fi
# the H100 corpus: every run of the first folder, those of the later ones replacing it in the formats they
# measured (space-separated; a `--formats jds,sell` run updates JDS and SELL only)
RESULTS=${RESULTS:-bench/results/2026-11-27-h100-corpus-ell-u16 bench/results/2026-11-28-h100-long-rows bench/results/2026-11-28-h100-corpus-jds-sell bench/results/2026-11-28-h100-sell-tail}
REPEAT=${REPEAT:-bench/results/2026-11-22-h100-corpus4-repeat}
# the run-to-run noise: an earlier H100 corpus (533167a) and its repeat with the same binaries
REPEAT_OF=${REPEAT_OF:-bench/results/2026-11-22-h100-corpus4}
# the H200 corpus; '+' joins the folders whose runs replace its own in the formats they measured (here every
# run's JDS and SELL kernels, measured again with the binaries of 5052087, then every kernel on the five power
# laws of 50M entries or more with those of 3b801c7, then every run's JDS kernels with those of 83a6c97)
N=bench/results/2026-11-29-h200-corpus-jds-sell
P=bench/results/2026-11-29-h200-powerlaws
J=bench/results/2026-11-29-h200-corpus-jds3
H200=${H200:-bench/results/2026-11-28-h200-corpus+$N/gen+$N/real+$P+$J/gen+$J/real}
# the quick profiles `sparsetool calibrate` wrote on each GPU, refitted from their saved runs (runs/) with the
# time model's current terms: `bash scripts/calibrate.sh DIR/runs DIR/<gpu>-quick-refit.json <gpu>-quick`
H100_QUICK=${H100_QUICK:-bench/results/2026-11-24-h100-calibrate5/h100-quick-refit.json}
H200_QUICK=${H200_QUICK:-bench/results/2026-11-28-h200-calibrate/h200-quick-refit.json}
# Held out of the fit: half of the real matrices (every other one, by name) and three generated
# families (circuit-like, power-law alpha 2.5 and FEM-like) at every size.
HOLDOUT=${HOLDOUT:-real-add32,real-bcsstk13,real-cryg2500,real-Groebner_id2003_aug,real-luxembourg,real-memplus_rhs1,real-rajat01,real-CA-HepPh,circ-,pl25-,fem-}
"${EX[@]}" \
    $(printf -- '--results %s ' $RESULTS) --repeat "$REPEAT" --repeat-of "$REPEAT_OF" --holdout "$HOLDOUT" \
    --model analyze/calibration/h100.json --name h100 --compare "quick=$H100_QUICK" \
    --gpu "h200=$H200,model=analyze/calibration/h200.json,quick=$H200_QUICK" \
    --report docs/recommendation.md
