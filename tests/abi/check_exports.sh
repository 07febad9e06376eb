#!/usr/bin/env bash
# Every symbol NVIDIA's CUDA 13.0 libcuda exports, ours exports too, and we
# export nothing but cu* symbols. The reference list is the toolkit's stub
# library when present, else the checked-in list taken from it.
set -euo pipefail
lib="$1"; list="$2"; stub="${3:-/usr/local/cuda/lib64/stubs/libcuda.so}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
if [ -f "$stub" ]; then nm -D --defined-only "$stub" | awk '{print $3}' | sed 's/@.*//' | sort -u > "$work/ref"
else sort -u "$list" > "$work/ref"; fi
nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u > "$work/ours"
missing=$(comm -23 "$work/ref" "$work/ours" | wc -l)
extra=$(grep -vc '^cu' "$work/ours" || true)
echo "reference: $(wc -l < "$work/ref") symbols; missing from ours: $missing; non-cu exports: $extra"
comm -23 "$work/ref" "$work/ours" | head
[ "$missing" -eq 0 ] && [ "$extra" -eq 0 ]
