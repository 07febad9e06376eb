#!/bin/sh
# Builds the runtime-API programs with nvcc into $1, the way a user would:
# nvcc's defaults (static cudart, PTX and SASS for sm_90), plus the variants
# the tests need. usage: build.sh OUT_DIR [NVCC]
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=$1
nvcc=${2:-nvcc}
mkdir -p "$out"
for p in device_props kernels_basic streams_events symbols graphs memory coop printf assert fault errors occupancy runtime_misc thrust_algorithms textures ipc_processes; do
  "$nvcc" -arch=sm_90 -O2 -o "$out/$p" "$here/$p.cu" &
done
wait
"$nvcc" -arch=sm_90 -O2 --default-stream per-thread -o "$out/ptds" "$here/ptds.cu"
"$nvcc" -arch=sm_90 -O2 -rdc=true -o "$out/rdc" "$here/rdc_main.cu" "$here/rdc_lib.cu"
"$nvcc" -arch=sm_90 -O2 -rdc=true -o "$out/dynamic_parallelism" "$here/dynamic_parallelism.cu"
"$nvcc" -gencode arch=compute_90,code=sm_90 -O2 -o "$out/sass_only" "$here/sass_only.cu"
"$nvcc" -arch=sm_90 -O2 -cudart shared -o "$out/kernels_basic_shared" "$here/kernels_basic.cu"
# Green contexts come from the driver API (cudart 13.0 has none): -lcuda.
"$nvcc" -arch=sm_90 -O2 -o "$out/green_contexts" "$here/green_contexts.cu" -lcuda
# NVIDIA's libraries, where the toolkit has them: each program links its
# library as a user's build would (the shared library).
libdir=$(dirname "$(command -v "$nvcc" || echo "$nvcc")")/../lib64
for spec in curand_generators:curand cusparse_products:cusparse cublas_gemm:cublas cufft_transforms:cufft \
            cusolver_factorizations:cusolver cudnn_ops:cudnn; do
  p=${spec%%:*} lib=${spec#*:}
  if [ -e "$libdir/lib$lib.so" ]; then
    extra=
    [ "$lib" = cusolver ] && extra=-lcublas
    "$nvcc" -arch=sm_90 -O2 -o "$out/$p" "$here/$p.cu" -l"$lib" $extra &
  fi
done
wait
