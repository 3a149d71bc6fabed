"""Summary of an A/B from scripts/gpu-ab.sh: per run (matrix and value type) and kernel, the median time in A
and in B (the fastest median over the rounds of each side) and B/A; then per run our fastest kernel against
cuSPARSE's fastest in A and in B (cuSPARSE's time / ours: above 1 means ours is faster).

    python3 scripts/ab-summary.py DIR [KERNEL ...]     DIR holds a1/json, b1/json, a2/json, ...; KERNEL: only these
"""
import glob, os, re, sys

from results import json_files, load_json, stem

root, only = sys.argv[1], set(sys.argv[2:])
side = {'a': {}, 'b': {}}  # side -> run -> kernel label -> best median (ms)
wrong = []  # results that failed bench's check
for d in sorted(glob.glob(os.path.join(root, '[ab][0-9]*'))):
    s = os.path.basename(d)[0]
    for f in json_files(os.path.join(d, 'json')):
        try:
            j = load_json(f)
        except (ValueError, OSError):
            continue
        if not isinstance(j, dict) or 'results' not in j:
            continue
        run = side[s].setdefault(stem(f), {})
        for r in j['results']:
            if not r.get('ok', True):
                wrong.append(f"{os.path.basename(d)} {stem(f)} {r['kernel']}")
            if not r.get('median_ms') or not r.get('ok', True):
                continue
            # a sweep times some kernels on several layouts: name the layout
            p = r.get('params', {})
            layout = '/'.join(str(p[k]) for k in ('hyb_width', 'slice', 'sigma') if k in p)
            label = r['kernel'] + (f'({layout})' if layout else '') + ('*' if r['baseline'] else '')
            run[label] = min(run.get(label, 1e9), r['median_ms'])
runs = sorted(set(side['a']) & set(side['b']))
print(f"{'run':24s} {'kernel':22s} {'A us':>9s} {'B us':>9s} {'B/A':>6s}")
for run in runs:
    a, b = side['a'][run], side['b'][run]
    for k in sorted(set(a) & set(b)):
        if only and k.rstrip('*').split('(')[0] not in only:
            continue
        print(f'{run:24s} {k:22s} {a[k] * 1e3:9.2f} {b[k] * 1e3:9.2f} {b[k] / a[k]:6.3f}')
print(f"\n{'run':24s} {'best own A':>22s} {'best own B':>22s} {'cuSPARSE A':>11s} {'cuSPARSE B':>11s} {'x A':>6s} {'x B':>6s}")
for run in runs:
    row = []
    for s in 'ab':
        own = {k: v for k, v in side[s][run].items() if not k.endswith('*')}
        cus = [v for k, v in side[s][run].items() if k.endswith('*')]
        if not own or not cus:
            row = None
            break
        k = min(own, key=own.get)
        row.append((k, own[k], min(cus)))
    if row:
        (ka, oa, ca), (kb, ob, cb) = row
        print(f'{run:24s} {ka[:12]:>12s} {oa * 1e3:8.2f} {kb[:12]:>12s} {ob * 1e3:8.2f} {ca * 1e3:11.2f} {cb * 1e3:11.2f}'
              f' {ca / oa:6.3f} {cb / ob:6.3f}')
print(f"\n{len(runs)} runs in both; wrong results: {', '.join(wrong) if wrong else 'none'}")
