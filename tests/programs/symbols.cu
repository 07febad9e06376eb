// Module-scope variables registered by cudart: __device__, __constant__ and
// __managed__, reached through the symbol API and from kernels.
#include "check.h"

__device__ int dev_counter;
__device__ float dev_table[16];
__constant__ float coeffs[4];
__managed__ int managed_value = 5;
__device__ int initialised = 1234;

__global__ void use_symbols(float* out) {
  int t = threadIdx.x;
  out[t] = coeffs[t % 4] * dev_table[t];
  atomicAdd(&dev_counter, 1);
  if (t == 0) managed_value += initialised;
}

int main() {
  float table[16], c[4] = {1, 2, 3, 4};
  for (int i = 0; i < 16; ++i) table[i] = i;
  CHECK_CUDA(cudaMemcpyToSymbol(dev_table, table, sizeof table));
  CHECK_CUDA(cudaMemcpyToSymbol(coeffs, c, sizeof c));
  int zero = 0;
  CHECK_CUDA(cudaMemcpyToSymbol(dev_counter, &zero, sizeof zero));
  CHECK(managed_value == 5);
  float* out;
  CHECK_CUDA(cudaMalloc(&out, 16 * sizeof(float)));
  use_symbols<<<1, 16>>>(out);
  CHECK_CUDA(cudaDeviceSynchronize());
  float h[16];
  CHECK_CUDA(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < 16; ++i) ok &= h[i] == c[i % 4] * i;
  CHECK(ok);
  int counter = 0;
  CHECK_CUDA(cudaMemcpyFromSymbol(&counter, dev_counter, sizeof counter));
  CHECK(counter == 16);
  CHECK(managed_value == 1239);
  managed_value = 1;
  use_symbols<<<1, 16>>>(out);
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK(managed_value == 1235);

  void* addr = nullptr;
  size_t size = 0;
  CHECK_CUDA(cudaGetSymbolAddress(&addr, dev_table));
  CHECK_CUDA(cudaGetSymbolSize(&size, dev_table));
  CHECK(addr != nullptr && size == sizeof table);
  float t5 = 0;
  CHECK_CUDA(cudaMemcpy(&t5, (float*)addr + 5, sizeof t5, cudaMemcpyDeviceToHost));
  CHECK(t5 == 5.0f);
  int init = 0;
  CHECK_CUDA(cudaMemcpyFromSymbol(&init, initialised, sizeof init));
  CHECK(init == 1234);
  // Offset copies and async symbol copies.
  float two[2] = {100, 200};
  CHECK_CUDA(cudaMemcpyToSymbolAsync(dev_table, two, sizeof two, 4 * sizeof(float), cudaMemcpyHostToDevice, 0));
  float back[2] = {};
  CHECK_CUDA(cudaMemcpyFromSymbolAsync(back, dev_table, sizeof back, 4 * sizeof(float), cudaMemcpyDeviceToHost, 0));
  CHECK_CUDA(cudaStreamSynchronize(0));
  CHECK(back[0] == 100 && back[1] == 200);
  CHECK_EQ_ERR(cudaMemcpyToSymbol(dev_table, table, sizeof table + 4), cudaErrorInvalidValue);
  cudaFree(out);
  return finish("symbols");
}
