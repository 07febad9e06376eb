// Dynamic parallelism through cudart, built -rdc=true as CUDA samples and
// CMake's CUDA_SEPARABLE_COMPILATION build it: a recursive quicksort-style
// split that launches children per half, tail launches that see their
// parent's children, and device-side streams.
#include "check.h"

__global__ void fill(int* out, int base, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[base + i] = value;
}

// Halves [lo, hi) until a range of 64 or fewer, which a child fills with its depth.
__global__ void split(int* out, int lo, int hi, int depth) {
  if (threadIdx.x != 0) return;
  if (hi - lo <= 64) {
    fill<<<1, 64>>>(out, lo, hi - lo, depth);
    return;
  }
  const int mid = lo + (hi - lo) / 2;
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  split<<<1, 32, 0, s>>>(out, lo, mid, depth + 1);
  split<<<1, 32, 0, cudaStreamFireAndForget>>>(out, mid, hi, depth + 1);
  cudaStreamDestroy(s);
}

__global__ void total(const int* in, int n, long long* out) {
  long long s = 0;
  for (int i = 0; i < n; ++i) s += in[i];
  *out = s;
}

__global__ void fill_then_total(int* data, int n, long long* sum) {
  fill<<<(n + 127) / 128, 128>>>(data, 0, n, 3);
  total<<<1, 1, 0, cudaStreamTailLaunch>>>(data, n, sum);
}

int main() {
  const int n = 4096;
  int* d;
  long long* sum;
  CHECK_CUDA(cudaMalloc(&d, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&sum, sizeof(long long)));
  CHECK_CUDA(cudaMemset(d, 0, n * sizeof(int)));
  split<<<1, 32>>>(d, 0, n, 0);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  int h[n];
  CHECK_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  bool all = true;
  for (int i = 0; i < n; ++i) all = all && h[i] == 6;  // 4096 / 2^6 = 64
  CHECK(all);
  fill_then_total<<<1, 1>>>(d, n, sum);
  CHECK_CUDA(cudaDeviceSynchronize());
  long long s = 0;
  CHECK_CUDA(cudaMemcpy(&s, sum, sizeof s, cudaMemcpyDeviceToHost));
  CHECK(s == 3LL * n);
  cudaFree(d);
  cudaFree(sum);
  return finish("dynamic_parallelism");
}
