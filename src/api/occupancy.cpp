// Occupancy: how many blocks of a kernel one multiprocessor holds, and the
// block size that maximizes it. The figures follow the limits cucpu
// reports as device attributes (an sm_90 part, core/device_attributes.inc)
// with as many multiprocessors as the engine has workers, so grid-sizing
// code picks grids that fill this machine.
#include <algorithm>
#include <atomic>

#include "api/launch_common.h"
#include "core/device_arch.h"
#include "exec/scheduler.h"

using namespace cucpu;

namespace {

CUresult flags_ok(unsigned flags) {
  return (flags & ~static_cast<unsigned>(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) ? CUDA_ERROR_INVALID_VALUE
                                                                                   : CUDA_SUCCESS;
}

CUresult max_active_blocks(int* num, CUfunction func, int block_size, size_t dyn, unsigned flags) {
  if (!num) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = flags_ok(flags)) return r;
  Function* f;
  const ptx::Kernel* k;
  if (CUresult r = api::loaded_function(func, &f, &k)) return r;
  if (block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
  *num = blocks_per_sm(k->info(), f->settings(), block_size, dyn);
  return CUDA_SUCCESS;
}

// Tries block sizes from the largest allowed down, a warp at a time, and
// keeps the first that reaches the highest occupancy (threads resident per
// multiprocessor). The callback is the caller's code, run with no lock held.
CUresult potential_block_size(int* min_grid, int* block_size, CUfunction func, CUoccupancyB2DSize to_smem,
                              size_t dyn, int limit, unsigned flags) {
  if (!min_grid || !block_size) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = flags_ok(flags)) return r;
  if (limit < 0) return CUDA_ERROR_INVALID_VALUE;
  Function* f;
  const ptx::Kernel* k;
  if (CUresult r = api::loaded_function(func, &f, &k)) return r;
  const ptx::KernelInfo& info = k->info();
  const FuncSettings s = f->settings();
  int max = std::min<int>(info.max_threads_per_block, limits::kMaxThreadsPerBlock);
  if (limit > 0) max = std::min(max, limit);
  const int warp = limits::kWarpSize;
  int best_size = 0, best_blocks = 0, best_threads = 0;
  for (int aligned = (max + warp - 1) / warp * warp; aligned > 0; aligned -= warp) {
    const int size = std::min(aligned, max);
    const size_t smem = to_smem ? to_smem(size) : dyn;
    const int blocks = blocks_per_sm(info, s, size, smem);
    if (blocks * size > best_threads) {
      best_threads = blocks * size;
      best_blocks = blocks;
      best_size = size;
    }
    if (best_threads == device_arch().threads_per_sm) break;  // cannot do better
  }
  *block_size = best_size;
  *min_grid = best_blocks * static_cast<int>(Scheduler::instance().worker_count());
  return CUDA_SUCCESS;
}

// The largest dynamic shared size per block at which `blocks` blocks of
// `block_size` threads fit on one multiprocessor.
CUresult available_smem(size_t* out, CUfunction func, int blocks, int block_size) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  Function* f;
  const ptx::Kernel* k;
  if (CUresult r = api::loaded_function(func, &f, &k)) return r;
  if (blocks <= 0 || block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
  const ptx::KernelInfo& info = k->info();
  const FuncSettings s = f->settings();
  *out = 0;
  if (blocks_per_sm(info, s, block_size, 0) < blocks) return CUDA_SUCCESS;  // threads or registers do not fit
  const long per_block = device_arch().shared_per_sm / blocks / 128 * 128 - limits::kReservedSharedPerBlock -
                         static_cast<long>((info.static_shared_bytes + 127) / 128 * 128);
  // At most what a launch of this function may ask for now (driver 580:
  // 48 KiB until the opt-in attribute raises it).
  const long cap = max_dynamic_shared(info, s);
  *out = static_cast<size_t>(std::clamp<long>(per_block, 0, cap));
  return CUDA_SUCCESS;
}

// Thread-block clusters: cucpu launches clusters of one block only
// (cuLaunchKernelEx refuses larger ones with NOT_SUPPORTED), and the
// occupancy of clusters answers so.
void say_clusters_once(const char* entry) {
  static std::atomic<bool> said{false};
  if (!said.exchange(true, std::memory_order_relaxed))
    log_line("%s: cucpu runs thread-block clusters of one block only; larger clusters have no occupancy", entry);
}

// The function's required cluster size (cuFuncSetAttribute's
// REQUIRED_CLUSTER_*), 0 when none is set.
uint64_t required_cluster(const FuncSettings& s) {
  if (!s.cluster[0] || !s.cluster[1] || !s.cluster[2]) return 0;
  return uint64_t(s.cluster[0]) * uint64_t(s.cluster[1]) * uint64_t(s.cluster[2]);
}

// A cluster query's output, function and config's block shape, checked as
// a launch's.
CUresult cluster_query(const int* out, CUfunction func, const CUlaunchConfig* config, Function** f,
                       const ptx::Kernel** k) {
  if (!out || !config || !func) return CUDA_ERROR_INVALID_VALUE;  // driver 580: a null function too
  if (config->numAttrs && !config->attrs) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = api::loaded_function(func, f, k)) return r;
  const uint64_t threads = uint64_t(config->blockDimX) * config->blockDimY * config->blockDimZ;
  if (!threads || threads > uint64_t((*k)->info().max_threads_per_block)) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult max_potential_cluster_size(int* size, CUfunction func, const CUlaunchConfig* config) {
  Function* f;
  const ptx::Kernel* k;
  if (CUresult r = cluster_query(size, func, config, &f, &k)) return r;
  const uint64_t required = required_cluster(f->settings());
  if (required > 1) say_clusters_once("cuOccupancyMaxPotentialClusterSize");
  *size = required ? static_cast<int>(required) : 1;
  return CUDA_SUCCESS;
}

CUresult max_active_clusters(int* num, CUfunction func, const CUlaunchConfig* config) {
  Function* f;
  const ptx::Kernel* k;
  if (CUresult r = cluster_query(num, func, config, &f, &k)) return r;
  const FuncSettings s = f->settings();
  uint64_t cluster = required_cluster(s);
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    if (config->attrs[i].id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) continue;
    const auto& d = config->attrs[i].value.clusterDim;
    const uint64_t asked = uint64_t(d.x) * d.y * d.z;
    if (!asked || (cluster && asked != cluster)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    cluster = asked;
  }
  // Neither the config nor the function sets a size: clusters of one
  // block (driver 580 answers too, against its documentation).
  if (!cluster) cluster = 1;
  if (cluster > 1) {
    say_clusters_once("cuOccupancyMaxActiveClusters");
    *num = 0;
    return CUDA_SUCCESS;
  }
  const int threads = static_cast<int>(config->blockDimX * config->blockDimY * config->blockDimZ);
  *num = blocks_per_sm(k->info(), s, threads, config->sharedMemBytes) *
         static_cast<int>(Scheduler::instance().worker_count());
  return CUDA_SUCCESS;
}

}  // namespace

static CUresult impl_cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                                 size_t dynamicSMemSize) { return max_active_blocks(numBlocks, func, blockSize, dynamicSMemSize, 0); }

static CUresult impl_cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                                      CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                      size_t dynamicSMemSize, int blockSizeLimit) {
  return potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize,
                              blockSizeLimit, 0);
}

#include "api/entries/occupancy.inc"
