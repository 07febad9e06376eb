#!/usr/bin/env bash
# One device call: runs one benchmark binary against NVIDIA's driver and
# against several cucpu builds, in alternating rounds, and prints the medians
# side by side; then the cold benchmarks (bench/cold_bench.cpp), each in
# fresh processes. A build is named by
#   NAME=FILE   a prebuilt libcuda.so.1 or its .gz (the GPU machine has no
#               LLVM 19: build with -DCUCPU_STATIC_LLVM=ON here, strip, gzip, carry)
#   DIR         an unpacked source tree, built there (git archive REV | tar -x -C DIR)
#   NAME+trace  an earlier NAME's library again, with CUCPU_TRACE on (the
#               trace's cost; not in the cold rows)
# e.g. (device; carry .ab and .bench-deps):
#   bench/ab-on-gpu.sh start=.ab/libs/start.so.gz now=.ab/libs/now.so.gz
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
for arg in "$@"; do
  if [[ "$arg" == *+trace ]]; then
    names+=("$arg")
    continue
  elif [[ "$arg" == *=* ]]; then
    name=${arg%%=*} file=${arg#*=}
    mkdir -p "/tmp/ab-$name/lib"
    case "$file" in
      *.gz) gzip -dc "$file" > "/tmp/ab-$name/lib/libcuda.so.1" ;;
      *) cp "$file" "/tmp/ab-$name/lib/libcuda.so.1" ;;
    esac
  else
    name=$(basename "$(realpath "$arg")")
    cmake -S "$arg" -B "/tmp/ab-$name" -DCMAKE_BUILD_TYPE=Release -DCUCPU_BUILD_TESTS=OFF -DCUCPU_BUILD_BENCH=OFF >/dev/null &&
      cmake --build "/tmp/ab-$name" -j"$(nproc)" --target cuda >/dev/null || exit 1
  fi
  names+=("$name")
done
libs_of() { if [ "$1" = nvidia ]; then echo "$deps/lib"; else echo "/tmp/ab-${1%+trace}/lib:$deps/lib"; fi; }
# The environment a column runs with: CUCPU_TRACE for NAME+trace.
trace_of() { if [[ "$1" == *+trace ]]; then echo "CUCPU_TRACE=/tmp/ab-trace.json"; else echo "CUCPU_AB=1"; fi; }
args="--benchmark_repetitions=${REPS:-5} --benchmark_report_aggregates_only=true --benchmark_min_time=0.2"
args="$args --benchmark_format=json"
# The held rows (bench::run_held) are cucpu's alone: NVIDIA's driver blocks
# an enqueue once the work queued behind a held host function fills its
# queue, so the hold never opens (seen with 1024 copies on driver 580).
filter="${BENCH_FILTER:-.}"
nvidia_filter=$(echo "$filter" | tr '|' '\n' | grep -v Held | paste -sd'|')
[ "$filter" = . ] && nvidia_filter=-Held  # Google Benchmark's negative filter
[ -z "$nvidia_filter" ] && nvidia_filter=-.  # held rows only: none on NVIDIA's
filter_of() { if [ "$1" = nvidia ]; then echo "$nvidia_filter"; else echo "$filter"; fi; }
for round in $(seq "${ROUNDS:-2}"); do
  for name in "${names[@]}"; do
    env "$(trace_of "$name")" LD_LIBRARY_PATH="$(libs_of "$name")" /tmp/ab_bench $args --benchmark_filter="$(filter_of "$name")" > "$out/$name-$round.json" 2> "$out/$name-$round.err" || echo "$name round $round failed: $(tail -n 3 "$out/$name-$round.err")" >&2
  done
done
python3 bench/ab_table.py "$out" "${ROUNDS:-2}" "${names[@]}" | tee "$out/ab-table.md"
echo
cold_names=()
for name in "${names[@]}"; do [[ "$name" == *+trace ]] || cold_names+=("$name"); done
echo "| cold, per node (median of ${COLD_RUNS:-5} processes) | ${cold_names[*]} |"
for b in ColdCapture100HostNodes ColdInstantiate100HostNodes; do
  row="| $b |"
  for name in "${cold_names[@]}"; do
    vals=$(for i in $(seq "${COLD_RUNS:-5}"); do
      LD_LIBRARY_PATH="$(libs_of "$name")" /tmp/cold_bench --benchmark_filter="$b" --benchmark_format=json 2>/dev/null |
        python3 -c 'import json,sys; print(round(json.load(sys.stdin)["benchmarks"][0]["ns_per_node"] * 1e9, 1))'
    done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    row="$row $vals ns |"
  done
  echo "$row"
done | tee "$out/cold-table.md"
