#!/usr/bin/env bash
# ON the GPU machine (call 3): where the matrices below 4M entries with JDS tail chunks lost 3.5-19 % since
# 5052087. Variants: H (the binary of 07ab816), OLD (the binary of 5052087, .device/old/sparsetool.gz), and the
# kernels of 07ab816 with one change each through SPARSETOOL_KERNEL_DIR: T (the tail without dep_launch), S (the
# tail's add without the head-sums branch), O (T, S and the band loop of 5052087: the tail's code of 5052087).
# T, S and O are valid only where the tail goes after the main kernel (below 4M entries).
set -u
export SPARSETOOL_PTX_CACHE=/tmp/ptx
mkdir -p /tmp/b && for f in sparsetool gpu-tests; do gunzip -c .device/bin/$f.gz > /tmp/b/$f; chmod +x /tmp/b/$f; done
gunzip -c .device/old/sparsetool.gz > /tmp/b/sparsetool-old && chmod +x /tmp/b/sparsetool-old
for v in O; do rm -rf .device/kv${v}2; cp -r .device/kv$v .device/kv${v}2; done
V=${V:-H OLD O T S H2 OLD2 O2}
export BIN_OLD=/tmp/b/sparsetool-old BIN_OLD2=/tmp/b/sparsetool-old
ST=/tmp/b/sparsetool ONLY="${ONLY:-pl22-100k pl22-1m fem-100k fem-1m circ-1m}" VARIANTS="$V" \
    FORMATS=jds BUDGET="${BUDGET:-200}" WORK=/tmp/ab OUT=$OUT bash bench/results/2026-11-28-h200-jds-u16/ab.sh
source bench/results/2026-11-29-h200-jds-tail-kernels/real-ab.sh
real_ab "$OUT"
cat "$OUT/floor.txt"
