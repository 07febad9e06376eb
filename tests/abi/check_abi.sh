#!/usr/bin/env bash
# ABI test: every enum value, struct size, alignment and field offset that
# our include/cuda.h declares must equal the toolkit's. Skips (exit 77) when
# the CUDA toolkit or clang is absent.
set -euo pipefail
ours="$1"; toolkit="${2:-/usr/local/cuda/include}"; work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
[ -f "$toolkit/cuda.h" ] || { echo "SKIP: no CUDA toolkit cuda.h at $toolkit"; exit 77; }
command -v clang >/dev/null || { echo "SKIP: clang (for the AST dump) is not installed"; exit 77; }
python3 "$(dirname "$0")/gen_probe.py" "$ours/cuda.h" "$work/probe.c"
cc -D__CUDA_API_VERSION_INTERNAL -I"$ours" "$work/probe.c" -o "$work/ours"
cc -D__CUDA_API_VERSION_INTERNAL -I"$toolkit" "$work/probe.c" -o "$work/theirs"
"$work/ours" > "$work/ours.txt"; "$work/theirs" > "$work/theirs.txt"
if ! diff -u "$work/theirs.txt" "$work/ours.txt"; then echo "ABI MISMATCH"; exit 1; fi
echo "ABI matches: $(grep -c ^enum "$work/ours.txt") enum values, $(grep -c ^size "$work/ours.txt") structs, $(grep -c ^offset "$work/ours.txt") field offsets"
