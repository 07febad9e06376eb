// Function attributes and occupancy through cudart.
#include "check.h"

__global__ void small(float* x) { x[threadIdx.x] *= 2; }
__global__ void big_shared(float* x) {
  extern __shared__ float buf[];
  buf[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}

int main() {
  cudaFuncAttributes fa{};
  CHECK_CUDA(cudaFuncGetAttributes(&fa, small));
  CHECK(fa.maxThreadsPerBlock == 1024);
  CHECK(fa.numRegs > 0);
  int min_grid = 0, block = 0;
  CHECK_CUDA(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, small, 0, 0));
  CHECK(block > 0 && block <= 1024 && min_grid > 0);
  int per_sm = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, small, 256, 0));
  CHECK(per_sm > 0);
  size_t dyn = 0;
  CHECK_CUDA(cudaOccupancyAvailableDynamicSMemPerBlock(&dyn, big_shared, 1, 256));
  CHECK(dyn >= 48 * 1024);
  CHECK_CUDA(cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024));
  CHECK_CUDA(cudaFuncGetAttributes(&fa, big_shared));
  CHECK(fa.maxDynamicSharedSizeBytes == 96 * 1024);
  float* d;
  CHECK_CUDA(cudaMalloc(&d, 256 * sizeof(float)));
  float h[256];
  for (int i = 0; i < 256; ++i) h[i] = i;
  CHECK_CUDA(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  big_shared<<<1, 256, 80 * 1024>>>(d);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  CHECK(h[0] == 255 && h[255] == 0);
  CHECK_CUDA(cudaFuncSetCacheConfig(small, cudaFuncCachePreferShared));
  cudaFree(d);
  return finish("occupancy");
}
