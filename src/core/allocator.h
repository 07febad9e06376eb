// The allocator: memory of each kind, registered in the allocation registry
// and released from it. Used by the memory entry points, the stream-ordered
// allocator (and the ops that free its memory) and graph memory nodes.
#pragma once

#include "cuda.h"
#include "core/allocation.h"

namespace cucpu {
class Context;
class MemPool;
}  // namespace cucpu

namespace cucpu {

constexpr size_t kAlignment = 256;  // cuMemAlloc's documented minimum alignment

// Allocates `bytes` (rounded up to kAlignment) and registers it; `pool`
// when it comes from a stream-ordered allocation pool. The capture rule for
// allocation is the caller's: the entry's gate (kUnsafeInCapture), or the
// stream-ordered path's own check.
CUresult allocate(Context* c, size_t bytes, MemKind kind, unsigned flags, void** out, MemPool* pool = nullptr);
// Unregisters and frees an allocation (its pool's usage goes down).
void release_allocation(const Allocation& a);
// The memory behind an allocation of `kind` (rounded: a multiple of
// kAlignment), and its release; release_backing takes what the registry recorded.
void* map_backing(MemKind kind, size_t rounded);
void release_backing(const Allocation& a);
constexpr size_t kPage = 4096;
constexpr size_t kGuard = 64 * 1024;  // beyond an allocation's last page, nothing is mapped
// The bytes of whole pages that back a device or managed allocation of `bytes`.
constexpr size_t backing_pages(size_t bytes) {
  return ((bytes + kAlignment - 1) / kAlignment * kAlignment + kPage - 1) / kPage * kPage;
}

}  // namespace cucpu
