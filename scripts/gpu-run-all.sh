#!/usr/bin/env bash
# ON the GPU machine: scripts/gpu-test.sh (tests, memcheck, benchmark), then the
# same benchmark with kernel-source variants from .device/variants/<name>/
# (SPARSETOOL_KERNEL_DIR), everything packed into $OUT/results.tgz (the device
# tool returns at most 8 files) and a compact comparison printed last.
#   bash scripts/gpu-run-all.sh   (binaries in .device/bin, see scripts/gpu-build.sh)
#   VMATRICES="uniform powerlaw laplace3d"  matrices the variants run on
#   VFORMATS=csr,ell,hyb,jds,sell           formats the variants run
#   VDTYPES="f32 f64"                       value types the variants run
set -uo pipefail
FINAL=${OUT:-/tmp/out}
export OUT=/tmp/gpu-results
mkdir -p "$OUT" "$FINAL"
BUDGET=${BUDGET:-420} bash scripts/gpu-test.sh .device/bin/sparsetool .device/bin/gpu-tests \
    .device/bin/gpu-unit-tests > "$OUT/run.log" 2>&1
status=$?
sed -n '/================ summary/,$p' "$OUT/run.log" | grep -v '^  ' | head -40
for v in .device/variants/*/; do
    [ -d "$v" ] || continue
    name=$(basename "$v")
    for m in ${VMATRICES:-uniform powerlaw laplace3d}; do
      for f in /tmp/sparsetool-gpu/$m-*.spb; do
        [ -s "$f" ] || continue
        for dt in ${VDTYPES:-f32 f64}; do
            b=$(basename "$f" .spb)
            SPARSETOOL_KERNEL_DIR="$v" timeout 120 .device/bin/sparsetool bench "$f" --dtype "$dt" \
                --reps 30 --formats "${VFORMATS:-csr,ell,hyb,jds,sell}" --json > "$OUT/variant-$name-$b-$dt.json" \
                2> "$OUT/variant-$name-$b-$dt.err" || echo "variant $name $b $dt failed"
        done
      done
    done
done
python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
def best(path, baseline):
    try:
        r = json.load(open(path))
    except Exception:
        return None
    ks = [k for k in r["results"] if bool(k.get("baseline")) == baseline and k["ok"]]
    return min(ks, key=lambda k: k["median_ms"], default=None)
print("\nvariant comparison (best of ours; default kernels vs variant)")
for p in sorted(glob.glob(os.path.join(out, "variant-*.json"))):
    name = os.path.basename(p)[8:-5]
    v, rest = name.split("-", 1)
    b, dt = rest.rsplit("-", 1)
    kind = b.split("-")[0]
    d = best(os.path.join(out, f"bench-{kind}-{dt}.json"), False)
    c = best(os.path.join(out, f"bench-{kind}-{dt}.json"), True)
    x = best(p, False)
    if d and x and c:
        print(f"  {v:6s} {b:28s} {dt}: default {d['kernel']:14s} {d['median_ms']:.4f} | variant {x['kernel']:14s} "
              f"{x['median_ms']:.4f} | cuSPARSE {c['kernel']} {c['median_ms']:.4f}")
PY
cd "$OUT" && tar czf "$FINAL/results.tgz" . && cp summary.txt "$FINAL/" 2>/dev/null
exit $status
