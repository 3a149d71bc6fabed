#!/usr/bin/env bash
# ON the GPU machine (call 4): the binaries of the final commit (the comments of jds.cu corrected, same SASS; the
# GPU test of the tail first now also on a matrix of one window, whose main blocks go in sorted order). The GPU
# tests over the JDS kernels.
set -u
mkdir -p /tmp/b && for f in sparsetool gpu-tests; do gunzip -c .device/bin/$f.gz > /tmp/b/$f; chmod +x /tmp/b/$f; done
SPARSETOOL_TEST_KERNELS=jds SPARSETOOL_REQUIRE_GPU=1 timeout 200 /tmp/b/gpu-tests --test-threads=8 \
    --nocapture > "$OUT/gpu-tests-jds.log" 2>&1
echo "jds tests rc=$?: $(grep -E '^test result' "$OUT/gpu-tests-jds.log")"
grep -E "^test |panicked|FAILED" "$OUT/gpu-tests-jds.log" | head -40
gzip -n -9 "$OUT/gpu-tests-jds.log"
