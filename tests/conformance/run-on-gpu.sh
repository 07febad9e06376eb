#!/usr/bin/env bash
# One device call: builds cucpu and the conformance suite on the GPU machine,
# runs the suite against NVIDIA's driver and against cucpu, and prints a
# table of tests that agree and disagree. Results land in $OUT (or ./out).
#   usage (from the repository root, on the GPU machine): tests/conformance/run-on-gpu.sh
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
nv_inc="${CUDA_HOME:-/usr/local/cuda}/include"
cmake -S . -B /tmp/cucpu-build -DCMAKE_BUILD_TYPE=Release -DCUCPU_BUILD_TESTS=OFF -DCUCPU_BUILD_BENCH=OFF >/dev/null
cmake --build /tmp/cucpu-build -j"$(nproc)" --target cuda >/dev/null || exit 1
cmake -S tests/conformance -B /tmp/conf-build -DCONFORMANCE_CUDA_INCLUDE="$nv_inc" \
  -DCONFORMANCE_CUDA_LIBDIR="${CUDA_HOME:-/usr/local/cuda}/lib64/stubs" >/dev/null
cmake --build /tmp/conf-build -j"$(nproc)" >/dev/null || exit 1
timeout 300 /tmp/conf-build/cucpu_conformance > "$out/conformance-nvidia.txt" 2>&1
LD_LIBRARY_PATH=/tmp/cucpu-build/lib timeout 300 /tmp/conf-build/cucpu_conformance > "$out/conformance-cucpu.txt" 2>&1
python3 tests/conformance/compare.py "$out/conformance-nvidia.txt" "$out/conformance-cucpu.txt" | tee "$out/conformance-table.md"
