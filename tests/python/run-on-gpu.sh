#!/usr/bin/env bash
# One device call: builds cucpu, runs each cuda-python script here against
# NVIDIA's driver and against cucpu, and shows where their output differs.
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
# CUCPU_LIB_DIR: a libcuda.so.1 built elsewhere (-DCUCPU_STATIC_LLVM=ON), carried.
lib="${CUCPU_LIB_DIR:-/tmp/cucpu-build/lib}"
if [ -z "${CUCPU_LIB_DIR:-}" ]; then
  cmake -S . -B /tmp/cucpu-build -DCMAKE_BUILD_TYPE=Release -DCUCPU_BUILD_TESTS=OFF -DCUCPU_BUILD_BENCH=OFF >/dev/null
  cmake --build /tmp/cucpu-build -j"$(nproc)" --target cuda >/dev/null || exit 1
fi
status=0
for script in tests/python/*.py; do
  base=$(basename "$script" .py)
  timeout 120 python3 "$script" > "$out/$base-nvidia.txt" 2>&1
  LD_LIBRARY_PATH="$lib" timeout 120 python3 "$script" > "$out/$base-cucpu.txt" 2>&1
  # The device's name is the one line that may differ.
  if diff <(grep -v '^device:' "$out/$base-nvidia.txt") <(grep -v '^device:' "$out/$base-cucpu.txt") > "$out/$base.diff"; then
    echo "$base: same output ($(wc -l < "$out/$base-nvidia.txt") lines)"
  else
    echo "$base: outputs differ"; cat "$out/$base.diff"; status=1
  fi
done
exit $status
