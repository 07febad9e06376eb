#!/bin/sh
# On the GPU machine: builds the darktrace shim, the integrity probe and the
# runtime-API programs, runs each program plainly and under the shim against
# NVIDIA's driver. Traces and outputs go to $OUT (or ./trace-out).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-$PWD/trace-out}
mkdir -p "$out"
work=$(mktemp -d)
real=$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}')
"$here/build.sh" "$work/dt" >/dev/null
cc -O1 -o "$work/integrity_probe" "$here/integrity_probe.c" -ldl -lpthread
"$work/integrity_probe" "$real" > "$out/integrity.txt" 2>&1
"$root/tests/programs/build.sh" "$work/progs" > "$out/build.txt" 2>&1
for p in "$work"/progs/*; do
  name=$(basename "$p")
  echo "== $name (plain)"
  timeout 60 "$p" 2>&1; echo "rc=$?"
  echo "== $name (traced)"
  LD_LIBRARY_PATH="$work/dt" DT_REAL="$real" timeout 60 "$p" 2> "$work/$name.trace"; echo "rc=$?"
done > "$out/programs.txt" 2>&1
CUDA_MODULE_LOADING=EAGER LD_LIBRARY_PATH="$work/dt" DT_REAL="$real" timeout 60 "$work/progs/kernels_basic" > /dev/null 2> "$work/kernels_basic_eager.trace"
tar -C "$work" -czf "$out/traces.tgz" $(cd "$work" && ls *.trace)
