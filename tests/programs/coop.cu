// Cooperative groups: tiles within a block, and grid-wide sync through
// cudaLaunchCooperativeKernel.
#include "check.h"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void grid_sum(const int* in, int* partial, int* out, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  int v = 0;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) v += in[i];
  v = cg::reduce(tile, v, cg::plus<int>());
  if (tile.thread_rank() == 0) atomicAdd(&partial[blockIdx.x], v);
  grid.sync();
  if (grid.thread_rank() == 0) {
    int total = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b];
    *out = total;
  }
}

int main() {
  int supported = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, 0));
  CHECK(supported == 1);
  const int n = 100000;
  int *in, *partial, *out;
  CHECK_CUDA(cudaMallocManaged(&in, n * sizeof(int)));
  for (int i = 0; i < n; ++i) in[i] = i % 10;
  int per_sm = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_sum, 128, 0));
  CHECK(per_sm >= 1);
  int blocks = 4;
  CHECK_CUDA(cudaMalloc(&partial, blocks * sizeof(int)));
  CHECK_CUDA(cudaMemset(partial, 0, blocks * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&out, sizeof(int)));
  int nn = n;
  void* args[] = {&in, &partial, &out, &nn};
  CHECK_CUDA(cudaLaunchCooperativeKernel((void*)grid_sum, blocks, 128, args, 0, 0));
  CHECK_CUDA(cudaDeviceSynchronize());
  int total = 0;
  CHECK_CUDA(cudaMemcpy(&total, out, sizeof total, cudaMemcpyDeviceToHost));
  CHECK(total == 450000);
  cudaFree(in); cudaFree(partial); cudaFree(out);
  return finish("coop");
}
