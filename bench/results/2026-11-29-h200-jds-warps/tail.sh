#!/usr/bin/env bash
# ON the GPU machine, from the repository root: what the long-row tails of JDS and SELL cost. Per matrix of
# ONLY (bench/corpus.tsv) and value type, `bench --sweep --formats jds,sell` with the embedded kernels (variant
# N) and with .device/kvT (T: the tail kernels return at once, a wrong product, timed), interleaved;
# SPARSETOOL_JDS_ORDER=window (the landed order). Results <matrix>-<dtype>-cap<V>.json in $OUT/tail.tgz.
set -uo pipefail
source scripts/corpus-gen.sh
START=$(date +%s)
W=/tmp/tail
ST=/tmp/b/sparsetool
mkdir -p /tmp/b $W/json "${OUT:-/tmp/out}"
for f in .device/bin/*.gz; do [ -x "/tmp/b/$(basename "$f" .gz)" ] || gunzip -c "$f" > "/tmp/b/$(basename "$f" .gz)"; done
chmod +x /tmp/b/*
export SPARSETOOL_JDS_ORDER=window
for name in $ONLY; do
    corpus_gen "$name" $W/m.spb > /dev/null || { echo "$name: gen FAILED"; continue; }
    for dt in f32 f64; do
        for v in N T; do
            kdir=; [ $v = T ] && kdir=.device/kvT
            SPARSETOOL_KERNEL_DIR=$kdir $ST bench $W/m.spb --device gpu --sweep --json --reps 20 --dtype $dt \
                --formats jds,sell > "$W/json/$name-$dt-cap$v.json" 2> $W/err || echo "$name $dt $v FAILED: $(tail -c 300 $W/err)"
        done
    done
    echo "$name done at $(( $(date +%s) - START ))s"
done
rm -f $W/m.spb
tar czf "${OUT:-/tmp/out}/tail.tgz" -C $W/json .
python3 scripts/floor-summary.py $W/json --formats jds,sell
