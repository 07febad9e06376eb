#!/usr/bin/env bash
# One device call: builds cucpu and the conformance suite on the GPU machine,
# runs the suite against NVIDIA's driver and against cucpu, and prints a
# table of tests that agree and disagree. Results land in $OUT (or ./out).
#   usage (from the repository root, on the GPU machine): tests/conformance/run-on-gpu.sh
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
nv_inc="${CUDA_HOME:-/usr/local/cuda}/include"
# CUCPU_LIB_DIR: a libcuda.so.1 built elsewhere (the GPU machine lacks LLVM
# 19: build it with -DCUCPU_STATIC_LLVM=ON and carry its lib folder).
lib="${CUCPU_LIB_DIR:-/tmp/cucpu-build/lib}"
if [ -z "${CUCPU_LIB_DIR:-}" ]; then
  cmake -S . -B /tmp/cucpu-build -DCMAKE_BUILD_TYPE=Release -DCUCPU_BUILD_TESTS=OFF -DCUCPU_BUILD_BENCH=OFF >/dev/null
  cmake --build /tmp/cucpu-build -j"$(nproc)" --target cuda >/dev/null || exit 1
fi
cmake -S tests/conformance -B /tmp/conf-build -DCONFORMANCE_CUDA_INCLUDE="$nv_inc" \
  -DCONFORMANCE_CUDA_LIBDIR="${CUDA_HOME:-/usr/local/cuda}/lib64/stubs" >/dev/null
cmake --build /tmp/conf-build -j"$(nproc)" >/dev/null || exit 1
# Each test runs in its own process, so a test that crashes or hangs a
# driver is reported as such and the others still run.
run_all() {
  for t in $(/tmp/conf-build/cucpu_conformance --list); do
    timeout 60 /tmp/conf-build/cucpu_conformance --exact "$t" > /tmp/one.txt 2>&1
    rc=$?
    grep -E '^(PASS|FAIL|SKIP|INFO) ' /tmp/one.txt | grep -v '^INFO driver'
    grep -qE "^(PASS|FAIL|SKIP) $t" /tmp/one.txt || echo "FAIL $t: exited with status $rc (crash or hang)"
  done
}
run_all > "$out/conformance-nvidia.txt"
# cucpu presents the GPU's own architecture, so that both sides answer for
# the same compute capability (its default is sm_121: README, CUCPU_ARCH).
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
CUCPU_ARCH="sm_${cc:-90}" LD_LIBRARY_PATH="$lib" run_all > "$out/conformance-cucpu.txt"
python3 tests/conformance/compare.py "$out/conformance-nvidia.txt" "$out/conformance-cucpu.txt" | tee "$out/conformance-table.md"
