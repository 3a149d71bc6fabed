#!/usr/bin/env python3
"""Refits a quick profile from the runs `sparsetool calibrate --save-runs` kept, with the model terms of this
checkout, keeping the UUID and copy bandwidth of the profile calibrate itself wrote (the runs do not hold them).
    python3 scripts/refit-quick.py bench/results/DATE-GPU-calibrate NAME
reads DIR/runs and DIR/NAME-as-run.json, writes DIR/NAME.json."""
import json
import subprocess
import sys

d, name = sys.argv[1], sys.argv[2]
out = f"{d}/{name}.json"
subprocess.run(["bash", "scripts/calibrate.sh", f"{d}/runs", out, name], check=True)
new = json.load(open(out))
old = json.load(open(f"{d}/{name}-as-run.json"))
merged = {
    "device": new["device"],
    "fitted_on": new["fitted_on"]
    + f"; refit with the model terms of this checkout, UUID and copy bandwidth from the profile"
    f" sparsetool calibrate wrote ({name}-as-run.json)",
    "name": name,
    "uuid": old["uuid"],
    "copy_gbps": old["copy_gbps"],
    "models": new["models"],
}
with open(out, "w") as f:
    f.write(json.dumps(merged, indent=2) + "\n")
print(f"wrote {out}")
