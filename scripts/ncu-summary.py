#!/usr/bin/env python3
"""One line per kernel of the Nsight Compute CSV files that scripts/gpu-ncu.sh writes (ncu --csv
--print-units base): duration, DRAM bytes read and written, L2 sectors read, written and reduced
(as bytes), L2 hit rate, achieved occupancy, grid size and registers a thread."""
import collections
import csv
import sys


def kernels(path):
    rows = list(csv.reader(line for line in open(path) if line.startswith('"')))
    if not rows:
        return {}
    head = {k: i for i, k in enumerate(rows[0])}
    out = collections.OrderedDict()
    for r in rows[1:]:
        if len(r) < len(head):
            continue
        key = (r[head["ID"]], r[head["Kernel Name"]])
        out.setdefault(key, {})[r[head["Metric Name"]]] = r[head["Metric Value"]].replace(",", "")
    return out


def main():
    for path in sys.argv[1:]:
        tag = path.rsplit("/", 1)[-1].removesuffix(".csv")
        for (_, name), m in kernels(path).items():
            def g(k):
                try:
                    return float(m.get(k, "nan"))
                except ValueError:
                    return float("nan")
            red = g("lts__t_sectors_op_red.sum") + g("lts__t_sectors_op_atom.sum")
            print("%-22s %-30s %8.1f us  DRAM rd %7.1f MB wr %6.1f MB  L2 rd %7.1f MB wr %6.1f MB red %6.1f MB"
                  "  hit %5.1f%%  occ %5.1f%%  grid %9d  regs %3d" % (
                      tag, name[:30], g("gpu__time_duration.sum") / 1e3,
                      g("dram__bytes_read.sum") / 1e6, g("dram__bytes_write.sum") / 1e6,
                      g("lts__t_sectors_op_read.sum") * 32 / 1e6, g("lts__t_sectors_op_write.sum") * 32 / 1e6,
                      red * 32 / 1e6, g("lts__t_sector_hit_rate.pct"),
                      g("sm__warps_active.avg.pct_of_peak_sustained_active"),
                      g("launch__grid_size"), g("launch__registers_per_thread")))


if __name__ == "__main__":
    main()
