// A failed device assert: the launch's synchronize gives cudaErrorAssert,
// and the error is sticky for every later call.
#include "check.h"
#include <cassert>

__global__ void check_positive(const int* x) { assert(x[threadIdx.x] > 0); }

int main() {
  int* d;
  CHECK_CUDA(cudaMalloc(&d, 4 * sizeof(int)));
  int h[4] = {1, 2, -3, 4};
  CHECK_CUDA(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  check_positive<<<1, 4>>>(d);
  CHECK_EQ_ERR(cudaDeviceSynchronize(), cudaErrorAssert);
  CHECK_EQ_ERR(cudaGetLastError(), cudaErrorAssert);
  void* p = nullptr;
  CHECK_EQ_ERR(cudaMalloc(&p, 16), cudaErrorAssert);
  CHECK_EQ_ERR(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaErrorAssert);
  return finish("assert");
}
