// The kernels of the bundled image pipeline (samples/image_demo.cpp):
// a separable Gaussian blur through a shared-memory tile, a Sobel edge
// magnitude, a 64-bin histogram with shared-memory atomics, and a block
// reduction (shuffles and __syncthreads) of the edge energy.
// regen.sh turns this into image_pipeline.ptx with nvcc.

#define TILE 16
#define R 2

__constant__ float c_weights[2 * R + 1];

extern "C" __global__ void blur(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  __shared__ float tile[TILE + 2 * R][TILE + 2 * R];
  const int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  // Load the tile with its halo (clamped at the image border).
  for (int dy = threadIdx.y; dy < TILE + 2 * R; dy += TILE)
    for (int dx = threadIdx.x; dx < TILE + 2 * R; dx += TILE) {
      const int sx = min(max(int(blockIdx.x * TILE) + dx - R, 0), w - 1);
      const int sy = min(max(int(blockIdx.y * TILE) + dy - R, 0), h - 1);
      tile[dy][dx] = in[sy * w + sx];
    }
  __syncthreads();
  if (x >= w || y >= h) return;
  float acc = 0.f;
  for (int j = -R; j <= R; ++j)
    for (int i = -R; i <= R; ++i)
      acc += c_weights[j + R] * c_weights[i + R] * tile[threadIdx.y + R + j][threadIdx.x + R + i];
  out[y * w + x] = acc;
}

extern "C" __global__ void sobel(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  auto at = [&](int dx, int dy) {
    const int sx = min(max(x + dx, 0), w - 1), sy = min(max(y + dy, 0), h - 1);
    return in[sy * w + sx];
  };
  const float gx = -at(-1, -1) - 2.f * at(-1, 0) - at(-1, 1) + at(1, -1) + 2.f * at(1, 0) + at(1, 1);
  const float gy = -at(-1, -1) - 2.f * at(0, -1) - at(1, -1) + at(-1, 1) + 2.f * at(0, 1) + at(1, 1);
  out[y * w + x] = sqrtf(gx * gx + gy * gy);
}

extern "C" __global__ void histogram(const float* __restrict__ in, unsigned* __restrict__ bins, int n, float scale) {
  __shared__ unsigned local[64];
  for (int i = threadIdx.x; i < 64; i += blockDim.x) local[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int b = min(int(in[i] * scale), 63);
    atomicAdd(&local[b], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 64; i += blockDim.x) atomicAdd(&bins[i], local[i]);
}

extern "C" __global__ void energy(const float* __restrict__ in, double* __restrict__ total, int n) {
  __shared__ float warp_sums[32];
  float v = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i] * in[i];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < (blockDim.x >> 5) ? warp_sums[threadIdx.x] : 0.f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) atomicAdd(total, double(v));
  }
}
