#!/usr/bin/env bash
# Builds, on THIS machine (no GPU needed), everything the GPU machine runs, and
# copies it into the ignored folder .device/bin/ so it can be carried:
#   .device/bin/sparsetool       the release CLI
#   .device/bin/gpu-tests        the integration tests of sparsetool-gpu (gpu/tests/gpu.rs)
#   .device/bin/gpu-unit-tests   the unit tests of sparsetool-gpu (incl. the NVRTC compile test)
#   .device/bin/gpu-dist-tests   the multi-GPU tests of sparsetool-gpu (gpu/tests/distributed.rs)
# Then, with the device tool:  run(command="bash scripts/gpu-test.sh .device/bin/sparsetool
#   .device/bin/gpu-tests .device/bin/gpu-unit-tests", carry=[".device/bin"])
# and on nvidia-h200-x2:  run(command="bash scripts/gpu-dist.sh .device/bin/sparsetool
#   .device/bin/gpu-dist-tests", carry=[".device/bin"], kind="nvidia-h200-x2")
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .device/bin

# test binaries: take the paths cargo reports instead of guessing hashes
json=$(cargo test --release -p sparsetool-gpu --no-run --message-format=json 2>/dev/null)
paths=$(printf '%s\n' "$json" | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        kinds = m["target"]["kind"]
        print(("unit" if "lib" in kinds else m["target"]["name"]) + " " + m["executable"])
')
echo "test binaries:"
printf '  %s\n' "$paths"
while read -r kind exe; do
    case "$kind" in
        unit) cp "$exe" .device/bin/gpu-unit-tests ;;
        gpu) cp "$exe" .device/bin/gpu-tests ;;
        distributed) cp "$exe" .device/bin/gpu-dist-tests ;;
    esac
done <<< "$paths"

# the CLI last, so the test binaries are there even if the CLI does not build
if [ "${SKIP_CLI:-0}" != 1 ]; then
    cargo build --release -p sparsetool
    cp target/release/sparsetool .device/bin/sparsetool
fi

# without symbols: the binaries travel with the working tree, under the
# device tool's 64 MiB limit for everything carried
for b in sparsetool gpu-tests gpu-unit-tests gpu-dist-tests; do
    [ -f ".device/bin/$b" ] && { strip ".device/bin/$b" 2>/dev/null || true; }
done
ls -la .device/bin
du -sh .device/bin
echo "carry: .device/bin   (64 MiB limit for everything carried)"
