#!/usr/bin/env bash
# The trace's cost per benchmark row: runs each benchmark alone, untraced
# and under CUCPU_TRACE in alternation (PAIRS pairs of processes, default
# 5), and prints the median of each column and the median of the pairs'
# differences, so that a drift in the machine's speed over the run falls
# on both columns alike.
#   usage: bench/trace-cost.sh BENCH_BINARY BENCHMARK_NAME...
#   (each name a benchmark's full name, e.g. BM_LaunchHostFuncEnqueue)
# Env: PAIRS, MIN_TIME (seconds a run, default 0.2), LD_LIBRARY_PATH as the
# binary needs it.
set -uo pipefail
bin=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A run's figure: ns per iteration, or per op or node where the benchmark counts them.
figure() {
  python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))["benchmarks"][0]
for k in ("ns_per_op", "ns_per_node"):
    if k in b:
        print(b[k] * 1e9); break
else:
    print(b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]])' "$1"
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo "| row (${PAIRS:-5} pairs of processes) | untraced | traced | cost (median of the pairs) |"
echo "|---|---|---|---|"
for name in "$@"; do
  : > "$tmp/off" && : > "$tmp/on" && : > "$tmp/diff"
  for i in $(seq "${PAIRS:-5}"); do
    args="--benchmark_filter=^${name}\$ --benchmark_min_time=${MIN_TIME:-0.2} --benchmark_format=json"
    env -u CUCPU_TRACE "$bin" $args > "$tmp/off.json" 2>/dev/null || { echo "| $name | failed |"; continue 2; }
    CUCPU_TRACE="$tmp/t.json" "$bin" $args > "$tmp/on.json" 2>/dev/null || { echo "| $name | failed traced |"; continue 2; }
    off=$(figure "$tmp/off.json") on=$(figure "$tmp/on.json")
    echo "$off" >> "$tmp/off"
    echo "$on" >> "$tmp/on"
    awk -v a="$on" -v b="$off" 'BEGIN {print a - b}' >> "$tmp/diff"
  done
  printf '| %s | %.1f ns | %.1f ns | %+.1f ns |\n' "$name" "$(median < "$tmp/off")" "$(median < "$tmp/on")" "$(median < "$tmp/diff")"
done
