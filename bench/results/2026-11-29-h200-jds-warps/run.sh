#!/usr/bin/env bash
# ON the GPU machine, from the repository root (binaries of scripts/gpu-build.sh gzipped in .device/bin): an A/B
# of the order of JDS's main warps with one binary, SPARSETOOL_JDS_ORDER=window (blocks of 256 rows of one
# length, window by window) against the default (warps of 32 rows of every length by their first original row),
# then what each step below names where its variable is set; everything packed into $OUT/run.tgz.
#   ONLY="m1 m2 ..."   corpus matrices (bench/corpus.tsv) for `bench --sweep --formats jds`, orders interleaved
#   DTYPES="f32 f64"   value types (default both)
#   TESTS=1            the GPU tests, first
#   NCU="m1 ..."       ncu of one `spmv --format jds` per order on these (cold caches; scripts/ncu-summary.py)
set -uo pipefail
source scripts/corpus-gen.sh
START=$(date +%s)
FINAL=${OUT:-/tmp/out}
W=/tmp/run
ST=/tmp/b/sparsetool
mkdir -p /tmp/b $W/json $W/ncu "$FINAL"
for f in .device/bin/*.gz; do gunzip -c "$f" > "/tmp/b/$(basename "$f" .gz)"; done
chmod +x /tmp/b/*
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/nvidia-smi.txt
if [ "${TESTS:-0}" = 1 ]; then
    SPARSETOOL_REQUIRE_GPU=1 /tmp/b/gpu-tests --test-threads=4 > $W/gpu-tests.log 2>&1
    echo "gpu-tests rc=$? at $(( $(date +%s) - START ))s"; grep -E "^test result|FAILED|panicked" $W/gpu-tests.log | head
fi
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum
M=$M,lts__t_sectors_op_write.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,lts__t_sector_hit_rate.pct
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread
export SPARSETOOL_PTX_CACHE=/tmp/ptx
for name in $(printf "%s\n" ${ONLY:-} ${NCU:-} | awk '!seen[$0]++'); do
    if [ $(( $(date +%s) - START )) -ge "${BUDGET:-500}" ]; then echo "budget: skipped $name"; continue; fi
    corpus_gen "$name" $W/m.spb > /dev/null || { echo "$name: gen FAILED"; continue; }
    for dt in ${DTYPES:-f32 f64}; do
        if grep -qw -- "$name" <<< "${ONLY:-}"; then
            for v in window warp; do
                SPARSETOOL_JDS_ORDER=$v $ST bench $W/m.spb --device gpu --sweep --json --reps 20 --dtype "$dt" \
                    --formats jds > "$W/json/$name-$dt-cap$v.json" 2> $W/err || echo "$name $dt $v FAILED: $(tail -c 300 $W/err)"
            done
        fi
        if grep -qw -- "$name" <<< "${NCU:-}"; then
            for v in window warp; do
                SPARSETOOL_JDS_ORDER=$v ncu --clock-control none --print-units base --print-summary none \
                    --kernel-name regex:spmv_ --metrics "$M" --csv $ST spmv $W/m.spb --device gpu --format jds \
                    --dtype "$dt" > "$W/ncu/$name-$dt-$v.csv" 2> $W/err || echo "ncu $name $dt $v FAILED: $(tail -c 300 $W/err)"
            done
        fi
    done
    echo "$name done at $(( $(date +%s) - START ))s"
done
rm -f $W/m.spb
python3 scripts/floor-summary.py $W/json --formats jds > $W/floor.txt 2>&1
ls $W/ncu/*.csv > /dev/null 2>&1 && python3 scripts/ncu-summary.py $W/ncu/*.csv > $W/ncu-summary.txt 2>&1
tar czf "$FINAL/run.tgz" -C $W .
cat $W/ncu-summary.txt $W/floor.txt 2>/dev/null
echo "total $(( $(date +%s) - START ))s"
