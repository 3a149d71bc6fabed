#!/usr/bin/env bash
# ON the GPU machine: calls 1 and 2 (`bash ab.sh 1`, `bash ab.sh 2`), JDS's tail bands, kernel sources through
# SPARSETOOL_KERNEL_DIR (.device/kv<V>, the diffs in this folder) over the binaries of 33f9eca; O is their embedded
# (landed) source, a variant ending in 2 the same source run again. Call 1 first runs the GPU tests over the JDS
# kernels with BW's source. Then the A/B over the generated matrices and the real ones (README.md).
set -u
export SPARSETOOL_PTX_CACHE=/tmp/ptx
mkdir -p /tmp/b && for f in sparsetool gpu-tests; do gunzip -c .device/bin/$f.gz > /tmp/b/$f; chmod +x /tmp/b/$f; done
if [ "${1:-}" = 1 ]; then
    V="O B BW H O2 B2 BW2"
    GEN="l3d-8m fem-8m pl22-1m pl22-8m circ-1m circ-8m circ-50m dense-8m plu16-59m" BUDGET=300
    REALS="arrow memplus rajat01 Groebner_id2003_aug CA-HepPh bcsstk13"
    SPARSETOOL_KERNEL_DIR=$PWD/.device/kvBW SPARSETOOL_TEST_KERNELS=jds SPARSETOOL_REQUIRE_GPU=1 timeout 150 \
        /tmp/b/gpu-tests --test-threads=8 --nocapture > "$OUT/gpu-tests-jds-BW.log" 2>&1
    echo "jds tests (BW) rc=$?: $(grep -E '^test result' "$OUT/gpu-tests-jds-BW.log")"
    gzip -n -9 "$OUT/gpu-tests-jds-BW.log"
else
    V="O C CW D O2 CW2 D2"
    GEN="l2d-1m l3d-54m pl22-100k pl22-1m pl22-8m circ-1m circ-8m circ-50m empty-8m plu16-59m plu24-56m" BUDGET=330
    REALS="arrow memplus rajat01 Groebner_id2003_aug CA-HepPh bcsstk13 fidapex6 add32"
fi
for v in $V; do [ "${v%2}" != "$v" ] && ln -sfn "kv${v%2}" ".device/kv$v"; done
mkdir -p "$OUT/ab"
ST=/tmp/b/sparsetool ONLY="$GEN" VARIANTS="$V" FORMATS=jds BUDGET=$BUDGET WORK=/tmp/ab OUT="$OUT/ab" \
    bash bench/results/2026-11-28-h200-jds-u16/ab.sh | grep -v done
export V REALS
bash -c 'source bench/results/2026-11-29-h200-jds-tail-kernels/real-ab.sh; real_ab "$OUT/ab"'
cat "$OUT/ab/floor.txt"
