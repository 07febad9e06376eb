// Cooperative groups beyond one warp: tiles of 64 and 128 threads keep their
// barriers and exchange slots in the block's reserved shared memory
// (%reserved_smem_offset_1); warpSize is nvcc's WARP_SZ.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// out[t] = warpSize
extern "C" __global__ void warp_size(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = warpSize; }

// For thread t of a block of 256 with tiles of 64 (then 128):
// out[4t] = tile rank, out[4t+1] = tile index, out[4t+2] = sum over the tile of in,
// out[4t+3] = the value the tile's thread 5 holds (shfl over the tile).
template <unsigned Size>
__device__ void tile_work(const int* in, int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<Size> tile = cg::tiled_partition<Size>(block);
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = in[g];
  const int sum = cg::reduce(tile, v, cg::plus<int>());
  tile.sync();
  const int fifth = tile.shfl(v, 5);
  out[4 * g] = static_cast<int>(tile.thread_rank());
  out[4 * g + 1] = static_cast<int>(tile.meta_group_rank());
  out[4 * g + 2] = sum;
  out[4 * g + 3] = fifth;
}
extern "C" __global__ void tiles_64(const int* in, int* out) { tile_work<64>(in, out); }
extern "C" __global__ void tiles_128(const int* in, int* out) { tile_work<128>(in, out); }
