#!/usr/bin/env bash
# ON the GPU machine, from the repository root: Nsight Compute metrics of single kernels of `bench` (one launch
# each, after 3 unprofiled ones; caches flushed before it, clocks as they are): duration, DRAM and L2 traffic,
# L1 sector hit rate, throughputs as % of peak, occupancy and the warps' stall reasons. For each matrix of
# MATS (NAME:`sparsetool gen` arguments, ';' between), value type of DTYPES and kernel of KERNELS (names with
# <t> for the value type), the CSV goes to <NAME>-<t>-<kernel>.csv in $OUT/ncu.tgz, with the table printed last
# (summary.txt); ST is the CLI.
set -uo pipefail
ST=${ST:-/tmp/b/sparsetool}
W=${WORK:-/tmp/ncu}
FINAL=$W/csv
MATS=${MATS:-c8:circuit --rows 1600000 --nnz-per-row 5 --seed 1}
KERNELS=${KERNELS:-spmv_jds_<t> spmv_jds_<t>_u16 spmv_jds_<t>_tail gather_floor_<t> gather_floor_<t>_x1}
rm -rf "$FINAL"
mkdir -p "$W" "$FINAL"
export SPARSETOOL_PTX_CACHE=$W/ptx
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum
M=$M,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
M=$M,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct
M=$M,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,l1tex__throughput.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread,launch__grid_size
S=smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct
S=$S,smsp__warp_issue_stalled_drain_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct
S=$S,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_selected_per_warp_active.pct
S=$S,smsp__warp_issue_stalled_membar_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct
S=$S,smsp__warp_issue_stalled_no_instruction_per_warp_active.pct,smsp__warp_issue_stalled_not_selected_per_warp_active.pct
IFS=';' read -ra mats <<< "$MATS"
for spec in "${mats[@]}"; do
    name=${spec%%:*}
    # shellcheck disable=SC2086  # the generator's arguments split on purpose
    "$ST" gen ${spec#*:} -o "$W/$name.spb" --force > /dev/null || { echo "$name: gen FAILED"; continue; }
    for t in ${DTYPES:-f64}; do
        for k in $KERNELS; do
            k=${k//<t>/$t}
            fmt=${FMT:-jds}
            case "$k" in *sell*) fmt=sell ;; esac
            out="$FINAL/$name-$t-$k.csv"
            run() {
                ncu --clock-control none --print-units base --kernel-name "regex:^$k\$" --launch-skip 3 \
                    --launch-count 1 --metrics "$1" --csv "$ST" bench "$W/$name.spb" --device gpu \
                    --formats "$fmt" --dtype "$t" --reps 3 > "$out" 2> "$W/err"
            }
            run "$M,$S" || run "$M" || echo "$name $t $k: FAILED $(tail -c 300 "$W/err")"
            grep -q '"' "$out" || echo "$name $t $k: no kernel profiled ($(tail -c 200 "$W/err"))"
        done
    done
    rm -f "$W/$name.spb"
done
python3 - "$FINAL"/*.csv > "$FINAL/summary.txt" <<'PY'
import csv, sys
keys = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
        "lts__t_sectors_srcunit_tex_op_read.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sector_hit_rate.pct", "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed", "sm__warps_active.avg.pct_of_peak_sustained_active",
        "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
        "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct", "launch__registers_per_thread"]
short = ["us", "dramR MB", "dramW MB", "L2rd MB", "L1 MB", "L1hit%", "L2%", "dram%", "occ%", "longsb%", "lgthr%", "regs"]
print("%-34s" % "run" + "".join("%10s" % s for s in short))
for path in sys.argv[1:]:
    rows = list(csv.reader(l for l in open(path) if l.startswith('"')))
    if not rows:
        continue
    h = {k: i for i, k in enumerate(rows[0])}
    m = {r[h["Metric Name"]]: r[h["Metric Value"]].replace(",", "") for r in rows[1:] if len(r) >= len(h)}
    def g(k):
        try:
            v = float(m[k])
        except (KeyError, ValueError):
            return "-"
        if k.endswith("duration.sum"):
            v /= 1e3
        elif "bytes" in k:
            v /= 1e6
        elif "sectors" in k and not k.endswith("pct_of_peak_sustained_elapsed"):
            v *= 32 / 1e6
        return "%.1f" % v
    tag = path.rsplit("/", 1)[-1][:-4]
    print("%-34s" % tag[:34] + "".join("%10s" % g(k) for k in keys))
PY
mkdir -p "${OUT:-/tmp/out}"
tar czf "${OUT:-/tmp/out}/ncu.tgz" -C "$FINAL" .
cat "$FINAL/summary.txt"
