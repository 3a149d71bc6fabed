#!/usr/bin/env bash
# Multi-GPU SpMV on the GPU machine (issue 18; 4 and 8 parts on 2 GPUs for
# issue 22). Runs from the repository root with binaries built here by
# scripts/gpu-build.sh and carried in:
#   bash scripts/gpu-dist.sh .device/bin/sparsetool .device/bin/gpu-dist-tests
# 1. the multi-GPU tests (gpu/tests/distributed.rs) with SPARSETOOL_REQUIRE_GPUS=2;
# 2. `sparsetool gen` (here, on the GPU machine) and `sparsetool bench --gpus`:
#    - 2D Laplacian, >= 400M entries, 2 parts on 2 GPUs   (target >= 1.85x the best 1-GPU layout)
#    - uncapped power-law, >= 200M entries, 2 parts        (target >= 1.5x)
#    - 4 and 8 parts on 2 GPUs (2 and 4 per device) on a smaller Laplacian and
#      power-law, each beside an equal-rows partition (issue 22's comparison);
# 3. a summary table, printed last; raw JSON and logs under $OUT.
# The whole run keeps to BUDGET seconds (default 420); a step that no longer
# fits is skipped and says so.
# Optional last step (BIG=1, off by default: about 4 minutes): a 2D Laplacian of
# 2,199,878,976 entries (f32, more than 2^31), on 2 GPUs beside its one-GPU
# baseline with 64-bit offsets (one baseline layout: --baselines 1).
# Optional step (MANY=1, issue 22; for 4 or more GPUs, about 8 minutes on four
# H200s: run it with BUDGET=500 or more): every
# GPU count 1, 2, 4, ... up to the devices present in one `bench --gpus LIST`
# run per matrix, beside one one-GPU baseline:
#    - 2D Laplacian, 1,619,928,000 entries (f32; 32-bit offsets fit, so the
#      one-GPU baseline is the layout the time model ranks first);
#    - uncapped power law, 827,623,165 entries (f64), with equal-rows partitions;
#    - then, while the budget lasts, 2 parts per GPU on every GPU.
#   MANY=1 runs the multi-GPU tests on every device (SPARSETOOL_REQUIRE_GPUS =
#   the devices present) after the benchmarks, limited to TEST_FILTER (default:
#   the tests that use every device) and to the budget left.
# Knobs: REPS (default 20), SCALE (multiplies matrix sizes, default 1), BUDGET,
# DTYPES (default "f64"), SKIP_TESTS=1, SKIP_SCALING=1 (steps 2 and 3), BIG=1,
# MANY=1, TEST_FILTER, WORK (default /tmp/sparsetool-dist).
set -uo pipefail
ST=${1:?usage: gpu-dist.sh SPARSETOOL_BIN DIST_TEST_BIN}
DT=${2:?usage: gpu-dist.sh SPARSETOOL_BIN DIST_TEST_BIN}
OUT=${OUT:-$(mktemp -d)}
REPS=${REPS:-20}
SCALE=${SCALE:-1}
DTYPES=${DTYPES:-f64}
WORK=${WORK:-/tmp/sparsetool-dist}
BUDGET=${BUDGET:-420}
mkdir -p "$OUT" "$WORK"
chmod +x "$ST" "$DT" 2>/dev/null || true
START=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - START))); }
cap() { local want=$1 l; l=$(left); [ "$l" -lt "$want" ] && want=$l; [ "$want" -lt 1 ] && want=1; echo "$want"; }
status=0
summary=()

# Never NVLink multicast (NVLS); the library sets it too when unset.
export NCCL_NVLS_ENABLE=0
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

# cudarc dlopens `libnccl.so` (not `libnccl.so.2`): link the real library
# under that name into a directory first on LD_LIBRARY_PATH.
find_nccl() {
    local p
    p=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 /{print $NF; exit}')
    [ -n "$p" ] && [ -e "$p" ] && { echo "$p"; return; }
    for d in ${LD_LIBRARY_PATH//:/ } /usr/lib/x86_64-linux-gnu /usr/local/cuda/lib64 /usr/lib64; do
        [ -e "$d/libnccl.so.2" ] && { echo "$d/libnccl.so.2"; return; }
    done
    p=$(python3 - <<'PY' 2>/dev/null
import glob, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()] + sys.path
for r in roots:
    for f in glob.glob(f"{r}/nvidia/nccl/lib/libnccl.so*"):
        print(f)
        raise SystemExit
PY
)
    [ -n "$p" ] && { echo "$p"; return; }
    find / -name 'libnccl.so.2' -not -path '*/proc/*' 2>/dev/null | head -1
}
NCCL_LIB=$(find_nccl)
if [ -n "$NCCL_LIB" ]; then
    mkdir -p "$WORK/nccl-lib"
    ln -sf "$NCCL_LIB" "$WORK/nccl-lib/libnccl.so"
    ln -sf "$NCCL_LIB" "$WORK/nccl-lib/libnccl.so.2"
    export LD_LIBRARY_PATH="$WORK/nccl-lib:$(dirname "$NCCL_LIB")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    summary+=("nccl: $NCCL_LIB")
