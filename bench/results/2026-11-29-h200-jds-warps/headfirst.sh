#!/usr/bin/env bash
# ON the GPU machine, from the repository root: JDS's long-row tail launched first, into a slot per long row,
# with the main kernel after it as its dependent launch (N, D), against the binary before (O: the tail after the
# main kernel, adding into y). Per matrix of ONLY (bench/corpus.tsv) and value type, `bench --sweep --formats jds`
# once per variant, interleaved:
#   O  .device/old/sparsetool.gz, SPARSETOOL_JDS_ORDER=window (its default order then)
#   N  .device/bin/sparsetool.gz (main kernel dependent below 4M entries or without chunks, as before)
#   D  N with SPARSETOOL_AB_JDS_DEP=1 (always dependent)
# TESTS=1 runs the GPU tests first. Results <matrix>-<dtype>-cap<V>.json in $OUT/headfirst.tgz.
set -uo pipefail
source scripts/corpus-gen.sh
START=$(date +%s)
W=/tmp/hf
mkdir -p /tmp/b /tmp/o $W/json "${OUT:-/tmp/out}"
for f in .device/bin/*.gz; do gunzip -c "$f" > "/tmp/b/$(basename "$f" .gz)"; done
gunzip -c .device/old/sparsetool.gz > /tmp/o/sparsetool
chmod +x /tmp/b/* /tmp/o/*
if [ "${TESTS:-0}" = 1 ]; then
    SPARSETOOL_REQUIRE_GPU=1 /tmp/b/gpu-tests --test-threads=4 > $W/gpu-tests.log 2>&1
    echo "gpu-tests rc=$? at $(( $(date +%s) - START ))s"; grep -E "^test result|FAILED|panicked" $W/gpu-tests.log | head
fi
for name in ${ONLY:-}; do
    if [ $(( $(date +%s) - START )) -ge "${BUDGET:-500}" ]; then echo "budget: skipped $name"; continue; fi
    corpus_gen "$name" $W/m.spb > /dev/null || { echo "$name: gen FAILED"; continue; }
    for dt in f32 f64; do
        for v in O N D; do
            case $v in
                O) SPARSETOOL_JDS_ORDER=window /tmp/o/sparsetool bench $W/m.spb --device gpu --sweep --json \
                       --reps 20 --dtype $dt --formats jds ;;
                N) /tmp/b/sparsetool bench $W/m.spb --device gpu --sweep --json --reps 20 --dtype $dt --formats jds ;;
                D) SPARSETOOL_AB_JDS_DEP=1 /tmp/b/sparsetool bench $W/m.spb --device gpu --sweep --json --reps 20 \
                       --dtype $dt --formats jds ;;
            esac > "$W/json/$name-$dt-cap$v.json" 2> $W/err || echo "$name $dt $v FAILED: $(tail -c 300 $W/err)"
        done
    done
    echo "$name done at $(( $(date +%s) - START ))s"
done
rm -f $W/m.spb
tar czf "${OUT:-/tmp/out}/headfirst.tgz" -C $W .
python3 scripts/floor-summary.py $W/json --formats jds
echo "total $(( $(date +%s) - START ))s"
