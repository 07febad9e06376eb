#!/bin/sh
# Regenerates the benchmarks' PTX (needs nvcc 13.0).
set -e
cd "$(dirname "$0")"
nvcc -ptx -arch=sm_90 -O3 throughput.cu -o throughput.sm90.ptx
nvcc -ptx -arch=sm_90 -O3 compile_200.cu -o compile_200.sm90.ptx
