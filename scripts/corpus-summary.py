"""Summary of `bench --sweep --json` results (scripts/gpu-corpus.sh): per run, our fastest kernel, cuSPARSE's
fastest algorithm and their ratio (cuSPARSE's time / ours: above 1 means ours is faster), runs below 1 marked.

    python3 scripts/corpus-summary.py DIR [DIR ...]     later folders replace earlier ones' runs of the same name
"""
import os, sys

from results import json_files, load_json, stem

runs = {}
for d in sys.argv[1:]:
    for f in json_files(d):
        try:
            j = load_json(f)
        except (ValueError, OSError):
            continue
        if isinstance(j, dict) and 'results' in j:
            runs[stem(f)] = j
below = 0
for name, j in sorted(runs.items()):
    res = [r for r in j['results'] if r.get('median_ms')]
    own = [r for r in res if not r['baseline']]
    cus = [r for r in res if r['baseline']]
    bad = [r['kernel'] for r in res if not r.get('ok', True)]
    if not own or not cus:
        print(f'{name:34s} (no {"cuSPARSE" if own else "own"} result)')
        continue
    o, c = min(own, key=lambda r: r['median_ms']), min(cus, key=lambda r: r['median_ms'])
    ratio = c['median_ms'] / o['median_ms']
    below += ratio < 1
    print(f"{name:34s} {o['kernel']:14s} {o['median_ms'] * 1e3:9.1f} us  {c['kernel']:18s} {c['median_ms'] * 1e3:9.1f} us"
          f"  {ratio:6.3f}{'  <' if ratio < 1 else ''}{'  WRONG: ' + ','.join(bad) if bad else ''}")
print(f'{len(runs)} runs, {below} below 1.0')
