#!/bin/sh
# Regenerates the PTX the compiler's unit tests read, with nvcc 13.0.
set -e
cd "$(dirname "$0")"
for f in basics features faults endless; do
  nvcc -ptx -arch=sm_90 -O3 "$f.cu" -o "$f.sm90.ptx"
done
