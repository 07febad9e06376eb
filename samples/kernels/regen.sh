#!/bin/sh
# Regenerates the PTX the bundled demo loads (needs nvcc 13.0).
set -e
cd "$(dirname "$0")"
nvcc -ptx -arch=sm_75 -O3 image_pipeline.cu -o image_pipeline.ptx
