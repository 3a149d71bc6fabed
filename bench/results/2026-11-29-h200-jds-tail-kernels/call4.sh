#!/usr/bin/env bash
# ON the GPU machine (call 4): the two tail kernels (spmv_jds_<t>_tail after the main kernel, _tail_first with
# the head sums). The GPU tests over the JDS kernels; an A/B of N (this binary), B (07ab816, .device/b07) and OLD
# (5052087, .device/old), each twice; then JDS over the whole corpus with N (real matrices, then generated).
set -u
export SPARSETOOL_PTX_CACHE=/tmp/ptx
mkdir -p /tmp/b && for f in sparsetool gpu-tests; do gunzip -c .device/bin/$f.gz > /tmp/b/$f; chmod +x /tmp/b/$f; done
gunzip -c .device/old/sparsetool.gz > /tmp/b/sparsetool-old && gunzip -c .device/b07/sparsetool.gz > /tmp/b/sparsetool-b07
chmod +x /tmp/b/sparsetool-*
SPARSETOOL_TEST_KERNELS=jds SPARSETOOL_REQUIRE_GPU=1 timeout 150 /tmp/b/gpu-tests --test-threads=8 \
    --nocapture > "$OUT/gpu-tests-jds.log" 2>&1
echo "jds tests rc=$?: $(grep -E '^test result' "$OUT/gpu-tests-jds.log")"
gzip -n -9 "$OUT/gpu-tests-jds.log"
V="N B OLD N2 B2 OLD2"
export BIN_OLD=/tmp/b/sparsetool-old BIN_OLD2=/tmp/b/sparsetool-old BIN_B=/tmp/b/sparsetool-b07 BIN_B2=/tmp/b/sparsetool-b07
mkdir -p "$OUT/ab"
ST=/tmp/b/sparsetool ONLY="${ONLY:-pl22-100k pl22-1m fem-100k fem-1m circ-1m circ-8m pl22-8m}" VARIANTS="$V" \
    FORMATS=jds BUDGET="${BUDGET:-150}" WORK=/tmp/ab OUT="$OUT/ab" bash bench/results/2026-11-28-h200-jds-u16/ab.sh \
    > /dev/null
source bench/results/2026-11-29-h200-jds-tail-kernels/real-ab.sh
real_ab "$OUT/ab"
mkdir -p "$OUT/real" "$OUT/gen"
ST=/tmp/b/sparsetool ONLY="real-CA-HepPh real-Groebner_id2003_aug real-add32 real-arrow real-bcsstk13 real-ca-AstroPh real-cha real-cryg2500 real-fidapex6 real-jagmesh7 real-lp_ship04l real-luxembourg real-memplus real-memplus_rhs1 real-plskz362 real-rajat01 real-sparse-images-1024_subset real-young1c" FORMATS=jds REAL=1 BUDGET=70 WORK=/tmp/c2 OUT="$OUT/real" bash scripts/gpu-corpus.sh | tail -1
ST=/tmp/b/sparsetool FORMATS=jds REAL=0 BUDGET=${GEN_S:-200} WORK=/tmp/c OUT="$OUT/gen" bash scripts/gpu-corpus.sh | tail -1
cat "$OUT/ab/floor.txt"
