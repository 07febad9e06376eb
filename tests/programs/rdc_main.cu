// Relocatable device code: a kernel here calls a device function and reads a
// variable defined in rdc_lib.cu; nvlink joins them.
#include "check.h"

extern __device__ int lib_scale;
__device__ int lib_apply(int x);

__global__ void apply(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = lib_apply(x[i]) + lib_scale;
}

int main() {
  int h[64];
  for (int i = 0; i < 64; ++i) h[i] = i;
  int* d;
  CHECK_CUDA(cudaMalloc(&d, sizeof h));
  CHECK_CUDA(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  apply<<<1, 64>>>(d, 64);
  CHECK_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  CHECK(h[0] == 3 && h[10] == 23);
  cudaFree(d);
  return finish("rdc");
}
