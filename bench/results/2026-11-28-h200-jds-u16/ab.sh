#!/usr/bin/env bash
# ON the GPU machine, from the repository root: an A/B of kernel sources or binaries. Each matrix of
# bench/corpus.tsv named in ONLY is generated once; then, per value type, `bench --sweep --formats $FORMATS`
# (default jds) runs once per variant V of VARIANTS, with the binary $BIN_V (default $ST) and, where the folder
# .device/kvV exists, SPARSETOOL_KERNEL_DIR=.device/kvV (its .cu files replace the embedded ones), the variants
# interleaved. Results: <matrix>-<dtype>-cap<V>.json (scripts/floor-summary.py puts each variant in a column),
# packed into $OUT/ab.tgz.
set -uo pipefail
ST=${ST:-/tmp/b/sparsetool}
FINAL=${OUT:-/tmp/out}
W=${WORK:-/tmp/jds-ab}
BUDGET=${BUDGET:-400}
START=$(date +%s)
rm -rf "$W/json"
mkdir -p "$W/json" "$FINAL"
while read -r name kind rows cols k alpha maxlen; do
    case "$name" in ''|'#'*) continue ;; esac
    grep -qw -- "$name" <<< "$ONLY" || continue
    if [ $(( $(date +%s) - START )) -ge "$BUDGET" ]; then echo "budget: skipped $name"; continue; fi
    args=("$kind" --rows "$rows" --nnz-per-row "$k" --seed 1)
    [ "$cols" != - ] && args+=(--cols "$cols")
    [ "$alpha" != - ] && args+=(--alpha "$alpha")
    [ "$maxlen" != - ] && args+=(--max-row-len "$maxlen")
    "$ST" gen "${args[@]}" -o "$W/m.spb" --force || { echo "$name: gen FAILED"; continue; }
    for dt in ${DTYPES:-f32 f64}; do
        for v in $VARIANTS; do
            bin_var=BIN_$v
            kdir=.device/kv$v
            [ -d "$kdir" ] || kdir=
            SPARSETOOL_KERNEL_DIR=$kdir "${!bin_var:-$ST}" bench "$W/m.spb" --device gpu --sweep --json \
                --reps 20 --dtype "$dt" --formats "${FORMATS:-jds}" > "$W/json/$name-$dt-cap$v.json" 2> "$W/err" ||
                echo "$name $dt $v FAILED: $(tail -c 300 "$W/err")"
        done
    done
    echo "$name done at $(( $(date +%s) - START ))s"
done < bench/corpus.tsv
tar czf "$FINAL/ab.tgz" -C "$W/json" .
