#!/usr/bin/env bash
# ON the GPU machine, from the repository root (binaries from scripts/gpu-build.sh carried in
# .device/bin): `sparsetool calibrate` (the quick profile, timed), `analyze` on a fixture with the
# profile found by UUID and with the shipped one, then, with CORPUS=1, the calibration corpus
# (scripts/gpu-corpus.sh, its variables apply). Everything lands in $OUT (calibrate.tgz, corpus.tgz).
#   bash scripts/gpu-calibrate.sh            NAME=h200-quick CORPUS=1 BUDGET=420
set -uo pipefail
ST=${ST:-.device/bin/sparsetool}
FINAL=${OUT:-/tmp/out}
W=${WORK:-/tmp/sparsetool-calibrate}
NAME=${NAME:-quick}
rm -rf "$W" && mkdir -p "$W/res" "$FINAL"
chmod +x .device/bin/* 2>/dev/null || true
export SPARSETOOL_PTX_CACHE=$W/ptx XDG_CACHE_HOME=$W/cache
nvidia-smi -L > "$W/res/nvidia-smi.txt" 2>&1 || true
t0=$(date +%s)
/usr/bin/time -v "$ST" calibrate --name "$NAME" --save-runs "$W/res/runs" > "$W/res/calibrate.txt" 2> "$W/res/calibrate.err"
echo "calibrate: exit $? in $(( $(date +%s) - t0 )) s" > "$W/res/summary.txt"
"$ST" calibrate --help > /dev/null
cp "$W"/cache/sparsetool/profiles/*.json "$W/res/$NAME.json" 2>/dev/null
f=fixtures/matrices/real/jagmesh7.mtx
"$ST" analyze "$f" > "$W/res/analyze-own.txt" 2>&1; echo "analyze (own profile): exit $?" >> "$W/res/summary.txt"
"$ST" analyze "$f" --profile h100 > "$W/res/analyze-h100.txt" 2>&1
"$ST" analyze "$f" --json > "$W/res/analyze-own.json" 2>&1
grep -h "profile " "$W"/res/analyze-*.txt >> "$W/res/summary.txt"
tail -n 25 "$W/res/calibrate.txt" >> "$W/res/summary.txt"
tar czf "$FINAL/calibrate.tgz" -C "$W/res" .
if [ "${CORPUS:-0}" = 1 ]; then
    BUDGET=${BUDGET:-420} bash scripts/gpu-corpus.sh 2>&1 | tail -n 3 >> "$W/res/summary.txt"
fi
cat "$W/res/summary.txt"
