#!/usr/bin/env bash
# old (92d4a25) vs new (2ed5702) `bench --formats hyb,sell` without --sweep: the layouts each binary picks
set -u
FINAL=$OUT; OUT=/tmp/chk; rm -rf $OUT; mkdir -p $OUT $FINAL
mkdir -p /tmp/b && for v in old new; do gunzip -c .device/bin/sparsetool-$v.gz > /tmp/b/$v; done; chmod +x /tmp/b/*
ST=/tmp/b/new; source scripts/corpus-gen.sh
one() { # name file
  for dt in f32 f64; do for v in old new; do
    timeout 60 /tmp/b/$v bench "$2" --device gpu --formats hyb,sell --dtype $dt --reps 20 --json > "$OUT/$1-$dt-$v.json" 2> "$OUT/$1-$dt-$v.err" || echo "$1 $dt $v failed"
  done; done
}
for m in circ-8m l2d-8m fem-8m pl22-8m uni-8m; do ST=/tmp/b/new corpus_gen $m /tmp/m.spb > /dev/null && one $m /tmp/m.spb; done
for r in memplus arrow rajat01 luxembourg; do one real-$r fixtures/matrices/real/$r.mtx.gz; done
python3 - "$OUT" <<'PY'
import json, glob, os, sys
out = sys.argv[1]
def best(p, fmt):
    try: d = json.load(open(p))
    except Exception: return None
    rs = [r for r in d["results"] if r["ok"] and not r.get("baseline") and r["kernel"].startswith(fmt)]
    return min(rs, key=lambda r: r["median_ms"]) if rs else None
runs = sorted({os.path.basename(p).rsplit("-", 1)[0] for p in glob.glob(out + "/*.json")})
print(f"{'run':24s} {'fmt':4s} {'old us':>8s} {'new us':>8s}  old params -> new params")
for r in runs:
    for fmt in ("hyb", "sell"):
        o, n = best(f"{out}/{r}-old.json", fmt), best(f"{out}/{r}-new.json", fmt)
        if not (o and n): print(r, fmt, "missing"); continue
        keep = lambda k: {x: k["params"].get(x) for x in ("hyb_width", "slice", "sigma") if x in k["params"]}
        print(f"{r:24s} {fmt:4s} {o['median_ms']*1e3:8.1f} {n['median_ms']*1e3:8.1f}  {keep(o)} -> {keep(n)}")
PY

tar czf "$FINAL/chk.tgz" -C "$OUT" .
