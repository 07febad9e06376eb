#!/usr/bin/env bash
# One device call: the kernel benchmarks against NVIDIA's driver and against
# cucpu (CUCPU_LIB_DIR: a libcuda.so.1 built with -DCUCPU_STATIC_LLVM=ON and
# carried), then cucpu's scaling over 1..16 workers, and the image demo on
# both drivers. Results land in $OUT.
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
deps="${BENCH_DEPS:-$PWD/.bench-deps}"
lib="${CUCPU_LIB_DIR:?set CUCPU_LIB_DIR}"
bench/build-against-nvidia.sh /tmp/kbench || exit 1
filter="${BENCH_FILTER:-Kernel|Hand|Compile|GraphRunKernelNodes}"
args="--benchmark_repetitions=${REPS:-3} --benchmark_report_aggregates_only=true --benchmark_min_time=0.3 --benchmark_filter=$filter"
echo "== nvidia"
LD_LIBRARY_PATH="$deps/lib" /tmp/kbench $args --benchmark_format=json > "$out/kernels-nvidia.json"
echo "== cucpu"
LD_LIBRARY_PATH="$lib:$deps/lib" /tmp/kbench $args --benchmark_format=json > "$out/kernels-cucpu.json"
for w in 1 2 4 8 16; do
  echo "== cucpu, $w workers"
  CUCPU_WORKERS=$w LD_LIBRARY_PATH="$lib:$deps/lib" /tmp/kbench --benchmark_repetitions=2 \
    --benchmark_report_aggregates_only=true --benchmark_min_time=0.2 \
    --benchmark_filter='KernelSaxpy|KernelBlockReduce|KernelSgemm' 2>/dev/null | grep median
done > "$out/scaling.txt"
cmake -DINPUT=samples/kernels/image_pipeline.ptx -DOUTPUT=/tmp/ptx.cpp -DSYMBOL=kImagePipelinePtx -P samples/embed.cmake
g++ -O2 -I"${CUDA_HOME:-/usr/local/cuda}/include" samples/image_demo.cpp /tmp/ptx.cpp -o /tmp/image_demo \
  -L"${CUDA_HOME:-/usr/local/cuda}/lib64/stubs" -lcuda && {
  echo "== image_demo on nvidia"; /tmp/image_demo
  echo "== image_demo on cucpu"; LD_LIBRARY_PATH="$lib" /tmp/image_demo
  echo "== image_demo on cucpu, second run (disk cache)"; LD_LIBRARY_PATH="$lib" /tmp/image_demo
} 2>&1 | tee "$out/demo.txt"
