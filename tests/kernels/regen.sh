#!/usr/bin/env bash
# Regenerates the checked-in images of every kernel source here, so the
# conformance suite builds and runs where no CUDA toolkit exists:
#   ptx/NAME.sm90.ptx      nvcc -ptx -arch=sm_90 -O3
#   ptx/NAME.sm75.ptx      the same for sm_75, where the source compiles
#                          for it (older-ISA coverage)
#   fatbin/NAME.sm90.fatbin nvcc -fatbin -arch=sm_90 (sm_90 SASS + PTX)
#   fatbin/module_api.compute100.fatbin  compute_100 PTX alone: an image
#                          with no code for an older device
# rdc.cu and cdp.cu are built with -rdc=true.
# usage: tests/kernels/regen.sh [NVCC]   (default: $NVCC, else
# /usr/local/cuda/bin/nvcc). Run it after editing any .cu file here and
# commit the results with the source.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
nvcc="${1:-${NVCC:-/usr/local/cuda/bin/nvcc}}"
cd "$here"
mkdir -p ptx fatbin
"$nvcc" --version | tail -n 2
for src in *.cu; do
  name="${src%.cu}"
  flags=()
  case "$name" in rdc | cdp) flags=(-rdc=true) ;; esac  # separable compilation, as CMake's CUDA_SEPARABLE_COMPILATION
  "$nvcc" -ptx -arch=sm_90 -O3 "${flags[@]}" "$src" -o "ptx/$name.sm90.ptx"
  if "$nvcc" -ptx -arch=sm_75 -O3 "${flags[@]}" "$src" -o "ptx/$name.sm75.ptx" 2>/dev/null; then
    echo "$name: sm_90, sm_75, fatbin"
  else
    rm -f "ptx/$name.sm75.ptx"
    echo "$name: sm_90, fatbin (needs a newer target than sm_75)"
  fi
  "$nvcc" -fatbin -arch=sm_90 -O3 "${flags[@]}" "$src" -o "fatbin/$name.sm90.fatbin"
done
"$nvcc" -fatbin -gencode arch=compute_100,code=compute_100 -O3 module_api.cu -o fatbin/module_api.compute100.fatbin
# Images of sources that no longer exist.
for f in ptx/*.ptx fatbin/*.fatbin; do
  base="$(basename "$f")"
  [ -e "${base%%.*}.cu" ] || rm -f "$f"
done