else
    summary+=("nccl: libnccl.so.2 NOT FOUND (multi-device runs will fail)")
    status=1
fi
echo "NCCL: ${NCCL_LIB:-not found}; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "$OUT/nvidia-smi.txt" 2>&1 || true
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1 || true
cat "$OUT/nvidia-smi.txt"

NDEV=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)

# The multi-GPU tests, failing (not skipping) with fewer than REQUIRE devices:
# run_tests REQUIRE CAP [test name filter...]
run_tests() {
    local need=$1 want=$2; shift 2
    local log="$OUT/dist-tests-$need.log"
    if [ "$(left)" -lt 30 ]; then
        summary+=("multi-GPU tests on $need: skipped (time budget spent)")
        return
    fi
    echo "== multi-GPU tests (SPARSETOOL_REQUIRE_GPUS=$need) $*"
    SPARSETOOL_REQUIRE_GPUS=$need timeout "$(cap "$want")" "$DT" --test-threads=1 --nocapture "$@" > "$log" 2>&1 \
        && { summary+=("multi-GPU tests on $need: $(grep -aE '^test result' "$log" | tail -1)"); return; }
    status=1
    summary+=("multi-GPU tests on $need: FAILED or cut by the budget (see $(basename "$log"))")
    grep -aE 'panicked|^test .* FAILED|SKIPPED' "$log" | head -30
}
[ "${SKIP_TESTS:-0}" = 1 ] || [ "${MANY:-0}" = 1 ] || run_tests 2 300

# gen KIND ROWS K [extra gen flags...] -> path of the generated .spb
gen() {
    local kind=$1 rows=$2 k=$3; shift 3
    # the extra flags (--dtype f32, --alpha 2.0) are part of the cached name
    local tag; tag=$(printf '%s' "$*" | tr -c 'A-Za-z0-9.' '_')
    local f="$WORK/$kind-$rows-$k${tag:+-$tag}.spb"
    if [ ! -s "$f" ]; then
        echo "== gen $kind rows=$rows k=$k $*" >&2
        local t0; t0=$(date +%s)
        if ! timeout "$(cap 150)" "$ST" gen "$kind" --rows "$rows" --nnz-per-row "$k" --seed 1 "$@" \
            -o "$f" --force >> "$OUT/gen.log" 2>&1; then
            rm -f "$f"
            return 1
        fi
        echo "   $(($(date +%s) - t0)) s, $(du -h "$f" | cut -f1)" >&2
    fi
    echo "$f"
}

# bench NAME FILE DTYPE GPUS PARTS [extra bench flags]; PARTS `scaling`: GPUS
# is a list of counts (1,2,4), one part per GPU, all in one run
bench() {
    local name=$1 f=$2 dt=$3 g=$4 p=$5; shift 5
    local j="$OUT/dist-$name-$dt-p$p.json" partsarg=(--parts "$p")
    [ "$p" = scaling ] && { j="$OUT/scale-$name-$dt.json"; partsarg=(); }
    if [ "$(left)" -lt 30 ]; then
        summary+=("bench $name $dt $p parts: skipped (time budget spent)")
        return
    fi
    echo "== bench $name $dt --gpus $g ${partsarg[*]} $*"
    local t0; t0=$(date +%s)
    if timeout "$(cap "${BENCH_CAP:-200}")" "$ST" bench "$f" --gpus "$g" ${partsarg[@]+"${partsarg[@]}"} --dtype "$dt" --reps "$REPS" --json "$@" \
        > "$j" 2> "${j%.json}.err"; then
        summary+=("bench $name $dt $p parts: ok ($(($(date +%s) - t0)) s)")
    else
        summary+=("bench $name $dt $p parts: FAILED (see $(basename "${j%.json}.err"))")
        status=1
    fi
}

rows() { python3 -c "print(int($1 * $SCALE))"; }

# 1. 2D Laplacian: a 9000 x 9000 grid, 81M rows, 404,964,000 entries.
if [ "${SKIP_SCALING:-0}" = 1 ]; then
    summary+=("scaling runs: skipped (SKIP_SCALING=1)")
elif f=$(gen laplace2d "$(rows 81000000)" 5); then
    for dt in $DTYPES; do bench laplace2d "$f" "$dt" 2 2; done
else
    summary+=("gen laplace2d: FAILED (see gen.log)"); status=1
fi
# 2. Uncapped power-law: 12.5M rows x 16 mean entries = 200M entries (no --max-row-len).
if [ "${SKIP_SCALING:-0}" = 1 ]; then
    :
elif f=$(gen powerlaw "$(rows 12500000)" 16 --alpha 2.0); then
    for dt in $DTYPES; do bench powerlaw "$f" "$dt" 2 2; done
else
    summary+=("gen powerlaw: FAILED (see gen.log)"); status=1
