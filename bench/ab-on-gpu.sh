#!/usr/bin/env bash
# One device call: builds cucpu from each source tree given and from the
# working tree ("now"), then runs one benchmark binary against NVIDIA's
# driver and each build, in alternating rounds, and prints the medians side
# by side. Trees are unpacked revisions, carried along (git-ignored), e.g.
#   git archive 4f37d29 | tar -x -C .ab/start      (locally)
#   bench/ab-on-gpu.sh .ab/start                   (device; carry .ab and .bench-deps)
# Env: BENCH_FILTER (regex), REPS (repetitions, default 5), ROUNDS (default 2).
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
deps="${BENCH_DEPS:-$PWD/.bench-deps}"
bench/build-against-nvidia.sh /tmp/ab_bench || exit 1
args="--benchmark_repetitions=${REPS:-5} --benchmark_report_aggregates_only=true --benchmark_min_time=0.2"
args="$args --benchmark_format=json --benchmark_filter=${BENCH_FILTER:-.}"
names=(nvidia)
for tree in "$@" .; do
  name=$(basename "$(realpath "$tree")"); [ "$tree" = . ] && name=now
  names+=("$name")
  # The working tree's library may come built (CUCPU_LIB_DIR: the GPU machine has no LLVM 19).
  if [ "$name" = now ] && [ -n "${CUCPU_LIB_DIR:-}" ]; then
    mkdir -p /tmp/ab-now && ln -sfn "$CUCPU_LIB_DIR" /tmp/ab-now/lib
    continue
  fi
  cmake -S "$tree" -B "/tmp/ab-$name" -DCMAKE_BUILD_TYPE=Release -DCUCPU_BUILD_TESTS=OFF -DCUCPU_BUILD_BENCH=OFF >/dev/null &&
    cmake --build "/tmp/ab-$name" -j"$(nproc)" --target cuda >/dev/null || exit 1
done
for round in $(seq "${ROUNDS:-2}"); do
  for name in "${names[@]}"; do
    libs="$deps/lib"; [ "$name" != nvidia ] && libs="/tmp/ab-$name/lib:$libs"
    LD_LIBRARY_PATH="$libs" /tmp/ab_bench $args > "$out/$name-$round.json"
  done
done
python3 bench/ab_table.py "$out" "${ROUNDS:-2}" "${names[@]}" | tee "$out/ab-table.md"
