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
source bench/results/2026-11-29-h200-jds-tail-kernels/real-ab.sh
real_ab "$OUT"
cat "$OUT/floor.txt"
