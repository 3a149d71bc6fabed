#!/usr/bin/env bash
# ON the GPU machine (binaries from scripts/gpu-build.sh carried in .device/bin): each kernel of one SpMV
# (`sparsetool spmv`, cold caches) under Nsight Compute -- its duration, DRAM bytes read and written, L2 traffic,
# L2 hit rate, occupancy, grid and registers -- for every matrix, format and value type; the CSV per run and
# the table of scripts/ncu-summary.py packed into $OUT/ncu.tgz, the table printed last.
#   GEN="c50:circuit --rows 10000000 --nnz-per-row 5 --seed 1;c8:circuit --rows 1600000 --nnz-per-row 5 --seed 1"
#                            matrices: NAME:`sparsetool gen` arguments, ';' between (this is the default)
#   FORMATS="jds sell"       formats (spmv --format; default jds sell hyb csr coo)
#   DTYPES="f32 f64"         value types (default both)
#   KERNEL_DIR=DIR           also profile JDS with the kernel sources of DIR (SPARSETOOL_KERNEL_DIR), tagged `-k`
set -uo pipefail
ST=${ST:-.device/bin/sparsetool}
[ -f "$ST" ] || gunzip -kf "$ST.gz"
chmod +x "$ST" 2>/dev/null || true
WORK=${WORK:-/tmp/sparsetool-ncu}
FINAL=${OUT:-/tmp/out}
GEN=${GEN:-c50:circuit --rows 10000000 --nnz-per-row 5 --seed 1;c8:circuit --rows 1600000 --nnz-per-row 5 --seed 1}
mkdir -p "$WORK/csv" "$FINAL"
export SPARSETOOL_PTX_CACHE=$WORK/ptx
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum
M=$M,lts__t_sectors_op_write.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,lts__t_sector_hit_rate.pct
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$WORK/csv/nvidia-smi.txt" 2>&1 || true
prof() { # tag, spmv arguments...
    local tag=$1; shift
    ncu --clock-control none --print-units base --print-summary none --kernel-name regex:spmv_ \
        --metrics "$M" --csv "$ST" spmv "$@" > "$WORK/csv/$tag.csv" 2> "$WORK/csv/$tag.err" \
        || echo "$tag: FAILED $(tail -c 300 "$WORK/csv/$tag.err")"
}
IFS=';' read -ra mats <<< "$GEN"
for spec in "${mats[@]}"; do
    name=${spec%%:*}
    # shellcheck disable=SC2086  # the generator's arguments split on purpose
    "$ST" gen ${spec#*:} -o "$WORK/$name.spb" --force > /dev/null || { echo "$name: gen FAILED"; continue; }
    for dt in ${DTYPES:-f32 f64}; do
        for f in ${FORMATS:-jds sell hyb csr coo}; do
            prof "$name-$dt-$f" "$WORK/$name.spb" --device gpu --format "$f" --dtype "$dt"
        done
        if [ -n "${KERNEL_DIR:-}" ]; then
            SPARSETOOL_KERNEL_DIR=$KERNEL_DIR prof "$name-$dt-jds-k" "$WORK/$name.spb" --device gpu --format jds --dtype "$dt"
        fi
    done
    rm -f "$WORK/$name.spb"
done
python3 scripts/ncu-summary.py "$WORK"/csv/*.csv > "$WORK/csv/summary.txt"
tar czf "$FINAL/ncu.tgz" -C "$WORK/csv" .
cat "$WORK/csv/summary.txt"
