#!/usr/bin/env bash
# ON the GPU machine, from the repository root: an A/B with one binary (from scripts/gpu-build.sh, carried in
# .device/bin) over the corpus's small matrices (bench/corpus.tsv) and the real ones: `bench --sweep --json`
# in f32 and f64 once per value of an environment variable, each as <run>-<dtype>-cap<value>.json
# (scripts/floor-summary.py puts each value in a column of its own), all packed into $OUT/ab.tgz.
#   AB_VAR=SPARSETOOL_PDL AB_VALUES="def 0"   the variable and its values (def: unset)
#   FORMATS=jds,sell    bench --formats (default every one)       REPS=20    BUDGET=540 seconds
#   GEN="l2d-20k fem-100k"   the generated matrices (default: every corpus matrix of up to ~1M entries)
set -uo pipefail
source scripts/corpus-gen.sh
ST=${ST:-.device/bin/sparsetool}
W=${WORK:-/tmp/sparsetool-ab}
GEN=${GEN:-l2d-20k l3d-1m fem-100k fem-1m uni-100k uni-1m pl22-100k pl22-1m circ-1m empty-1m dense-1m}
START=$(date +%s)
rm -rf "$W"; mkdir -p "$W/json" "$W/mat" "${OUT:-/tmp}"; chmod +x "$ST" 2>/dev/null || true
export SPARSETOOL_PTX_CACHE=$W/ptx
run() { # name file
    local dt v
    for dt in f32 f64; do for v in ${AB_VALUES:?}; do
        if [ $(( $(date +%s) - START )) -gt "${BUDGET:-540}" ]; then echo "budget: $1 $dt $v skipped"; continue; fi
        if [ "$v" = def ]; then unset "${AB_VAR:?}"; else export "${AB_VAR:?}=$v"; fi
        "$ST" bench "$2" --device gpu --sweep --json --reps "${REPS:-20}" --dtype "$dt" ${FORMATS:+--formats "$FORMATS"} \
            > "$W/json/$1-$dt-cap$v.json" 2> "$W/json/$1-$dt-cap$v.err" || echo "$1 $dt $v FAILED"
    done; done
    unset "${AB_VAR:?}"
}
while read -r name _; do
    case " $GEN " in *" $name "*) ;; *) continue ;; esac
    corpus_gen "$name" "$W/mat/$name.spb" > /dev/null && run "$name" "$W/mat/$name.spb"
done < bench/corpus.tsv
for f in fixtures/matrices/real/*.mtx fixtures/matrices/real/*.mtx.gz; do
    gzip -cdf "$f" | head -1 | grep -qi complex && continue
    run "real-$(basename "$f" | sed 's/\.mtx\(\.gz\)\?$//')" "$f"
done
echo "done in $(( $(date +%s) - START ))s"
tar czf "${OUT:-/tmp}/ab.tgz" -C "$W/json" .
