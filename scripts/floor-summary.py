"""Each format's fastest own kernel against the x-gather floor of the same run (`bench --sweep --json` results of
scripts/gpu-corpus.sh or an A/B script): issue 17's target 2, "within 3x of the gather floor".

    python3 scripts/floor-summary.py DIR [--formats jds,sell] [--over 3] [--kernels]

Files named <run>-cap<variant>.json (the A/B scripts in bench/results) put each variant in a column of its own;
--over X prints only the rows where some column is above X times the floor; wrong results are marked; --kernels
gives every kernel of those formats a row instead of each format's fastest.
`stream` is the kernel's time over its stream floor: the bytes it must move (`bytes`, the minimum-bytes model:
its format's arrays with their padding, x read once, y written once) at the run's device-to-device copy bandwidth
(`copy_gbps`). The x-gather floor leaves out the values and y, so in f64 on short rows a format's stream floor
alone can be 3x the gather floor; a kernel near 1.0x stream is bandwidth-bound, one far above it serialises.
"""
import argparse, collections

from results import json_files, load_json, stem

ap = argparse.ArgumentParser()
ap.add_argument('dir')
ap.add_argument('--formats', default='')
ap.add_argument('--over', type=float, default=0.0)
ap.add_argument('--kernels', action='store_true')
a = ap.parse_args()
want = set(filter(None, a.formats.split(',')))
best = collections.defaultdict(dict)   # (run, format or kernel) -> variant -> (us, kernel)
floor = {}
variants = []
for f in json_files(a.dir):
    name = stem(f)
    run, _, var = name.rpartition('-cap') if '-cap' in name else (name, '', '')
    try:
        j = load_json(f)
    except ValueError:
        continue
    if not isinstance(j, dict) or 'results' not in j or not j.get('gather_floor_ms'):
        continue
    if var not in variants:
        variants.append(var)
    floor[run] = j['gather_floor_ms'] * 1e3
    copy = j.get('copy_gbps') or 0.0
    for r in j['results']:
        if r['baseline'] or not r.get('median_ms') or (want and r['format'] not in want):
            continue
        us = r['median_ms'] * 1e3
        cell = best[(run, r['kernel'] if a.kernels else r['format'])]
        kernel = r['kernel'] + ('' if r.get('ok', True) else ' WRONG')
        stream = r['bytes'] / copy / 1e3 if copy and r.get('bytes') else 0.0
        if var not in cell or us < cell[var][0]:
            cell[var] = (us, kernel, stream)
head = ''.join(f'{v or "time":>33s}{"stream":>8s}' for v in variants)
width = 18 if a.kernels else 6
print(f"{'run':36s} {'kernel' if a.kernels else 'format':{width}s} {'floor us':>8s}{head}")
for (run, fmt), cell in sorted(best.items()):
    fl = floor[run]
    if a.over and all(us / fl <= a.over for us, _, _ in cell.values()):
        continue
    cols = ''.join(f'{cell[v][0]:9.1f} ({cell[v][0] / fl:4.1f}x) {cell[v][1][:14]:14s}'
                   + (f'{cell[v][0] / cell[v][2]:7.2f}x' if cell[v][2] else ' ' * 8) if v in cell else ' ' * 41
                   for v in variants)
    print(f'{run:36s} {fmt:{width}s} {fl:8.1f}{cols}')
