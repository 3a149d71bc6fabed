#!/usr/bin/env bash
# ON the GPU machine, from the repository root (binaries of scripts/gpu-build.sh gzipped in .device/bin), the
# steps of this folder's calls 2 and 3, each where its variable is set; everything packed into $OUT/run.tgz.
#   TESTS=1                 the GPU tests
#   JDS_ONLY="m1 m2 ..."    `bench --sweep --formats jds` on these corpus matrices, f32 and f64 (variant N)
#   SELL_ONLY="m1 ..."      `--formats sell` on these, one run per variant of SELL_VARIANTS (.device/kv<V>/sell.cu
#                           replaces the embedded source where that folder exists), value types SELL_DTYPES
#   ALL_ONLY="m1 ..."       every format (`coo,csr,ell,hyb,jds,sell`), f32 and f64
#   T17=1                   issue 17's table (scripts/gpu-test.sh)
# (bench/results/2026-11-28-h200-jds-u16/ab.sh runs the benches.)
set -uo pipefail
AB=bench/results/2026-11-28-h200-jds-u16/ab.sh
START=$(date +%s)
FINAL=${OUT:-/tmp/out}
W=/tmp/run
mkdir -p /tmp/b $W "$FINAL"
for f in .device/bin/*.gz; do gunzip -c "$f" > "/tmp/b/$(basename "$f" .gz)"; done
chmod +x /tmp/b/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/nvidia-smi.txt
left() { echo $(( ${TOTAL:-540} - ($(date +%s) - START) )); }
if [ "${TESTS:-0}" = 1 ]; then
    SPARSETOOL_REQUIRE_GPU=1 /tmp/b/gpu-tests --test-threads=4 > $W/gpu-tests.log 2>&1
    echo "gpu-tests rc=$? at $(( $(date +%s) - START ))s"; grep -E "^test result|FAILED|panicked" $W/gpu-tests.log | head
fi
bench() { # tag, matrices, formats, variants, dtypes, budget
    [ -n "$2" ] || return 0
    WORK=/tmp/ab-$1 OUT=$W/x ONLY="$2" FORMATS=$3 VARIANTS="$4" DTYPES="$5" BUDGET=$6 bash $AB | tail -2
    cp -r /tmp/ab-$1/json $W/$1-json
    python3 scripts/floor-summary.py /tmp/ab-$1/json --formats "$3" > $W/$1-floor.txt 2>&1
}
bench jds "${JDS_ONLY:-}" jds N "f32 f64" $(( $(left) / 2 ))
bench sell "${SELL_ONLY:-}" sell "${SELL_VARIANTS:-O N}" "${SELL_DTYPES:-f32 f64}" ${SELL_BUDGET:-$(( $(left) - 40 ))}
bench all "${ALL_ONLY:-}" coo,csr,ell,hyb,jds,sell N "f32 f64" 60
[ -d $W/all-json ] && python3 scripts/corpus-summary.py $W/all-json > $W/all-summary.txt 2>&1
rm -rf $W/x
if [ "${T17:-0}" = 1 ]; then
    MATRICES="laplace2d:16800000:5:0 laplace3d:2100000:27:0 uniform:4200000:16:0 powerlaw:4200000:16:2.1" \
        SKIP_TESTS=1 SKIP_SANITIZER=1 SKIP_MEASURE=1 REPS=20 PACK=1 OUT=$W/t17 BUDGET=170 \
        bash scripts/gpu-test.sh /tmp/b/sparsetool /bin/true 2>&1 | tail -14
fi
tar czf "$FINAL/run.tgz" -C $W .
cat $W/*-floor.txt $W/all-summary.txt 2>/dev/null
echo "total $(( $(date +%s) - START ))s"
