#!/bin/sh
# Builds the darktrace shim into $1 (default: ./out) as libcuda.so.1.
# Run a program under it: LD_LIBRARY_PATH=$1 ./prog 2>trace.txt
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/out}
mkdir -p "$out"
python3 "$here/gen.py" "$here/../procaddr/exports-13.0.txt" "$out"
cc -O1 -g -fPIC -shared -I"$out" -o "$out/libcuda.so.1" "$here/darktrace.c" "$out/stubs.S" -ldl -lpthread
