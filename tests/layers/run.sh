#!/bin/sh
# The layer test: src/'s includes point only down the stack, and the check
# itself fails on a tree where one points up (exec including core).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
python3 "$here/check_layers.py" "$here/../../src" || exit 1
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for l in api core exec copy ptx base; do mkdir -p "$tmp/$l"; done
printf '#include "core/stream.h"\n' > "$tmp/exec/upward.cpp"
if python3 "$here/check_layers.py" "$tmp" > "$tmp/out.txt"; then
  echo "the check passed a tree where exec includes core"
  exit 1
fi
grep -q "exec/upward.cpp:1" "$tmp/out.txt" || { echo "the check did not name the upward include"; cat "$tmp/out.txt"; exit 1; }
echo "an upward include is caught"
