// Built with SASS only (no PTX): the first launch gives
// cudaErrorNoKernelImageForDevice on cucpu, which cannot run SASS. On the GPU
// the same binary runs; the test driver expects each driver's answer.
#include "check.h"
#include <cstring>

__global__ void k(int* x) { *x = 42; }

int main(int argc, char** argv) {
  bool expect_image_error = argc > 1 && std::strcmp(argv[1], "--no-image") == 0;
  int* d;
  CHECK_CUDA(cudaMalloc(&d, sizeof(int)));
  k<<<1, 1>>>(d);
  cudaError_t e = cudaGetLastError();
  if (expect_image_error) {
    CHECK(e == cudaErrorNoKernelImageForDevice);
  } else {
    CHECK(e == cudaSuccess);
    int h = 0;
    CHECK_CUDA(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    CHECK(h == 42);
  }
  return finish("sass_only");
}
