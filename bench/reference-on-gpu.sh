#!/usr/bin/env bash
# The one command behind docs/performance.md's table: one device call that
# runs one benchmark binary (built against NVIDIA's cuda.h) against NVIDIA's
# driver and against a cucpu libcuda.so.1, the cold rows in fresh processes
# alternating the two, and prints the table (bench/reference_table.py).
#   usage (device; carry .ab and .bench-deps):
#     bench/reference-on-gpu.sh .ab/libs/now.so.gz
# The library: a Release build with -DCUCPU_STATIC_LLVM=ON (the GPU machine
# has no LLVM 19), stripped and gzipped. Env: REPS (default 3), COLD_RUNS
# (default 5), OUT (default ./out).
set -uo pipefail
lib="${1:?usage: bench/reference-on-gpu.sh LIBCUDA(.gz)}"
out="${OUT:-$PWD/out}"
mkdir -p "$out" /tmp/ref-cucpu
deps="${BENCH_DEPS:-$PWD/.bench-deps}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
case "$lib" in
  *.gz) gzip -dc "$lib" > /tmp/ref-cucpu/libcuda.so.1 ;;
  *) cp "$lib" /tmp/ref-cucpu/libcuda.so.1 ;;
esac
bench/build-against-nvidia.sh /tmp/ref_bench || exit 1
g++ -O2 -std=c++17 -I"$cuda/include" -I"$deps/include" -Ibench bench/cold_bench.cpp -o /tmp/ref_cold \
  -L"$cuda/lib64/stubs" -L"$deps/lib" -lbenchmark -lcuda -lpthread || exit 1
export LD_LIBRARY_PATH="$deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rows='BM_EmptyKernelLaunch|BM_MemcpyDtoDAsync256Enqueue$|BM_Batch3D_256x1KiB|BM_LaunchHostFuncEnqueue$|BM_HostFuncLatency|BM_StreamQueryIdle|BM_StreamSynchronizeIdle|BM_StreamGetPriority|BM_DriverGetVersion|BM_EventRecordStreamWait|BM_CaptureHostNodes|BM_GraphInstantiate|BM_GraphRun(Kernel|Host)Nodes|BM_Kernel(Saxpy|BlockReduce|Sgemm|Stencil|Histogram)|BM_Hand|BM_Compile200'
args=(--benchmark_repetitions="${REPS:-3}" --benchmark_report_aggregates_only=true --benchmark_filter="$rows" --benchmark_format=json)
# The engine rows against NVIDIA's driver (the kernel rows run there on the GPU: not in the table).
/tmp/ref_bench "${args[@]}" > "$out/ref-nvidia.json"
LD_LIBRARY_PATH="/tmp/ref-cucpu:$LD_LIBRARY_PATH" /tmp/ref_bench "${args[@]}" > "$out/ref-cucpu.json"
cold_nv=() cold_ours=()
for i in $(seq "${COLD_RUNS:-5}"); do
  /tmp/ref_cold --benchmark_format=json > "$out/cold-nvidia-$i.json" && cold_nv+=("$out/cold-nvidia-$i.json")
  LD_LIBRARY_PATH="/tmp/ref-cucpu:$LD_LIBRARY_PATH" /tmp/ref_cold --benchmark_format=json > "$out/cold-cucpu-$i.json" &&
    cold_ours+=("$out/cold-cucpu-$i.json")
done
join() { local IFS=,; echo "$*"; }
python3 bench/reference_table.py "$(join "$out/ref-nvidia.json" "${cold_nv[@]}")" \
  "$(join "$out/ref-cucpu.json" "${cold_ours[@]}")" | tee "$out/reference-table.md"
