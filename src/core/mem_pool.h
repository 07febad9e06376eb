// MemPool: a stream-ordered allocation pool (a device's default pool, or one
// from cuMemPoolCreate). cucpu allocates each block when asked and frees it
// when its stream-ordered free runs, so a pool caches no memory: it holds
// its attributes, its access map and its usage counters.
//
// Pools live in Runtime::mempools. A destroyed pool's handle dies at once;
// the object stays (allocations made from it still point at it).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "cuda.h"

namespace cucpu {

struct Device;

class MemPool {
 public:
  MemPool(Device* dev, const CUmemPoolProps& props, bool is_default)
      : device(dev), props(props), is_default(is_default) {}
  Device* const device;
  const CUmemPoolProps props;
  const bool is_default;  // a device's default pool cannot be destroyed
  // An imported pool (core/ipc.h): the exporting process; 0 for a pool of
  // this process. Set before the pool's handle is published. Imported
  // pools make no allocations; their memory is imported pointers.
  int32_t exporter = 0;

  // Usage, counted by allocations from this pool and their frees.
  void on_alloc(size_t n);
  void on_free(size_t n);

  CUresult get_attribute(int attr, void* value);
  CUresult set_attribute(int attr, const void* value);
  // Access of device `dev` (the owner always has read-write).
  CUmemAccess_flags access_of(int dev);
  CUresult set_access(int dev, CUmemAccess_flags flags);

 private:
  std::mutex mu_;
  int reuse_follow_event_ = 1;  // guarded by mu_, like every field below
  int reuse_opportunistic_ = 1;
  int reuse_internal_ = 1;
  uint64_t release_threshold_ = 0;
  uint64_t used_ = 0;
  uint64_t used_high_ = 0;
  std::vector<std::pair<int, CUmemAccess_flags>> peers_;
};

}  // namespace cucpu
