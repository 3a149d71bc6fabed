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
for f in ${REALS:-rajat01 bcsstk13 fidapex6 Groebner_id2003_aug}; do
    for dt in f32 f64; do
        for v in $V; do
            kdir=.device/kv$v; [ -d "$kdir" ] || kdir=
            bin_var=BIN_$v
            SPARSETOOL_KERNEL_DIR=$kdir "${!bin_var:-/tmp/b/sparsetool}" bench fixtures/matrices/real/$f.mtx.gz \
                --device gpu --sweep --json --reps 20 --dtype $dt --formats jds \
                > /tmp/ab/json/real-$f-$dt-cap$v.json 2> /tmp/ab/err || echo "$f $dt $v FAILED: $(tail -c 300 /tmp/ab/err)"
        done
    done
done
tar czf "$OUT/ab.tgz" -C /tmp/ab/json .
python3 scripts/floor-summary.py /tmp/ab/json --formats jds > "$OUT/floor.txt" 2>&1
python3 scripts/floor-summary.py /tmp/ab/json --formats jds --kernels > "$OUT/kernels.txt" 2>&1
cat "$OUT/floor.txt"
