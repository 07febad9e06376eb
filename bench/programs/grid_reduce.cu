// A cooperative launch sums 32 Mi floats: each thread's grid-stride loop
// over cooperative groups' grid rank, a shared-memory tree per block, a
// grid barrier, then block 0 sums the blocks' parts. Three launches, each
// timed and checked.
#include <cooperative_groups.h>

#include <chrono>
#include <cstdio>
#include <vector>

namespace cg = cooperative_groups;

__global__ void grid_sum(const float* in, float* parts, float* out, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  extern __shared__ float tree[];
  float sum = 0.0f;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) sum += in[i];
  tree[block.thread_rank()] = sum;
  block.sync();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (block.thread_rank() < s) tree[block.thread_rank()] += tree[block.thread_rank() + s];
    block.sync();
  }
  if (block.thread_rank() == 0) parts[blockIdx.x] = tree[0];
  grid.sync();
  if (blockIdx.x != 0) return;
  float total = 0.0f;
  for (int i = block.thread_rank(); i < gridDim.x; i += blockDim.x) total += parts[i];
  tree[block.thread_rank()] = total;
  block.sync();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (block.thread_rank() < s) tree[block.thread_rank()] += tree[block.thread_rank() + s];
    block.sync();
  }
  if (block.thread_rank() == 0) *out = tree[0];
}

int main() {
  int n = 1 << 25;
  float *in, *parts, *out;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&parts, 4096 * sizeof(float));
  cudaMalloc(&out, sizeof(float));
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>(i % 8);
  cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  const int threads = 512;
  int per_sm = 0;
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_sum, threads, threads * sizeof(float));
  const int blocks = prop.multiProcessorCount * per_sm;
  void* args[] = {&in, &parts, &out, &n};
  for (int it = 0; it < 3; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    cudaLaunchCooperativeKernel(reinterpret_cast<void*>(grid_sum), blocks, threads, args, threads * sizeof(float), 0);
    const cudaError_t e = cudaDeviceSynchronize();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    float got = 0;
    cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost);
    std::printf("launch %d (%d blocks): %.1f ms, sum %.0f (%s)\n", it, blocks, ms, got,
                e == cudaSuccess && got == 3.5f * n ? "right" : "WRONG");
  }
  return 0;
}
