#!/bin/sh
# Builds the benchmark programs with nvcc and runs each under cucpu (and,
# where the machine has NVIDIA's driver, set NVIDIA=1 to run them there too).
# ROUNDS_AB=1 runs each program a second time with CUCPU_LOOP_ROUNDS=0 (the
# compiler's round loops off: the before of its table row).
# usage: bench/programs/run.sh [CUCPU_BIN_DIR]   (default build/release/bin)
set -e
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/release/bin}
out=$(mktemp -d)
for p in thrust_sort transcendentals option_pricing grid_reduce row_sums first_touch; do
  nvcc -arch=sm_90 -O2 -o "$out/$p" "$here/$p.cu"
  echo "== $p on cucpu (compile times on stderr)"
  CUCPU_COMPILE_TIMES=1 "$bin/cucpu" run -- "$out/$p"
  if [ "${ROUNDS_AB:-0}" = 1 ]; then echo "== $p on cucpu, round loops off"; CUCPU_LOOP_ROUNDS=0 "$bin/cucpu" run -- "$out/$p"; fi
  if [ "${NVIDIA:-0}" = 1 ]; then echo "== $p on NVIDIA's driver"; "$out/$p"; fi
done
rm -rf "$out"
