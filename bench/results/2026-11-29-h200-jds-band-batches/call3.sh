#!/usr/bin/env bash
# ON the GPU machine (call 3): the binaries of the landed change (CW of calls 1 and 2, built by
# scripts/gpu-build.sh). The GPU tests over the JDS kernels; then JDS over the whole corpus (real matrices, then
# generated), for issue 17's target 2 and the H200 profile's refit.
set -u
mkdir -p /tmp/b && for f in sparsetool gpu-tests; do gunzip -c .device/bin/$f.gz > /tmp/b/$f; chmod +x /tmp/b/$f; done
SPARSETOOL_TEST_KERNELS=jds SPARSETOOL_REQUIRE_GPU=1 timeout 150 /tmp/b/gpu-tests --test-threads=8 \
    --nocapture > "$OUT/gpu-tests-jds.log" 2>&1
echo "jds tests rc=$?: $(grep -E '^test result' "$OUT/gpu-tests-jds.log")"
gzip -n -9 "$OUT/gpu-tests-jds.log"
mkdir -p "$OUT/real" "$OUT/gen"
ST=/tmp/b/sparsetool ONLY="real-CA-HepPh real-Groebner_id2003_aug real-add32 real-arrow real-bcsstk13 real-ca-AstroPh real-cha real-cryg2500 real-fidapex6 real-jagmesh7 real-lp_ship04l real-luxembourg real-memplus real-memplus_rhs1 real-plskz362 real-rajat01 real-sparse-images-1024_subset real-young1c" FORMATS=jds REAL=1 BUDGET=70 WORK=/tmp/c2 OUT="$OUT/real" bash scripts/gpu-corpus.sh | tail -1
ST=/tmp/b/sparsetool FORMATS=jds REAL=0 BUDGET=${GEN_S:-200} WORK=/tmp/c OUT="$OUT/gen" bash scripts/gpu-corpus.sh | tail -1
