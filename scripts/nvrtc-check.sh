#!/usr/bin/env bash
# Compiles every CUDA kernel (gpu/kernels/*.cu, both offset widths) with NVRTC on a machine without a GPU:
# NVRTC needs no device, only its library, which NVIDIA publishes on PyPI (nvidia-cuda-nvrtc, CUDA 13, the
# version the GPU machines run). The wheel is fetched once into target/nvrtc; then the unit test
# `every_source_compiles_with_nvrtc` runs with it and must not report itself skipped. With
#   PTXAS=1  also fetches nvidia-cuda-nvcc's ptxas and prints each ELL/SELL kernel's registers and spills (sm_90);
#            PTXAS_FILES="jds sell" picks the sources (default "ell sell").
# CI runs this (.ci/run); a kernel that does not compile fails here instead of on the first GPU run.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${NVRTC_VERSION:-13.0.88}
DIR=target/nvrtc
py=${SPARSETOOL_PYTHON:-python3}
fetch() { # package -> unpacked into $DIR/$1
    if [ ! -d "$DIR/$1" ]; then
        mkdir -p "$DIR/dl"
        "$py" -m pip download -q --disable-pip-version-check --no-deps -d "$DIR/dl" "$1==$VERSION"
        "$py" -m zipfile -e "$(ls "$DIR"/dl/"${1//-/_}"-*.whl | head -1)" "$DIR/$1"
    fi
}
fetch nvidia-cuda-nvrtc
lib=$(cd "$(dirname "$(find "$DIR/nvidia-cuda-nvrtc" -name 'libnvrtc.so.*' ! -name '*alt*' | head -1)")" && pwd)
# cudarc opens libnvrtc.so: name the versioned library so
ln -sf "$(basename "$(ls "$lib"/libnvrtc.so.[0-9]* | head -1)")" "$lib/libnvrtc.so"
mkdir -p "$DIR/ptx"
out=$(LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" SPARSETOOL_PTX_DIR="$PWD/$DIR/ptx" \
    cargo test -q -p sparsetool-gpu --lib every_source_compiles_with_nvrtc -- --nocapture 2>&1) || {
    printf '%s\n' "$out"
    exit 1
}
printf '%s\n' "$out" | grep -E "^test |test result"
if grep -q SKIPPED <<<"$out"; then
    echo "NVRTC was not loaded from $lib" >&2
    exit 1
fi
if [ "${PTXAS:-0}" = 1 ]; then
    fetch nvidia-cuda-nvcc
    ptxas=$(find "$DIR/nvidia-cuda-nvcc" -name ptxas -type f | head -1)
    chmod +x "$ptxas"
    for f in ${PTXAS_FILES:-ell sell}; do
        "$ptxas" -arch=sm_90 -v "$DIR/ptx/$f.ptx" -o /dev/null 2>&1 | grep -E "Compiling entry|Used|spill" |
            paste - - - | sed -E 's/ptxas info *: //g; s/Compiling entry function .([a-z0-9_]+). for .sm_90./\1/;
                s/Function properties for [a-z0-9_]+//; s/Used ([0-9]+) registers.*/\1 registers/'
    done
fi
