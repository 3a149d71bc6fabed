# Sourced by this folder's call scripts (one copy of the loop they ran): real_ab DIR runs the variants $V of an A/B
# over the real matrices $REALS (bench --sweep --formats jds, f32 and f64), each variant V with the binary $BIN_V
# (default /tmp/b/sparsetool) and, where .device/kvV exists, SPARSETOOL_KERNEL_DIR=.device/kvV; the results join
# ab.sh's in /tmp/ab/json, all packed into DIR/ab.tgz, with DIR/floor.txt and DIR/kernels.txt
# (scripts/floor-summary.py).
real_ab() {
    local f dt v kdir bin_var
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
    tar czf "$1/ab.tgz" -C /tmp/ab/json .
    python3 scripts/floor-summary.py /tmp/ab/json --formats jds > "$1/floor.txt" 2>&1
    python3 scripts/floor-summary.py /tmp/ab/json --formats jds --kernels > "$1/kernels.txt" 2>&1
}
