// A kernel that writes through a wild pointer: cudaErrorIllegalAddress,
// sticky, and the process lives on.
#include "check.h"

__global__ void wild(int* p) { p[threadIdx.x] = 1; }

int main() {
  wild<<<1, 1>>>((int*)0x10);
  CHECK_EQ_ERR(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  CHECK_EQ_ERR(cudaPeekAtLastError(), cudaErrorIllegalAddress);
  CHECK_EQ_ERR(cudaGetLastError(), cudaErrorIllegalAddress);
  CHECK_EQ_ERR(cudaGetLastError(), cudaErrorIllegalAddress);
  int* d = nullptr;
  CHECK_EQ_ERR(cudaMalloc(&d, 16), cudaErrorIllegalAddress);
  std::printf("still alive\n");
  return finish("fault");
}
