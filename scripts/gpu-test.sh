#!/usr/bin/env bash
# Runs ON the GPU machine, from the repository root, with binaries built by
# scripts/gpu-build.sh carried in:
#   bash scripts/gpu-test.sh SPARSETOOL_BIN GPU_TEST_BIN [GPU_UNIT_TEST_BIN]
# 1. the GPU tests (every kernel x f32/f64 x every test matrix) with
#    SPARSETOOL_REQUIRE_GPU=1 (a missing device fails instead of skipping);
# 2. the NVRTC compile test (unit tests), if that binary is given;
# 3. compute-sanitizer memcheck on the GPU tests (built-in matrices), if present;
# 4. large matrices generated here (`sparsetool gen`), `sparsetool bench` on
#    each in f32 and f64, JSON under $OUT;
# 4b. `sparsetool analyze --measure` on the real matrices and two generated ones;
# 5. a compact summary table, printed last.
# Steps run in that order of importance (tests, bench, memcheck) within a time
# BUDGET (default 560 s, under the device tool's 600 s per command); a step
# that no longer fits is skipped and says so.
# Environment knobs: REPS (default 30), SCALE (multiplies matrix sizes, default 1),
# DTYPES (value types of the bench step, default "f32 f64"; c64/c128 for complex),
# BUDGET, EXT (container of generated matrices: spb (default) or mtx),
# MEASURE_DTYPES="f32 f64" (value types of the analyze --measure step, default f32),
# SKIP_TESTS=1, SKIP_SANITIZER=1, SKIP_BENCH=1, SKIP_MEASURE=1, MATRICES="kind:rows:k:alpha[:max_row_len] ...",
# BENCH_ARGS (more flags for every bench, e.g. "--offsets 64"),
# PACK=1 (everything under $OUT packed into $OUT/gpu-test.tgz, the loose files removed: the device tool brings back
# at most eight files from a call).
set -uo pipefail
ST=${1:?usage: gpu-test.sh SPARSETOOL_BIN GPU_TEST_BIN [GPU_UNIT_TEST_BIN]}
GT=${2:?usage: gpu-test.sh SPARSETOOL_BIN GPU_TEST_BIN [GPU_UNIT_TEST_BIN]}
UT=${3:-}
OUT=${OUT:-$(mktemp -d)}
REPS=${REPS:-30}
SCALE=${SCALE:-1}
WORK=${WORK:-/tmp/sparsetool-gpu}
mkdir -p "$OUT" "$WORK"
chmod +x "$ST" "$GT" ${UT:+"$UT"} 2>/dev/null || true
status=0
summary=()
START=$(date +%s)
BUDGET=${BUDGET:-560}
EXT=${EXT:-spb}
left() { echo $((BUDGET - ($(date +%s) - START))); }
# cap a step's timeout by what is left of the budget
cap() { local want=$1 l; l=$(left); [ "$l" -lt "$want" ] && want=$l; echo "$want"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
    > "$OUT/nvidia-smi.txt" 2>&1 || true

if [ "${SKIP_TESTS:-0}" != 1 ]; then
    echo "== GPU tests (SPARSETOOL_REQUIRE_GPU=1)"
    if SPARSETOOL_REQUIRE_GPU=1 timeout "$(cap 330)" "$GT" --test-threads=1 --nocapture \
        > "$OUT/gpu-tests.log" 2>&1; then
        summary+=("gpu tests: $(grep -E '^test result' "$OUT/gpu-tests.log" | tail -1)")
    else
        status=1
        summary+=("gpu tests: FAILED (see gpu-tests.log)")
        grep -E '^FAIL|panicked|^test .* FAILED' "$OUT/gpu-tests.log" | head -30
    fi
    if [ -n "$UT" ]; then
        if timeout "$(cap 60)" "$UT" --test-threads=1 --nocapture > "$OUT/unit-tests.log" 2>&1; then
            if grep -q 'SKIPPED: no libnvrtc' "$OUT/unit-tests.log"; then
                summary+=("nvrtc compile test: SKIPPED (no libnvrtc found here)")
            else
                summary+=("unit tests incl. nvrtc compile: $(grep -E '^test result' "$OUT/unit-tests.log" | tail -1)")
            fi
        else
            status=1
            summary+=("unit tests: FAILED (see unit-tests.log)")
        fi
    fi
fi

if [ "${SKIP_BENCH:-0}" != 1 ]; then
    # kind:rows:nnz-per-row:alpha[:max_row_len[:seed]]  (each >= ~50M nnz at SCALE=1;
    # an empty max_row_len leaves a power-law matrix uncapped).
    # The power-law tail is capped at 1000 entries a row (100x the mean): an
    # uncapped Pareto tail with alpha 2 puts a row of ~3.4M entries into this
    # matrix, which no thread-per-row format (ELL/JDS/SELL) can carry.
    MATRICES=${MATRICES:-"laplace2d:12500000:5:0 laplace3d:2000000:27:0 uniform:3200000:16:0 powerlaw:6000000:10:2.0:1000"}
    for spec in $MATRICES; do
        IFS=: read -r kind rows k alpha cap seed <<< "$spec"
        seed=${seed:-1}
        rows=$(python3 -c "print(int($rows * $SCALE))")
        if [ "$(left)" -lt 40 ]; then
            summary+=("bench $kind: skipped (time budget spent)")
            continue
        fi
        capargs=()
        [ -n "${cap:-}" ] && capargs=(--max-row-len "$cap")
        f="$WORK/$kind-$rows${cap:+-cap$cap}-a$alpha-s$seed.$EXT"
        tag="$kind${cap:+-cap$cap}-a$alpha-s$seed"
        if [ ! -s "$f" ]; then
            echo "== gen $kind rows=$rows k=$k alpha=$alpha"
            t0=$(date +%s)
            gen() { timeout "$(cap 200)" "$ST" gen "$kind" --rows "$rows" --nnz-per-row "$k" --seed "$seed" \
                --alpha "$alpha" "${capargs[@]}" -o "$1" >> "$OUT/gen-$kind.log" 2>&1; }
            if ! gen "$f" && [ "$EXT" != mtx ]; then
                echo "   gen to .$EXT failed; trying .mtx"
                f="$WORK/$kind-$rows${cap:+-cap$cap}-a$alpha-s$seed.mtx"
                [ -s "$f" ] || gen "$f" || rm -f "$f"
            fi
            if [ ! -s "$f" ]; then
                summary+=("gen $kind: FAILED (see gen-$kind.log)")
                status=1
                continue
            fi
            echo "   $(($(date +%s) - t0)) s, $(du -h "$f" | cut -f1)"
        fi
        for dt in ${DTYPES:-f32 f64}; do
            echo "== bench $tag $dt"
            j="$OUT/bench-$tag-$dt.json"
            bf=$f; bdt=$dt
            case $dt in
                c64|c128)
                    # the same pattern with complex values (gen --complex)
                    bf="${f%.*}-complex.${f##*.}"; bdt=$([ "$dt" = c64 ] && echo f32 || echo f64)
                    [ -s "$bf" ] || timeout "$(cap 200)" "$ST" gen "$kind" --rows "$rows" --nnz-per-row "$k" \
                        --seed "$seed" --alpha "$alpha" "${capargs[@]}" --complex -o "$bf" \
                        >> "$OUT/gen-$kind.log" 2>&1 || { summary+=("gen $tag complex: FAILED"); continue; } ;;
            esac
            if [ "$(left)" -lt 20 ]; then
                summary+=("bench $kind $dt: skipped (time budget spent)")
                continue
            fi
            # shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
            if ! timeout "$(cap 240)" "$ST" bench "$bf" --device gpu --dtype "$bdt" --reps "$REPS" --json ${BENCH_ARGS:-} \
                > "$j" 2> "$OUT/bench-$tag-$dt.err"; then
                summary+=("bench $tag $dt: FAILED (see bench-$tag-$dt.err)")
                status=1
            fi
        done
    done
