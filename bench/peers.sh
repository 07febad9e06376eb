#!/usr/bin/env bash
# The throughput kernels on three peers in one run, here (no GPU needed):
# cucpu (a libcuda.so.1 in CUCPU_LIB_DIR) and the hand-written C++ in the
# binary build-against-nvidia.sh makes, then PoCL (opencl_bench.cpp) on the
# OpenCL C of the same kernels. Each peer gets every core: cucpu's workers
# and PoCL's threads are THREADS (default: one a core), the hand-written C++
# always runs one thread a core.
# Needs Debian's libbenchmark-dev, ocl-icd-opencl-dev, opencl-headers and
# pocl-opencl-icd, and a CUDA toolkit's cuda.h and libcuda stub (CUDA_HOME).
#   usage: CUCPU_LIB_DIR=DIR [OUT=DIR] bench/peers.sh   (from the repository root)
set -uo pipefail
lib="${CUCPU_LIB_DIR:?set CUCPU_LIB_DIR to the directory of a cucpu libcuda.so.1}"
out="${OUT:-$PWD/out}"
threads="${THREADS:-$(nproc)}"
mkdir -p "$out"
bench/build-against-nvidia.sh /tmp/peers_cuda_bench || exit 1
g++ -O2 -std=c++17 -Ibench bench/opencl_bench.cpp -o /tmp/peers_opencl_bench -lOpenCL -lbenchmark -lpthread || exit 1
args=(--benchmark_repetitions="${REPS:-3}" --benchmark_report_aggregates_only=true)
echo "== cucpu and hand-written C++ ($threads threads)"
CUCPU_WORKERS=$threads LD_LIBRARY_PATH="$lib" /tmp/peers_cuda_bench "${args[@]}" \
  --benchmark_filter='Saxpy|Reduce|Sgemm|Stencil|Histogram' \
  --benchmark_out="$out/peers-cuda.json" --benchmark_out_format=json
echo "== PoCL ($threads threads)"
POCL_MAX_PTHREAD_COUNT=$threads /tmp/peers_opencl_bench "${args[@]}" \
  --benchmark_out="$out/peers-opencl.json" --benchmark_out_format=json
