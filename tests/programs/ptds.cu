// Built with --default-stream per-thread: the NULL stream is the calling
// thread's stream, and the _ptds/_ptsz entries carry the work.
#include "check.h"
#include <thread>

__global__ void fill(int* x, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}

int main() {
  const int n = 1 << 12;
  int *a, *b;
  CHECK_CUDA(cudaMalloc(&a, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&b, n * sizeof(int)));
  auto work = [&](int* x, int v) {
    fill<<<n / 128, 128>>>(x, v, n);
    CHECK_CUDA(cudaMemsetAsync(x, 0, 4 * sizeof(int)));
    CHECK_CUDA(cudaStreamSynchronize(0));
  };
  std::thread t1(work, a, 3), t2(work, b, 4);
  t1.join();
  t2.join();
  int h[6];
  CHECK_CUDA(cudaMemcpy(h, a + 2, 3 * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(h + 3, b + 2, 3 * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(h[0] == 0 && h[1] == 0 && h[2] == 3 && h[3] == 0 && h[5] == 4);
  cudaStream_t s = nullptr;
  unsigned long long id = 0;
  CHECK_CUDA(cudaStreamGetId(s, &id));
  cudaFree(a); cudaFree(b);
  return finish("ptds");
}
