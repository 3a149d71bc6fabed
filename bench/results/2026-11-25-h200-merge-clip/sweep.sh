#!/usr/bin/env bash
# The merge kernel's ring clipped to the chunk's rows (MP_CLIP=1) or not, its fix-up summing runs of one row
# in the warp first (MP_FIXSEG=1) or not, windows of 2 and 4 (x32 rows),
# 8 and 16 waves, with the carry fix-up timed alone; the corpus's uncapped power laws and a stencil,
# FEM and uniform matrix for regressions. The runs here set DEFS to switches (MP_CLIP, MP_FIXSEG, MP_PAD) of the
# kernel of that day, which the shipped kernel no longer has (README.md). Run on the GPU machine from the
# repository root:
#   bash bench/results/2026-11-25-h200-merge-clip/sweep.sh .device/bin/sparsetool
set -u
ST=$1; W=${WORK:-/tmp/clip}; mkdir -p "$W"
gen() { [ -f "$W/$1.npz" ] || "$ST" gen "${@:2}" --seed 1 -o "$W/$1.npz" --force > /dev/null; }
gen plu16 powerlaw --rows 4000000 --nnz-per-row 14 --alpha 1.6
gen plu21 powerlaw --rows 4200000 --nnz-per-row 17 --alpha 2.1
gen plu24 powerlaw --rows 4000000 --nnz-per-row 14 --alpha 2.4
gen pl20 powerlaw --rows 6000000 --nnz-per-row 10 --alpha 2.0 --max-row-len 1000
gen uni uniform --rows 4200000 --nnz-per-row 16
gen l3d laplace3d --rows 2000000
gen fem fem --rows 1800000 --nnz-per-row 30
gen l2d laplace2d --rows 16800000 --nnz-per-row 5
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
ITEMS=12 BLOCKS=4 WINS=${WINS:-2,4} WAVES=${WAVES:-8,16} FIXUP=1 DEFS=${DEFS:-'shipped:'} \
    python3 scripts/merge-variants.py "$W"/{plu16,plu21,plu24,pl20,uni,l3d,fem,l2d}.npz
