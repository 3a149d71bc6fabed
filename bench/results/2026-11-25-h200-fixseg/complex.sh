#!/usr/bin/env bash
# CSR kernels in complex64/complex128 with the binary before (OLD) and after (NEW) the merge kernel's
# change of 2026-11-25 (ring clipped to the chunk's rows, segmented fix-up, 8 waves for every type),
# beside cuSPARSE in the same run. On the GPU machine, from the repository root:
#   bash bench/results/2026-11-25-h200-fixseg/complex.sh OLD NEW
set -u
OLD=$1; NEW=$2; W=${WORK:-/tmp/cplx}; mkdir -p "$W"
gen() { [ -f "$W/$1.spb" ] || "$NEW" gen "${@:2}" --seed 1 --complex -o "$W/$1.spb" --force > /dev/null; }
gen plu21 powerlaw --rows 4200000 --nnz-per-row 17 --alpha 2.1
gen l3d laplace3d --rows 2000000
# a complex file's --dtype: f32 gives complex64, f64 complex128
for m in plu21 l3d; do
    for dt in c64 c128; do
        for b in OLD NEW; do
            "${!b}" bench "$W/$m.spb" --device gpu --formats csr --dtype "$([ $dt = c64 ] && echo f32 || echo f64)" \
                --reps 20 --json > "$W/$m-$dt-$b.json" || echo "$m $dt $b FAILED"
        done
    done
done
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
for m in ('plu21', 'l3d'):
    for dt in ('c64', 'c128'):
        r = {b: {x['kernel']: x['median_ms'] for x in json.load(open(f'{w}/{m}-{dt}-{b}.json'))['results']} for b in ('OLD', 'NEW')}
        for k in ('csr-merge', 'csr-panels', 'cusparse-csr-alg1', 'cusparse-csr-alg2'):
            if k in r['NEW']:
                print(f"{m:6s} {dt:5s} {k:18s} old {r['OLD'].get(k, 0):8.4f}  new {r['NEW'][k]:8.4f}  new/old {r['NEW'][k] / r['OLD'].get(k, 1):.3f}")
PY
