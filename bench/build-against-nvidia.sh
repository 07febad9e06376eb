#!/usr/bin/env bash
# Builds the benchmark program against NVIDIA's cuda.h and libcuda stub, so
# that one binary runs on either driver. Google Benchmark comes from
# $BENCH_DEPS (Debian's libbenchmark and headers, carried along) when the
# GPU machine has none. Used by compare-on-gpu.sh and ab-on-gpu.sh.
#   usage: bench/build-against-nvidia.sh OUTPUT_BINARY
set -uo pipefail
deps="${BENCH_DEPS:-$PWD/.bench-deps}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
g++ -O3 -march=native -std=c++17 -c bench/hand_kernels.cpp -o /tmp/hand_kernels.o || exit 1
exec g++ -O2 -std=c++17 -I"$cuda/include" -I"$deps/include" -Ibench bench/stream_bench.cpp bench/copy_bench.cpp \
  bench/graph_bench.cpp bench/kernel_bench.cpp bench/kernel_throughput_bench.cpp bench/green_bench.cpp /tmp/hand_kernels.o -o "$1" \
  -L"$cuda/lib64/stubs" -L"$deps/lib" -lbenchmark -lcuda -lpthread
