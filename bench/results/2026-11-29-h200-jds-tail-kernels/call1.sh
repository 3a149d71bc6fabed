#!/usr/bin/env bash
# ON the GPU machine (call 1): JDS GPU tests on this binary, then an A/B of where JDS's main kernel waits:
# P (embedded kernels: the wait behind the `wait` parameter), A (.device/kvA: the last block waits whatever
# the parameter), W (.device/kvW: no wait), each twice, interleaved, on generated and real matrices.
set -u
export SPARSETOOL_PTX_CACHE=/tmp/ptx
mkdir -p /tmp/b && for f in sparsetool gpu-tests; do gunzip -c .device/bin/$f.gz > /tmp/b/$f; chmod +x /tmp/b/$f; done
for v in A W; do rm -rf .device/kv${v}2; cp -r .device/kv$v .device/kv${v}2; done
SPARSETOOL_TEST_KERNELS=jds SPARSETOOL_REQUIRE_GPU=1 timeout "${TESTS_S:-150}" /tmp/b/gpu-tests --test-threads=8 \
    --nocapture > "$OUT/gpu-tests-jds.log" 2>&1
echo "jds tests rc=$?: $(grep -E '^test result' "$OUT/gpu-tests-jds.log")"
V="P A W P2 A2 W2"
ST=/tmp/b/sparsetool ONLY="${ONLY:-pl22-100k pl22-1m fem-100k fem-1m l3d-1m circ-1m circ-8m pl22-8m}" VARIANTS="$V" \
    FORMATS=jds BUDGET="${BUDGET:-260}" WORK=/tmp/ab OUT=$OUT bash bench/results/2026-11-28-h200-jds-u16/ab.sh
for f in ${REALS:-rajat01 bcsstk13 fidapex6 Groebner_id2003_aug}; do
    for dt in f32 f64; do
        for v in $V; do
            kdir=.device/kv$v; [ -d "$kdir" ] || kdir=
            SPARSETOOL_KERNEL_DIR=$kdir /tmp/b/sparsetool bench fixtures/matrices/real/$f.mtx.gz --device gpu --sweep \
                --json --reps 20 --dtype $dt --formats jds > /tmp/ab/json/real-$f-$dt-cap$v.json 2> /tmp/ab/err ||
                echo "$f $dt $v FAILED: $(tail -c 300 /tmp/ab/err)"
        done
    done
done
tar czf "$OUT/ab.tgz" -C /tmp/ab/json .
python3 scripts/floor-summary.py /tmp/ab/json --formats jds > "$OUT/floor.txt" 2>&1
python3 scripts/floor-summary.py /tmp/ab/json --formats jds --kernels > "$OUT/kernels.txt" 2>&1
cat "$OUT/floor.txt"