fi
# 3. 4 and 8 parts on 2 GPUs (issue 22), beside equal-rows partitions.
if [ "${SKIP_SCALING:-0}" != 1 ]; then
    if f=$(gen laplace2d "$(rows 16000000)" 5); then
        for p in 4 8; do bench laplace2d-16M "$f" f64 2 "$p" --equal-rows; done
    fi
    if f=$(gen powerlaw "$(rows 4000000)" 16 --alpha 2.0); then
        for p in 4 8; do bench powerlaw-64M "$f" f64 2 "$p" --equal-rows; done
    fi
fi
# 4. Optional (BIG=1): > 2^31 entries, 64-bit offsets in the one-GPU baseline.
if [ "${BIG:-0}" = 1 ]; then
    # 440M rows x 5 = 2.2G entries, written as f32 (a 30 GB .spb)
    if f=$(gen laplace2d 440000000 5 --dtype f32); then
        BENCH_CAP=400 bench laplace2d-2G "$f" f32 2 2 --baselines 1
    else
        summary+=("gen laplace2d-2G: FAILED (see gen.log)"); status=1
    fi
else
    summary+=("> 2^31 entries: not run (BIG=1)")
fi
# 5. Optional (MANY=1): every GPU count up to the devices present (issue 22).
if [ "${MANY:-0}" = 1 ]; then
    counts=1; n=2
    while [ "$n" -le "$NDEV" ]; do counts="$counts,$n"; n=$((n * 2)); done
    [ "$((n / 2))" -lt "$NDEV" ] && counts="$counts,$NDEV"
    echo "== $NDEV devices: GPU counts $counts"
    # 18000 x 18000 grid: 324M rows, 1,619,928,000 entries
    if lf=$(gen laplace2d "$(rows 324000000)" 5 --dtype f32); then
        BENCH_CAP=240 bench laplace2d-1.6G "$lf" f32 "$counts" scaling --baselines 1
    else
        summary+=("gen laplace2d-1.6G: FAILED (see gen.log)"); status=1
    fi
    # 50M rows x 16 mean entries, no row cap
    if pf=$(gen powerlaw "$(rows 50000000)" 16 --alpha 2.0); then
        BENCH_CAP=240 bench powerlaw-800M "$pf" f64 "$counts" scaling --equal-rows --baselines 1
    else
        summary+=("gen powerlaw-800M: FAILED (see gen.log)"); status=1
    fi
    [ "${SKIP_TESTS:-0}" = 1 ] || run_tests "$NDEV" 150 ${TEST_FILTER:-every_device}
    if [ "$NDEV" -gt 1 ] && [ -n "${pf:-}" ]; then
        BENCH_CAP=150 bench powerlaw-800M "$pf" f64 "$NDEV" "$((2 * NDEV))" --equal-rows --baselines 1
    fi
    if [ "$NDEV" -gt 1 ] && [ -n "${lf:-}" ]; then
        BENCH_CAP=150 bench laplace2d-1.6G "$lf" f32 "$NDEV" "$((2 * NDEV))" --baselines 1
    fi
fi

printf '\n================ summary (%s s used of %s)\n' "$(($(date +%s) - START))" "$BUDGET"
printf '%s\n' "${summary[@]}"
python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, sys
print(f"\n{'run':28s} {'nnz':>11s} {'parts':>5s} {'best 1-GPU':>16s} {'1-GPU ms':>9s} {'N-GPU ms':>9s} "
      f"{'speedup':>7s} {'eff':>5s} {'exch%':>6s} {'GPU bytes':>11s} {'eq-rows ms':>10s} {'err':>8s}")
def row(name, r):
    eq = r.get("equal_rows_ms")
    print(f"{name:28s} {r['nnz']:11d} {r['parts']:5d} {str(r['best_single_layout']):>16s} {r['best_single_ms']:9.4f} "
          f"{r['dist_ms']:9.4f} {r['speedup']:7.2f} {100 * r['parallel_efficiency']:4.0f}% "
          f"{100 * r['exchange_share']:5.1f}% {r['nccl_bytes']:11d} {'-' if eq is None else f'{eq:.4f}':>10} "
          f"{r['rel_error']:8.1e}{'' if r['ok'] else ' BAD'}")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "dist-*.json")) + glob.glob(os.path.join(sys.argv[1], "scale-*.json"))):
    name = os.path.basename(path)[:-5]
    try:
        r = json.load(open(path))
    except Exception as e:
        print(f"{name:28s} unreadable ({e})")
        continue
    for run in r.get("runs", [r]):
        row(f"{name}-g{len(run['devices'])}" if "runs" in r else name, run)
print("targets: laplace2d (>= 400M entries) 2-GPU speedup >= 1.85; powerlaw (uncapped, >= 200M) >= 1.5")
print("issue 22: laplace2d (>= 1.6G entries) efficiency >= 85 % on 4 GPUs, >= 75 % on 8")
PY
echo "logs and JSON: $OUT"
exit $status
