#!/usr/bin/env bash
# One device call: runs one benchmark binary against NVIDIA's driver and
# against prebuilt cucpu libraries (NAME=FILE, FILE a libcuda.so.1 or its
# .gz: the GPU machine has no LLVM 19 to build them), in alternating rounds,
# and prints the medians side by side; then the cold benchmarks, each in
# fresh processes. Libraries are built here and carried, e.g.
#   strip --strip-unneeded -o /tmp/now.so build/portable/lib/libcuda.so.1 && gzip -c /tmp/now.so > .ab/libs/now.so.gz
#   bench/ab-libs-on-gpu.sh start=.ab/libs/start.so.gz now=.ab/libs/now.so.gz    (device; carry .ab and .bench-deps)
# Env: BENCH_FILTER (regex), REPS (default 5), ROUNDS (default 2), COLD_RUNS (default 5).
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
deps="${BENCH_DEPS:-$PWD/.bench-deps}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
bench/build-against-nvidia.sh /tmp/ab_bench || exit 1
g++ -O2 -std=c++17 -I"$cuda/include" -I"$deps/include" -Ibench bench/cold_bench.cpp -o /tmp/cold_bench \
  -L"$cuda/lib64/stubs" -L"$deps/lib" -lbenchmark -lcuda -lpthread || exit 1
names=(nvidia)
for pair in "$@"; do
  name=${pair%%=*} file=${pair#*=}
  mkdir -p "/tmp/ab-$name/lib"
  case "$file" in
    *.gz) gzip -dc "$file" > "/tmp/ab-$name/lib/libcuda.so.1" ;;
    *) cp "$file" "/tmp/ab-$name/lib/libcuda.so.1" ;;
  esac
  names+=("$name")
done
args="--benchmark_repetitions=${REPS:-5} --benchmark_report_aggregates_only=true --benchmark_min_time=0.2"
args="$args --benchmark_format=json --benchmark_filter=${BENCH_FILTER:-.}"
for round in $(seq "${ROUNDS:-2}"); do
  for name in "${names[@]}"; do
    libs="$deps/lib"; [ "$name" != nvidia ] && libs="/tmp/ab-$name/lib:$libs"
    LD_LIBRARY_PATH="$libs" /tmp/ab_bench $args > "$out/$name-$round.json"
  done
done
python3 bench/ab_table.py "$out" "${ROUNDS:-2}" "${names[@]}" | tee "$out/ab-table.md"
echo
echo "| cold, per node (median of ${COLD_RUNS:-5} processes) | ${names[*]} |"
for b in ColdCapture100HostNodes ColdInstantiate100HostNodes; do
  row="| $b |"
  for name in "${names[@]}"; do
    libs="$deps/lib"; [ "$name" != nvidia ] && libs="/tmp/ab-$name/lib:$libs"
    vals=$(for i in $(seq "${COLD_RUNS:-5}"); do
      LD_LIBRARY_PATH="$libs" /tmp/cold_bench --benchmark_filter="$b" --benchmark_format=json 2>/dev/null |
        python3 -c 'import json,sys; print(round(json.load(sys.stdin)["benchmarks"][0]["ns_per_node"] * 1e9, 1))'
    done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    row="$row $vals ns |"
  done
  echo "$row"
done | tee "$out/cold-table.md"