fi

if [ "${SKIP_MEASURE:-0}" != 1 ]; then
    # analyze --measure: the prediction next to the measured top layouts, on the real
    # matrices and two generated ones (issue 8)
    echo "== analyze --measure"
    "$ST" gen fem --rows 270000 --nnz-per-row 30 --seed 2 -o "$WORK/fem-seed2.spb" --force 2>/dev/null
    "$ST" gen powerlaw --rows 800000 --nnz-per-row 10 --alpha 2.4 --max-row-len 1000 --seed 2 \
        -o "$WORK/pl24-seed2.spb" --force 2>/dev/null
    n=0; hit=0
    for dt in ${MEASURE_DTYPES:-f32}; do
    for f in fixtures/matrices/real/*.mtx* "$WORK/fem-seed2.spb" "$WORK/pl24-seed2.spb"; do
        [ "$(left)" -lt 30 ] && { summary+=("analyze --measure: stopped (time budget spent)"); break 2; }
        gzip -cdf "$f" 2>/dev/null | head -1 | grep -qi complex && continue
        b=$(basename "$f"); b=${b%%.*}-$dt
        if timeout "$(cap 60)" "$ST" analyze "$f" --lenient --measure --dtype "$dt" --json > "$OUT/measure-$b.json" \
            2> "$OUT/measure-$b.err"; then
            n=$((n + 1))
            python3 - "$OUT/measure-$b.json" <<'PY' >> "$OUT/measure.txt" && hit=$((hit + 1))
import json, sys
m = json.load(open(sys.argv[1]))["measure"]
s = m["prediction_slowdown"]
print(f"{sys.argv[1].split('measure-')[1][:-5]:32s} predicted {m['predicted_winner']:16s} measured {m['measured_winner']:16s} {s:.2f}x")
sys.exit(0 if s <= 1.10 else 1)
PY
        else
            summary+=("analyze --measure $b: FAILED (see measure-$b.err)")
            status=1
        fi
    done
    done
    [ -s "$OUT/measure.txt" ] && cat "$OUT/measure.txt"
    summary+=("analyze --measure: recommendation within 10 % of the measured best of its top 3 formats in $hit of $n runs (${MEASURE_DTYPES:-f32})")
fi

if [ "${SKIP_SANITIZER:-0}" != 1 ]; then
    CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
    if [ "$(left)" -lt 40 ]; then
        summary+=("memcheck: skipped (time budget spent)")
    elif [ -n "$CS" ]; then
        echo "== compute-sanitizer memcheck (built-in matrices)"
        if SPARSETOOL_FIXTURES=/nonexistent SPARSETOOL_REQUIRE_GPU=1 timeout "$(cap 200)" \
            "$CS" --tool memcheck --error-exitcode 9 "$GT" --test-threads=1 every_kernel_f64 \
            > "$OUT/memcheck.log" 2>&1; then
            summary+=("memcheck: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)")
        else
            summary+=("memcheck: FAILED or timed out (rc $?, see memcheck.log)")
            status=1
        fi
    else
        summary+=("memcheck: compute-sanitizer not found")
    fi
fi

echo
echo "================ summary  ($(($(date +%s) - START)) s used of $BUDGET)"
printf '%s\n' "${summary[@]}"
python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "bench-*.json"))):
    try:
        r = json.load(open(path))
    except Exception as e:
        print(f"{os.path.basename(path)}: unreadable ({e})")
        continue
    name = os.path.basename(path)[6:-5]
    copy = r.get("copy_gbps", 0.0)
    res = r.get("results", [])
    ours = [k for k in res if not k.get("baseline")]
    base = [k for k in res if k.get("baseline")]
    best = min(ours, key=lambda k: k["median_ms"], default=None)
    bbest = min(base, key=lambda k: k["median_ms"], default=None)
    m = r.get("matrix", {})
    print(f"\n{name}: {m.get('nrows')} rows, {m.get('nnz')} nnz, copy {copy:.0f} GB/s, tol {r.get('tolerance', 0):.1e}")
    print(f"  {'kernel':20s} {'median_ms':>10s} {'min_ms':>9s} {'GB/s':>7s} {'%copy':>6s} {'GFLOP/s':>8s} {'rel_err':>9s} ok")
    for k in sorted(res, key=lambda k: k["median_ms"]):
        pct = 100 * k["gbps"] / copy if copy else 0
        print(f"  {k['kernel']:20s} {k['median_ms']:10.4f} {k['min_ms']:9.4f} {k['gbps']:7.0f} {pct:5.0f}% "
              f"{k['gflops']:8.1f} {k['rel_error']:9.1e} {'ok' if k['ok'] else 'BAD'}")
    for s in r.get("skipped", []):
        print(f"  skipped {s['kernel']}: {s['reason']}")
    by = {k["kernel"]: k["median_ms"] for k in res}
    fmt = lambda n: f"{by[n]:7.3f}" if n in by else "      -"
    if best:
        bad = sum(1 for k in res if not k.get("ok"))
        floor = r.get("gather_floor_ms") or float("nan")
        # %copy the best layout would reach if it ran in the x-gather floor's time
        ceil = 100 * best["bytes"] / (floor * 1e-3) / 1e9 / copy if copy and floor == floor else float("nan")
        rows.append((name, best["kernel"], best["median_ms"], 100 * best["gbps"] / copy if copy else 0,
                     bbest["kernel"] if bbest else "-", bbest["median_ms"] if bbest else float("nan"),
                     bbest["median_ms"] / best["median_ms"] if bbest else float("nan"),
                     fmt("ell"), fmt("jds"), fmt("sell"), bad, floor, ceil))
if rows:
    print(f"\n{'matrix':16s} {'best ours':14s} {'ms':>7s} {'%copy':>5s} {'best cuSPARSE':17s} {'ms':>7s} {'x':>5s} "
          f"{'ell':>7s} {'jds':>7s} {'sell':>7s} bad {'floor':>6s} {'ceil':>5s}")
    for n, k, t, p, bk, bt, s, e, j, se, bad, fl, ce in rows:
        print(f"{n:16s} {k:14s} {t:7.3f} {p:4.0f}% {bk:17s} {bt:7.3f} {s:5.2f} {e} {j} {se} {bad:3d} {fl:6.3f} {ce:4.0f}%")
    print("floor: x-gather floor in CSR order, ms (column indices + x gathered, nothing else); ceil: the %copy of the best "
          "layout's bytes at the floor's time")
PY
if [ "${PACK:-0}" = 1 ]; then
    tar czf "$WORK/gpu-test.tgz" -C "$OUT" . && find "$OUT" -mindepth 1 -delete && mv "$WORK/gpu-test.tgz" "$OUT/" \
        || { echo "PACK: could not pack $OUT"; status=1; }
    echo "logs and JSON: $OUT/gpu-test.tgz"
else
    echo "logs and JSON: $OUT"
fi
exit $status
