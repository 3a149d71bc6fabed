set -u; R=$PWD; B=$R/.device/bin/sparsetool; mkdir -p /tmp/m; cd /tmp/m
for spec in "a16 4000000 14 1.6 1" "a21 4200000 16 2.1 1" "a18s3 4000000 14 1.8 3"; do set -- $spec; [ -f $1.npz ] || $B gen powerlaw --rows $2 --nnz-per-row $3 --alpha $4 --seed $5 -o $1.npz >/dev/null & done
wait; cd $R
export MERGE_SRC=.device/bin/csr_merge_exp.cu ITEMS=12 BLOCKS=4
for m in a21 a16 a18s3; do
  DTYPES=f64 WINS=2 WAVES=16 DEFS="x0:;pin0.25:-DMP_XLD=2 -DMP_PIN=0.25" timeout 60 python3 scripts/merge-variants.py /tmp/m/$m.npz 2>&1 | grep -E "f64.*(merge|cupy)|: " >> $OUT/v.txt
done
cut -c1-100 $OUT/v.txt
