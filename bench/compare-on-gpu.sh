#!/usr/bin/env bash
# One device call: builds cucpu and the benchmark program on the GPU machine,
# runs the same binary against NVIDIA's driver and against cucpu, and prints
# the ratio table. Google Benchmark comes from $BENCH_DEPS (Debian's
# libbenchmark and headers, carried along) when the GPU machine has none.
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
deps="${BENCH_DEPS:-$PWD/.bench-deps}"
cmake -S . -B /tmp/cucpu-build -DCMAKE_BUILD_TYPE=Release -DCUCPU_BUILD_TESTS=OFF -DCUCPU_BUILD_BENCH=OFF >/dev/null
cmake --build /tmp/cucpu-build -j"$(nproc)" --target cuda >/dev/null || exit 1
bench/build-against-nvidia.sh /tmp/cucpu_bench || exit 1
export LD_LIBRARY_PATH="$deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
args="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_min_time=0.2 --benchmark_format=json --benchmark_filter=${BENCH_FILTER:-.}"
/tmp/cucpu_bench $args > "$out/bench-nvidia.json"
LD_LIBRARY_PATH="/tmp/cucpu-build/lib:$LD_LIBRARY_PATH" /tmp/cucpu_bench $args > "$out/bench-cucpu.json"
python3 bench/ratio_table.py "$out/bench-nvidia.json" "$out/bench-cucpu.json" | tee "$out/bench-table.md"
