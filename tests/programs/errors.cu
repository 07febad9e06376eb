// Launch errors keep cudart's semantics: a bad configuration is reported by
// cudaGetLastError once and is not sticky. (Driver 580 answers a block or
// grid over the limits with CUDA_ERROR_INVALID_VALUE, which cudart reports
// as cudaErrorInvalidValue.)
#include "check.h"
#include <string>

__global__ void k(int* x) { if (x) x[0] = 1; }

int main() {
  k<<<1, 2048>>>(nullptr);
  CHECK_EQ_ERR(cudaPeekAtLastError(), cudaErrorInvalidValue);
  CHECK_EQ_ERR(cudaGetLastError(), cudaErrorInvalidValue);
  CHECK_CUDA(cudaGetLastError());
  k<<<dim3(1, 1, 1 << 20), 1>>>(nullptr);
  CHECK_EQ_ERR(cudaGetLastError(), cudaErrorInvalidValue);
  k<<<1, 32, 1 << 30>>>(nullptr);
  CHECK_EQ_ERR(cudaGetLastError(), cudaErrorInvalidValue);
  k<<<1, 1>>>(nullptr);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  int* d;
  CHECK_CUDA(cudaMalloc(&d, 4));
  CHECK_EQ_ERR(cudaMemcpy(d, nullptr, 4, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  cudaEvent_t e;
  CHECK_CUDA(cudaEventCreate(&e));
  float ms = 0;
  CHECK_EQ_ERR(cudaEventElapsedTime(&ms, e, e), cudaErrorInvalidResourceHandle);  // never recorded
  CHECK_CUDA(cudaEventDestroy(e));
  CHECK(std::string(cudaGetErrorName(cudaErrorInvalidValue)) == "cudaErrorInvalidValue");
  cudaFree(d);
  return finish("errors");
}
