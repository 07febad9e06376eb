#!/usr/bin/env bash
# Rebuilds the image-intake samples (read by tests/unit/image_test.cpp)
# from add_one.cu and scale.cu with nvcc 13.0. Run it from anywhere; it
# writes next to itself. The samples are checked in: the tests do not need
# nvcc.
set -euo pipefail
cd "$(dirname "$0")"
CUDA=${CUDA:-/usr/local/cuda}
NVCC="$CUDA/bin/nvcc"
FATBINARY="$CUDA/bin/fatbinary"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The PTX nvcc emits, to compare the fatbins' texts against.
"$NVCC" -ptx -arch=compute_75 add_one.cu -o add_one.compute_75.ptx
"$NVCC" -ptx -arch=compute_90 add_one.cu -o add_one.compute_90.ptx
"$NVCC" -ptx -arch=compute_75 scale.cu -o scale.compute_75.ptx
# The same text claiming an older PTX ISA, to order entries by ISA version.
sed 's/^\.version 9\.0$/.version 8.5/' add_one.compute_75.ptx > add_one.compute_75.isa85.ptx

# PTX for one virtual architecture, in each compression nvcc offers:
# default and balance are zstd (flag 0x8000), size is zstd at a higher
# level, speed is an LZ4 block (0x2000), none stores the text.
"$NVCC" -fatbin -gencode arch=compute_75,code=compute_75 add_one.cu -o add_one.compute_75.fatbin
for mode in size speed none; do
  "$NVCC" -fatbin -gencode arch=compute_75,code=compute_75 --compress-mode=$mode add_one.cu \
    -o add_one.compute_75.$mode.fatbin
done
# fatbinary's other algorithms: 1 is a zlib stream (0x1000), 3 an LZ4
# frame (0x4000; fatbinary also falls back to it for images too large for
# an LZ4 block).
"$FATBINARY" -64 --compress-algorithm=1 --create=add_one.compute_75.zlib.fatbin \
  --image3=kind=ptx,sm=75,file=add_one.compute_75.ptx
"$FATBINARY" -64 --compress-algorithm=3 --create=add_one.compute_75.lz4frame.fatbin \
  --image3=kind=ptx,sm=75,file=add_one.compute_75.ptx

# PTX for two virtual architectures; and three entries listed out of order
# (compute_75 ISA 9.0, compute_90, compute_75 ISA 8.5).
"$NVCC" -fatbin -gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=compute_90 add_one.cu \
  -o add_one.compute_75_90.fatbin
"$FATBINARY" -64 --create=add_one.order.fatbin \
  --image3=kind=ptx,sm=75,file=add_one.compute_75.ptx \
  --image3=kind=ptx,sm=90,file=add_one.compute_90.ptx \
  --image3=kind=ptx,sm=75,file=add_one.compute_75.isa85.ptx

# SASS only, a bare cubin, and -arch=sm_75 (SASS and PTX).
"$NVCC" -fatbin -gencode arch=compute_75,code=sm_75 add_one.cu -o add_one.sm_75.fatbin
"$NVCC" -cubin -arch=sm_75 add_one.cu -o add_one.sm_75.cubin
"$NVCC" -fatbin -arch=sm_75 add_one.cu -o add_one.arch_sm_75.fatbin

# A host object's .nv_fatbin: two translation units' containers back to
# back, as a program holds them (each __fatBinC_Wrapper_t points at one).
"$NVCC" -c -gencode arch=compute_75,code=compute_75 add_one.cu -o "$tmp/add_one.o"
"$NVCC" -c -gencode arch=compute_75,code=compute_75 scale.cu -o "$tmp/scale.o"
ld -r "$tmp/add_one.o" "$tmp/scale.o" -o "$tmp/both.o"
objcopy -O binary --only-section=.nv_fatbin "$tmp/both.o" two_units.nv_fatbin

# Separate compilation (-rdc): each object's prelinked fatbin (SASS and
# PTX, in __nv_relfatbin) and the device link's fatbin (SASS only). A
# version-2 wrapper points at the linked one and lists the prelinked ones.
"$NVCC" -dc -arch=sm_75 add_one.cu -o "$tmp/add_one.rdc.o"
"$NVCC" -dc -arch=sm_75 scale.cu -o "$tmp/scale.rdc.o"
"$NVCC" -dlink -arch=sm_75 -Xfatbin -compress-all "$tmp/add_one.rdc.o" "$tmp/scale.rdc.o" -o "$tmp/dlink.o"
objcopy -O binary --only-section=__nv_relfatbin "$tmp/add_one.rdc.o" add_one.rdc.relfatbin
objcopy -O binary --only-section=__nv_relfatbin "$tmp/scale.rdc.o" scale.rdc.relfatbin
objcopy -O binary --only-section=.nv_fatbin "$tmp/dlink.o" rdc.linked.fatbin
