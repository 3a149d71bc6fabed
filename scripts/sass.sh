#!/usr/bin/env bash
# Prints the SASS (sm_90) of GPU kernels, on a machine without a GPU, to see how ptxas scheduled a loop (which loads
# issue before the first FMA) and how many registers a kernel takes:
#   bash scripts/sass.sh jds spmv_jds_f64 [spmv_jds_f64_u16 ...]      # FILE (gpu/kernels/FILE.cu) then kernels
# Each kernel's SASS goes to target/nvrtc/sass/<kernel>.sass (instructions only, addresses stripped); its register
# and spill line is printed. The PTX comes from scripts/nvrtc-check.sh (NVRTC, as the GPU machines compile it, with
# SPARSETOOL_KERNEL_DIR honoured); ptxas, cuobjdump and nvdisasm come from NVIDIA's wheels on PyPI, fetched once.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 2,4p "$0"; exit 1; }
file=$1; shift
DIR=target/nvrtc
py=${SPARSETOOL_PYTHON:-python3}
PTXAS=1 PTXAS_FILES="$file" bash scripts/nvrtc-check.sh > /dev/null
fetch() { # package version -> unpacked into $DIR/$1
    if [ ! -d "$DIR/$1" ]; then
        mkdir -p "$DIR/dl"
        "$py" -m pip download -q --disable-pip-version-check --no-deps -d "$DIR/dl" "$1==$2"
        "$py" -m zipfile -e "$(ls "$DIR"/dl/"${1//-/_}"-*.whl | head -1)" "$DIR/$1"
    fi
}
# the oldest CUDA 13 releases of these two on PyPI (13.0's are not published there)
fetch nvidia-cuda-cuobjdump 13.2.86
fetch nvidia-cuda-nvdisasm 13.2.78
ptxas=$(find "$DIR/nvidia-cuda-nvcc" -name ptxas -type f | head -1)
cuobjdump=$(find "$DIR/nvidia-cuda-cuobjdump" -name cuobjdump -type f | head -1)
nvdisasm_dir=$(dirname "$(find "$DIR/nvidia-cuda-nvdisasm" -name nvdisasm -type f | head -1)")
chmod +x "$ptxas" "$cuobjdump" "$nvdisasm_dir/nvdisasm"
mkdir -p "$DIR/sass"
cubin="$DIR/sass/$file.cubin"
info=$("$ptxas" -arch=sm_90 -v "$DIR/ptx/$file.ptx" -o "$cubin" 2>&1)
for k in "$@"; do
    line=$(grep -E "Compiling entry|Used|spill" <<< "$info" | paste - - - | grep "entry function '$k'" || true)
    [ -n "$line" ] || { echo "$k: no such kernel in $file.cu" >&2; exit 1; }
    sed -E "s/ptxas info *: //g; s/Compiling entry function '[^']*' for '[^']*'//; s/^[[:space:]]+//;
        s/Used ([0-9]+) registers.*/\1 registers/; s/^/$k: /" <<< "$line"
    PATH="$nvdisasm_dir:$PATH" "$cuobjdump" -sass -fun "$k" "$cubin" |
        sed -nE 's@^ +/\*[0-9a-f]{4}\*/ +([^;]*);.*@\1@p' > "$DIR/sass/$k.sass"
    [ -s "$DIR/sass/$k.sass" ] || { echo "$k: no such kernel in $file.cu" >&2; exit 1; }
    echo "  $(wc -l < "$DIR/sass/$k.sass") instructions -> $DIR/sass/$k.sass"
done
