#!/usr/bin/env bash
# ON the GPU machine, from the repository root (binaries from scripts/gpu-build.sh carried in
# .device/bin): `sparsetool bench --sweep --json` in f32 and f64 over the calibration corpus
# (bench/corpus.tsv, generated here, plus fixtures/matrices/real), every result packed into
# $OUT/corpus.tgz (JSON per matrix and dtype, the log, nvidia-smi).
#   PART=i/n    run the generated matrices whose line number is i mod n (default 1/1)
#   REAL=0      skip the real matrices           BUDGET=540   seconds before it stops starting
#   REPS=20     timed launches per kernel        ONLY="l2d-1m uni-8m"   just these names
#   SKIP="dense-8m circ-50m"   leave these names out       DTYPES="f64"   value types (default f32 f64)
#   FORMATS="ell,hyb,sell"     only these formats (bench --formats; default every one)
# Results go to bench/results/<date>-<device>-corpus/ in the repository (see BENCHMARKS.md).
set -uo pipefail
source scripts/corpus-gen.sh
ST=${ST:-.device/bin/sparsetool}
FINAL=${OUT:-/tmp/out}
WORK=${WORK:-/tmp/sparsetool-corpus}
REPS=${REPS:-20}
BUDGET=${BUDGET:-540}
PART=${PART:-1/1}
START=$(date +%s)
rm -rf "$WORK/json"   # a warm machine keeps /tmp between calls
mkdir -p "$WORK/json" "$WORK/mat" "$FINAL"
chmod +x "$ST" 2>/dev/null || true
export SPARSETOOL_PTX_CACHE=$WORK/ptx
LOG=$WORK/json/corpus.log
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
    > "$WORK/json/nvidia-smi.txt" 2>&1 || true
left() { echo $((BUDGET - ($(date +%s) - START))); }
bench_one() { # name file
    local name=$1 f=$2 dt
    for dt in ${DTYPES:-f32 f64}; do
        if [ "$(left)" -lt 15 ]; then echo "budget: skipped $name $dt" | tee -a "$LOG"; return; fi
        local t0=$(date +%s%N)
        if timeout "$(left)" "$ST" bench "$f" --device gpu --sweep --json --reps "$REPS" --dtype "$dt" \
            ${FORMATS:+--formats "$FORMATS"} \
            > "$WORK/json/$name-$dt.json" 2> "$WORK/json/$name-$dt.err"; then
            rm -f "$WORK/json/$name-$dt.err"
            printf '%-26s %s ok %.1fs\n' "$name" "$dt" "$(( ($(date +%s%N) - t0) / 1000000 ))e-3" | tee -a "$LOG"
        else
            rm -f "$WORK/json/$name-$dt.json"
            echo "$name $dt FAILED: $(tail -c 300 "$WORK/json/$name-$dt.err")" | tee -a "$LOG"
        fi
    done
}
IFS=/ read -r pi pn <<< "$PART"
n=0
while read -r name _; do
    case "$name" in ''|'#'*) continue ;; esac
    n=$((n + 1))
    [ $(((n - 1) % pn)) -eq $((pi - 1)) ] || continue
    if [ -n "${ONLY:-}" ] && ! grep -qw -- "$name" <<< "$ONLY"; then continue; fi
    if [ -n "${SKIP:-}" ] && grep -qw -- "$name" <<< "$SKIP"; then continue; fi
    if [ "$(left)" -lt 30 ]; then echo "budget: skipped $name" | tee -a "$LOG"; continue; fi
    m=$WORK/mat/$name.spb
    if ! corpus_gen "$name" "$m" 2>> "$LOG"; then
        echo "$name: gen FAILED" | tee -a "$LOG"; continue
    fi
    bench_one "$name" "$m"
    rm -f "$m"
done < bench/corpus.tsv
if [ "${REAL:-1}" = 1 ]; then
    for f in fixtures/matrices/real/*.mtx fixtures/matrices/real/*.mtx.gz; do
        name=real-$(basename "$f" | sed 's/\.mtx\(\.gz\)\?$//')
        if [ -n "${ONLY:-}" ] && ! grep -qw -- "$name" <<< "$ONLY"; then continue; fi
        # bench times real-valued matrices only
        if gzip -cdf "$f" | head -1 | grep -qi complex; then echo "$name: complex, skipped" >> "$LOG"; continue; fi
        bench_one "$name" "$f"
    done
fi
echo "corpus: $(ls "$WORK"/json/*.json 2>/dev/null | wc -l) results in $(( $(date +%s) - START ))s" | tee -a "$LOG"
tar czf "$FINAL/corpus.tgz" -C "$WORK/json" .
