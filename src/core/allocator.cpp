// The allocator: device, host and managed memory, registered in the
// allocation registry (core/allocator.h).
#include "core/allocator.h"

#include <algorithm>
#include <cstdlib>

#include <sys/mman.h>

#include "base/checked_math.h"
#include "core/capture.h"
#include "core/check.h"
#include "core/context.h"
#include "core/mem_pool.h"

namespace cucpu {

CUresult allocate(Context* c, size_t bytes, MemKind kind, unsigned flags, void** out, MemPool* pool) {
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  size_t padded;  // a size whose rounding up overflows is too large (driver 580: OUT_OF_MEMORY)
  if (!checked_add(bytes, kAlignment - 1, &padded)) return CUDA_ERROR_OUT_OF_MEMORY;
  const size_t rounded = padded / kAlignment * kAlignment;
  if (rounded > c->device->total_mem) return CUDA_ERROR_OUT_OF_MEMORY;
  // Like a GPU's, the device's memory is used up by what is allocated
  // (checked without a lock: concurrent allocations may overshoot by one).
  if ((kind == MemKind::kDevice || kind == MemKind::kManaged) &&
      rounded > c->device->total_mem - std::min(c->device->total_mem, Registry::instance().device_bytes()))
    return CUDA_ERROR_OUT_OF_MEMORY;
  void* p = map_backing(kind, rounded);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(p);
  a.size = bytes;
  a.kind = kind;
  a.ctx = c->owner;
  a.flags = flags;
  if (kind == MemKind::kManaged) a.attach_flags = flags;
  a.pool = pool;
  if (pool) pool->on_alloc(bytes);
  Registry::instance().add(a);
  if (check::on()) [[unlikely]] check::memory_renewed(a);
  *out = p;
  return CUDA_SUCCESS;
}

void release_allocation(const Allocation& a) {
  if (check::on()) [[unlikely]] check::memory_released(a.base);
  Registry::instance().remove(a.base);
  if (a.pool) a.pool->on_free(a.size);
  release_backing(a);
}

// Device and managed memory is mapped page by page, with an inaccessible
// guard after it: as on a GPU, a kernel faults at page granularity past an
// allocation's end, and on any access to memory already freed.
void* map_backing(MemKind kind, size_t rounded) {
  if (kind != MemKind::kDevice && kind != MemKind::kManaged) return std::aligned_alloc(kAlignment, rounded);
  const size_t pages = (rounded + kPage - 1) / kPage * kPage;
  void* p = mmap(nullptr, pages + kGuard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  mprotect(static_cast<char*>(p) + pages, kGuard, PROT_NONE);
  return p;
}

void release_backing(const Allocation& a) {
  if (a.kind != MemKind::kDevice && a.kind != MemKind::kManaged) {
    std::free(reinterpret_cast<void*>(a.base));
    return;
  }
  const size_t rounded = (a.size + kAlignment - 1) / kAlignment * kAlignment;
  munmap(reinterpret_cast<void*>(a.base), (rounded + kPage - 1) / kPage * kPage + kGuard);
}

}  // namespace cucpu
