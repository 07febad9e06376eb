#!/bin/sh
# Builds the darktrace shim into $1 (default: ./out) as libcuda.so.1.
# Run a program under it: LD_LIBRARY_PATH=$1 ./prog 2>trace.txt
set -e
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../src
out=${1:-$here/out}
mkdir -p "$out"
python3 "$here/gen.py" "$here/../procaddr/exports-13.0.txt" "$out"
cc -O1 -g -fPIC -I"$out" -c "$here/darktrace.c" -o "$out/darktrace.o"
c++ -O1 -g -fPIC -std=c++17 -I"$src" -c "$here/integrity_glue.cpp" -o "$out/glue.o"
c++ -O1 -g -fPIC -std=c++17 -I"$src" -c "$src/core/integrity_hash.cpp" -o "$out/integrity_hash.o"
c++ -shared -o "$out/libcuda.so.1" "$out/darktrace.o" "$out/stubs.S" "$out/glue.o" "$out/integrity_hash.o" -ldl -lpthread
