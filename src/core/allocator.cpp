// The allocator: device, host and managed memory, registered in the
// allocation registry (core/allocator.h).
#include "core/allocator.h"

#include <algorithm>
#include <cstdlib>

#include <sys/mman.h>
#include <unistd.h>

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

namespace {

// Allocations of at least this many bytes start on a huge-page boundary and
// ask for transparent huge pages: their first touch (a kernel's, a memset's)
// then faults once per 2 MiB instead of once per 4 KiB (64 MiB first set:
// 195 ms of page faults on a 2-core VM, where a fault costs microseconds).
constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

// Device and managed memory is mapped page by page, with an inaccessible
// guard after it: as on a GPU, a kernel faults at page granularity past an
// allocation's end, and on any access to memory already freed.
void* map_backing(MemKind kind, size_t rounded) {
  if (kind != MemKind::kDevice && kind != MemKind::kManaged) return std::aligned_alloc(kAlignment, rounded);
  const size_t pages = backing_pages(rounded);
  const size_t slack = pages >= kHugePage ? kHugePage : 0;  // room to move the start to a boundary
  void* raw = mmap(nullptr, pages + kGuard + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  char* p = static_cast<char*>(raw);
  if (slack) {
    // Keep [start, start + pages + kGuard) and give back the rest, so that
    // release_backing unmaps exactly what it would without the slack.
    char* start = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(p) + kHugePage - 1) / kHugePage * kHugePage);
    if (start > p) munmap(p, static_cast<size_t>(start - p));
    char* end = start + pages + kGuard;
    if (end < p + pages + kGuard + slack) munmap(end, static_cast<size_t>(p + pages + kGuard + slack - end));
    p = start;
#ifdef MADV_HUGEPAGE
    madvise(p, pages, MADV_HUGEPAGE);  // advice: where the kernel has no huge pages, small ones serve
#endif
  }
  mprotect(p + pages, kGuard, PROT_NONE);
  return p;
}

void release_backing(const Allocation& a) {
  if (a.kind != MemKind::kDevice && a.kind != MemKind::kManaged) {
    std::free(reinterpret_cast<void*>(a.base));
    return;
  }
  munmap(reinterpret_cast<void*>(a.base), backing_pages(a.size) + kGuard);
  if (a.ipc_fd >= 0) close(a.ipc_fd);
}

}  // namespace cucpu
