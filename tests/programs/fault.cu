// A kernel that writes through a wild pointer: cudaErrorIllegalAddress,
// sticky for every call that uses the context, and the process lives on.
// cudaGetLastError reports it once, then clears the last error (driver 580
// and cudart 13.0).
#include "check.h"

__global__ void wild(int* p) { p[threadIdx.x] = 1; }

int main() {
  wild<<<1, 1>>>((int*)0x10);
  CHECK_EQ_ERR(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  CHECK_EQ_ERR(cudaPeekAtLastError(), cudaErrorIllegalAddress);
  CHECK_EQ_ERR(cudaGetLastError(), cudaErrorIllegalAddress);
  CHECK_CUDA(cudaGetLastError());
  int* d = nullptr;
  CHECK_EQ_ERR(cudaMalloc(&d, 16), cudaErrorIllegalAddress);
  std::printf("still alive\n");
  return finish("fault");
}
