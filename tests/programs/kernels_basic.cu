// <<<>>> launches of ordinary kernels: element-wise, shared memory with
// __syncthreads, atomics, warp intrinsics, a template, dynamic shared memory.
#include "check.h"
#include <vector>

__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void block_sum(const int* in, int* out, int n) {
  __shared__ int s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

__global__ void warp_ops(unsigned* ballots, int* sums) {
  int lane = threadIdx.x & 31;
  unsigned b = __ballot_sync(0xffffffffu, lane % 3 == 0);
  int v = lane;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (lane == 0) {
    ballots[threadIdx.x / 32] = b;
    sums[threadIdx.x / 32] = v;
  }
}

template <typename T>
__global__ void scale(T* x, T f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= f;
}

__global__ void reverse_dyn(int* x, int n) {
  extern __shared__ int buf[];
  int t = threadIdx.x;
  buf[t] = x[t];
  __syncthreads();
  x[t] = buf[n - 1 - t];
}

int main() {
  const int n = 10000;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) { a[i] = i; b[i] = 2 * i; }
  float *da, *db, *dc;
  CHECK_CUDA(cudaMalloc(&da, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&db, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dc, n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  vadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < n; ++i) ok &= c[i] == 3.0f * i;
  CHECK(ok);

  std::vector<int> in(n);
  long long want = 0;
  for (int i = 0; i < n; ++i) { in[i] = i % 97; want += in[i]; }
  int *din, *dout;
  CHECK_CUDA(cudaMalloc(&din, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dout, sizeof(int)));
  CHECK_CUDA(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dout, 0, sizeof(int)));
  block_sum<<<(n + 255) / 256, 256>>>(din, dout, n);
  int got = 0;
  CHECK_CUDA(cudaMemcpy(&got, dout, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(got == want);

  unsigned* dballots;
  int* dsums;
  CHECK_CUDA(cudaMalloc(&dballots, 4 * sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&dsums, 4 * sizeof(int)));
  warp_ops<<<1, 128>>>(dballots, dsums);
  unsigned ballots[4];
  int sums[4];
  CHECK_CUDA(cudaMemcpy(ballots, dballots, sizeof ballots, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(sums, dsums, sizeof sums, cudaMemcpyDeviceToHost));
  for (int w = 0; w < 4; ++w) {
    CHECK(ballots[w] == 0x49249249u);
    CHECK(sums[w] == 496);
  }

  scale<float><<<(n + 127) / 128, 128>>>(da, 0.5f, n);
  CHECK_CUDA(cudaMemcpy(a.data(), da, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(a[100] == 50.0f && a[n - 1] == (n - 1) / 2.0f);

  int rev[64];
  for (int i = 0; i < 64; ++i) rev[i] = i;
  CHECK_CUDA(cudaMemcpy(din, rev, sizeof rev, cudaMemcpyHostToDevice));
  reverse_dyn<<<1, 64, 64 * sizeof(int)>>>(din, 64);
  CHECK_CUDA(cudaMemcpy(rev, din, sizeof rev, cudaMemcpyDeviceToHost));
  CHECK(rev[0] == 63 && rev[63] == 0);

  CHECK_CUDA(cudaDeviceSynchronize());
  cudaFree(da); cudaFree(db); cudaFree(dc); cudaFree(din); cudaFree(dout);
  cudaFree(dballots); cudaFree(dsums);
  return finish("kernels_basic");
}
