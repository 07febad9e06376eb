// Loops a block's threads go round together: grid- and block-stride loops
// (32- and 64-bit indices, counting down, 2D blocks), a uniform trip count,
// early exits, loops only some threads enter, and loops before barriers
// and warp collectives.
#include <cooperative_groups.h>
extern "C" __global__ void grid_stride_map(const float* in, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = sqrtf(in[i]) * 3.0f + static_cast<float>(i);
}

extern "C" __global__ void grid_stride_2d_block(const int* in, int* out, int n) {
  const int per = blockDim.x * blockDim.y;
  for (int i = blockIdx.x * per + threadIdx.y * blockDim.x + threadIdx.x; i < n; i += per * gridDim.x)
    out[i] = in[i] * 7 - i;
}

extern "C" __global__ void grid_stride_wide_index(const long long* in, long long* out, unsigned long long n) {
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<size_t>(blockDim.x) * gridDim.x)
    out[i] = in[i] ^ static_cast<long long>(i * 0x9E3779B97F4A7C15ull);
}

extern "C" __global__ void countdown_stride(int* out, int n) {
  for (int i = n - 1 - static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i >= 0; i -= blockDim.x * gridDim.x)
    out[i] += i + 1;
}

// blockDim.x a power of two, at most 1024; block b sums row b of `in` (n wide).
extern "C" __global__ void block_stride_then_tree(const int* in, int* sums, int n) {
  __shared__ int part[1024];
  int acc = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += in[blockIdx.x * n + i] * (i % 5 + 1);
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = part[0];
}

extern "C" __global__ void column_sums(const float* a, float* out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0.0f;
  for (int r = 0; r < rows; ++r) s += a[r * cols + c];
  out[c] = s;
}

extern "C" __global__ void stride_with_break(const int* in, int* out, int n, int stop) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  int count = 0;
  for (int i = g; i < n; i += blockDim.x * gridDim.x) {
    if (in[i] == stop) break;
    count += in[i];
  }
  out[g] = count;
}

extern "C" __global__ void stride_some_threads(const int* in, int* out, int n, int active) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (static_cast<int>(threadIdx.x) < active)
    for (int i = g; i < n; i += blockDim.x * gridDim.x) out[i] = in[i] + 1;
}

// blockDim.x a multiple of 32.
extern "C" __global__ void stride_then_shuffle(const int* in, int* out, int n) {
  int acc = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) acc += in[i];
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}

// Odd lanes vote first, so the block's threads reach the loop apart.
// blockDim.x a multiple of 32.
extern "C" __global__ void stride_after_divergent_vote(const int* in, int* out, int n) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  int acc = 0;
  if (threadIdx.x & 1) acc = __popc(__ballot_sync(0xaaaaaaaau, in[g % n] > 2));
  for (int i = g; i < n; i += blockDim.x * gridDim.x) acc += in[i];
  out[g] = acc;
}

// Cooperative groups' 64-bit grid rank and size (a plain launch).
extern "C" __global__ void grid_rank_sums(const float* in, float* partial, int n) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  float sum = 0.0f;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) sum += in[i];
  partial[grid.thread_rank()] = sum;
}
