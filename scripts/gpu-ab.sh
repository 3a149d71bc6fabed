#!/usr/bin/env bash
# ON the GPU machine: an A/B of one environment setting with the same binaries. Runs scripts/gpu-corpus.sh
# (its ONLY, FORMATS, DTYPES, REAL, REPS apply) ROUNDS times in each setting, alternating A and B so that drift
# hits both, and packs the results into $OUT/ab.tgz (folders a1, b1, a2, b2, ...). Then prints, per run and
# kernel, the medians in A and B (the fastest of the rounds) and B/A, and per run our best against cuSPARSE's
# best in each (scripts/ab-summary.py).
#   A="SPARSETOOL_PDL=0" B="" ROUNDS=2 ONLY="pl18-8m circ-8m" FORMATS=hyb,csr bash scripts/gpu-ab.sh
set -uo pipefail
FINAL=${OUT:-/tmp/out}
ROUNDS=${ROUNDS:-2}
AB=/tmp/sparsetool-ab
rm -rf "$AB"
mkdir -p "$AB" "$FINAL"
for i in $(seq 1 "$ROUNDS"); do
    for side in a b; do
        if [ "$side" = a ]; then setting=${A:-}; else setting=${B:-}; fi
        echo "== round $i, $side: ${setting:-(no setting)}"
        # shellcheck disable=SC2086
        env $setting OUT="$AB/$side$i" WORK="/tmp/sparsetool-ab-work" BUDGET="${BUDGET:-240}" \
            bash scripts/gpu-corpus.sh > "$AB/$side$i.log" 2>&1
        tail -1 "$AB/$side$i.log"
        mkdir -p "$AB/$side$i/json" && tar xzf "$AB/$side$i/corpus.tgz" -C "$AB/$side$i/json"
    done
done
printf 'A: %s\nB: %s\n' "${A:-(none)}" "${B:-(none)}" > "$AB/settings.txt"
tar czf "$FINAL/ab.tgz" -C "$AB" --exclude='corpus.tgz' .
python3 scripts/ab-summary.py "$AB"
