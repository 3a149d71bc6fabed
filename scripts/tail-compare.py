#!/usr/bin/env python3
"""Compares the best kernel of one format (default JDS) between two corpus folders of `bench --sweep --json`
results (scripts/gpu-corpus.sh, JSON or JSON.gz, in the folder or one level below), by the kind of long-row tail
the new run's layout has (`tail_chunks`, `tail_bands` in its params): with chunks at 4M entries or more, with chunks
below that, bands only, or none. For JDS since 5e91d0f the first two are its two orders (the tail first from 4M
entries on, plan::jds_tail_first); for SELL they are only sizes. Prints the geometric mean of new time / old time per kind, and the
new folder's runs furthest from their x-gather floor (issue 17's target 2: within 3x).

    python3 scripts/tail-compare.py NEW_DIR OLD_DIR [--format jds] [--top 6]
"""
import argparse
import math
import os

from results import json_files, load_json, stem

TAIL_FIRST_NNZ = 4_000_000  # plan::JDS_TAIL_FIRST_NNZ


def load(folder, fmt):
    """run name -> (best µs, floor µs or None, nnz, tail chunks, tail bands, kernel), from the folder and its
    subfolders (a corpus' gen/ and real/); a name in two of them keeps the last one read"""
    out = {}
    dirs = [folder] + sorted(e.path for e in os.scandir(folder) if e.is_dir())
    for f in (f for d in dirs for f in json_files(d)):
        try:
            j = load_json(f)
        except (OSError, ValueError):
            continue
        if not isinstance(j, dict):
            continue
        rs = [r for r in j.get('results', []) if r.get('format') == fmt and r.get('ok')]
        if not rs:
            continue
        best = min(rs, key=lambda r: r['median_ms'])
        p = best['params']
        floor = j.get('gather_floor_ms')
        out[stem(f)] = (best['median_ms'] * 1e3, floor * 1e3 if floor else None, j['matrix']['nnz'],
                        p.get('tail_chunks', 0), p.get('tail_bands', 0), best['kernel'])
    return out


def kind(nnz, chunks, bands):
    if chunks:
        return 'chunks, 4M+' if nnz >= TAIL_FIRST_NNZ else 'chunks, <4M'
    return 'bands only' if bands else 'no tail'


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('new')
    ap.add_argument('old')
    ap.add_argument('--format', default='jds')
    ap.add_argument('--top', type=int, default=6)
    a = ap.parse_args()
    new, old = load(a.new, a.format), load(a.old, a.format)
    groups = {}
    for k, (t, _, nnz, chunks, bands, _) in new.items():
        if k in old:
            groups.setdefault(kind(nnz, chunks, bands), []).append((t / old[k][0], k))
    print(f"{'tail':12} {'runs':>4} {'geomean':>8}  range (new / old)")
    for g, v in sorted(groups.items()):
        v.sort()
        gm = math.exp(sum(math.log(r) for r, _ in v) / len(v))
        print(f"{g:12} {len(v):4d} {gm:8.3f}  {v[0][0]:.3f} ({v[0][1]}) to {v[-1][0]:.3f} ({v[-1][1]})")
    ratios = sorted(((t / f, k, t, f, ker) for k, (t, f, _, _, _, ker) in new.items() if f), reverse=True)
    print(f"\n{len(ratios)} runs with a floor, {sum(1 for r in ratios if r[0] > 3)} over 3x; the furthest:")
    for r, k, t, f, ker in ratios[:a.top]:
        print(f"  {r:.3f}x  {k}: {ker} {t:.2f} us, floor {f:.2f} us")


if __name__ == '__main__':
    main()
