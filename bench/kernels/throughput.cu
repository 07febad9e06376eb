// Kernels of the throughput benchmarks (bench/kernel_throughput_bench.cpp),
// each matched there by the same algorithm written by hand in C++.
// regen.sh makes throughput.sm90.ptx from this file with nvcc.

extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Each block of 256 threads sums 256 elements: shuffles within warps, the
// warps' sums through shared memory, one atomic add per block.
extern "C" __global__ void block_reduce(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float warp_sums[8];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < 8 ? warp_sums[threadIdx.x] : 0.f;
    for (int o = 4; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) atomicAdd(out, v);
  }
}

// C = A * B for n x n row-major matrices, 16 x 16 tiles in shared memory.
extern "C" __global__ void sgemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n) {
  __shared__ float As[16][16], Bs[16][16];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  float acc = 0.f;
  for (int k = 0; k < n; k += 16) {
    As[ty][tx] = A[row * n + k + tx];
    Bs[ty][tx] = B[(k + ty) * n + col];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 16; ++j) acc += As[ty][j] * Bs[j][tx];
    __syncthreads();
  }
  C[row * n + col] = acc;
}

// out = c0 * in + c1 * (sum of the 4 neighbours) at the interior points of a
// w x h row-major grid, from global memory only; border points are not
// written. One thread a point (launched as 32 x 8 blocks).
extern "C" __global__ void stencil5(const float* __restrict__ in, float* __restrict__ out, int w, int h, float c0,
                                   float c1) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
  const int i = y * w + x;
  out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}

// Adds to bins[256] the counts of the bytes of data[0, words) (four bytes a
// word), grid-stride: a block counts into shared bins with shared atomics,
// then adds each nonzero bin to the global one with one atomic.
extern "C" __global__ void histogram256(const unsigned* __restrict__ data, int words, unsigned* __restrict__ bins) {
  __shared__ unsigned s[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) s[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x) {
    const unsigned v = data[i];
    atomicAdd(&s[v & 255u], 1u);
    atomicAdd(&s[(v >> 8) & 255u], 1u);
    atomicAdd(&s[(v >> 16) & 255u], 1u);
    atomicAdd(&s[v >> 24], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x)
    if (s[b]) atomicAdd(&bins[b], s[b]);
}

extern "C" __global__ void empty() {}
