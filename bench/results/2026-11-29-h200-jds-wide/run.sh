#!/usr/bin/env bash
# ON the GPU machine, from the repository root: JDS's plain kernels at 32 registers (O: the binary of ca3cb36,
# .device/old, with the landed jds.cu in .device/kvO) against the binary that runs them at 40 registers on long
# rows in f64 and complex (W: .device/bin, its embedded source), interleaved per matrix; then complex128 versions
# of two matrices (gen --complex); then the GPU tests of the new binary. Results packed into $OUT/wide.tgz.
set -uo pipefail
mkdir -p /tmp/b
for f in .device/bin/*.gz; do gunzip -c "$f" > "/tmp/b/$(basename "$f" .gz)"; done
gunzip -c .device/old/sparsetool-ca3cb36.gz > /tmp/b/sparsetool-old
chmod +x /tmp/b/*
OUT=${OUT:-/tmp/out}
W=/tmp/wide
mkdir -p "$W/c" "$OUT"
S=$(date +%s)
ONLY="${ONLY:-l3d-1m l3d-8m l3d-54m fem-1m fem-8m fem-54m uni-8m uni-51m wide-8m wide-50m empty-8m plu21-75m circ-8m l2d-8m}" \
    VARIANTS="O W" BIN_O=/tmp/b/sparsetool-old DTYPES=f64 FORMATS=jds BUDGET=${BUDGET:-200} WORK=$W/ab OUT=$W/ab-out \
    bash bench/results/2026-11-28-h200-jds-u16/ab.sh
for m in "fem --rows 270000 --nnz-per-row 30" "laplace3d --rows 300000 --nnz-per-row 27"; do
    name=$(cut -d' ' -f1 <<< "$m")
    /tmp/b/sparsetool gen $m --seed 1 --complex -o "$W/z.spb" --force > /dev/null || continue
    for v in O W; do
        bin=/tmp/b/sparsetool; kdir=
        [ $v = O ] && bin=/tmp/b/sparsetool-old && kdir=.device/kvO
        SPARSETOOL_KERNEL_DIR=$kdir $bin bench "$W/z.spb" --device gpu --sweep --json --reps 20 --formats jds \
            > "$W/c/$name-c128-cap$v.json" || echo "$name c128 $v FAILED"
    done
done
echo "benches took $(( $(date +%s) - S ))s"
SPARSETOOL_REQUIRE_GPU=1 timeout 360 /tmp/b/gpu-tests --test-threads=8 > "$W/gpu-tests.log" 2>&1
echo "gpu-tests rc=$? after $(( $(date +%s) - S ))s"; tail -4 "$W/gpu-tests.log"
tar xzf "$W/ab-out/ab.tgz" -C "$W/c"
cp "$W/gpu-tests.log" "$W/c/"
tar czf "$OUT/wide.tgz" -C "$W/c" .
