// Device printf: the output is checked by the test driver against the
// expected lines; the program itself checks that the launch succeeded.
#include "check.h"

__global__ void say(int base) {
  if (threadIdx.x < 3) printf("thread %d says %d %.2f %s\n", threadIdx.x, base + threadIdx.x, 1.5f * threadIdx.x, "hi");
}

int main() {
  say<<<1, 32>>>(100);
  CHECK_CUDA(cudaDeviceSynchronize());
  std::fflush(stdout);
  return finish("printf");
}
