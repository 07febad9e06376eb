// The allocation registry: every range of memory the runtime knows about
// (device, pinned host, registered host, managed), keyed by base address.
//
// Contract: all methods are thread-safe. Lookups return copies, so a caller
// never holds a reference into the registry; an op that needs "is this
// memory still allocated" at execution time re-checks by allocation id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <vector>

#include "cuda.h"

namespace cucpu {

class Context;
class MemPool;
class Stream;

// A byte range that must still belong to allocation `alloc_id` when an op
// executes (alloc_id 0: host memory the runtime does not track).
struct MemCheck {
  uintptr_t p = 0;
  size_t n = 0;
  uint64_t alloc_id = 0;
  uint64_t removals = 0;  // Registry::removals() when the range was checked
};

enum class MemKind { kDevice, kHost, kRegistered, kManaged };
// What reports call memory of kind k ("device memory", ...).
const char* memory_kind_name(MemKind k);

struct Allocation {
  uintptr_t base = 0;
  size_t size = 0;
  MemKind kind = MemKind::kDevice;
  Context* ctx = nullptr;
  unsigned flags = 0;      // allocation flags (host alloc / register / managed attach)
  uint64_t id = 0;         // unique, never reused (CU_POINTER_ATTRIBUTE_BUFFER_ID)
  // Stream association of managed memory (cuStreamAttachMemAsync).
  unsigned attach_flags = 0;
  uint64_t attach_stream_id = 0;  // 0: none
  bool sync_memops = false;
  // Stream-ordered allocations: the pool it came from, and whether a
  // cuMemFreeAsync of it is already enqueued.
  MemPool* pool = nullptr;
  bool free_pending = false;
  // A module's variable (core/module.h): freed with its module, never by
  // cuMemFree, and left alone by remove_context (the module removes it).
  bool module_owned = false;
  // A graph allocation node's memory (core/graph.h GraphMemoryBlock): it
  // goes with the graphs that name it; cuMemFree and context teardown leave it.
  bool graph_owned = false;
  // A mapping of a physical allocation (core/vmm.h): cuMemUnmap removes it,
  // never cuMemFree; its bytes count where the physical allocation is made.
  bool vmm = false;
  // What a mapping grants (vmm::kAccess*); all else is read-write.
  uint8_t access = 3;
  // Interprocess handles (core/ipc.h): the memory file an exported
  // allocation lives in (closed with its backing; -1: never exported), and
  // whether this is another process's allocation mapped here (it goes by
  // cuIpcCloseMemHandle, never cuMemFree, and is not this device's memory).
  int ipc_fd = -1;
  bool ipc_import = false;
  // Managed memory's hints (cuMemAdvise) and last prefetch (cuMemPrefetchAsync):
  // remembered for cuMemRangeGetAttribute; memory is one address space here.
  struct Location {
    int type = 0;  // CUmemLocationType; 0 (invalid): none
    int id = 0;
  };
  bool read_mostly = false;
  Location preferred, last_prefetch;
  uint32_t accessed_by = 0;  // bit 0: the CPU; bit 1 + d: device d

  bool contains(uintptr_t p, size_t n) const { return p >= base && n <= size && p - base <= size - n; }
};

// Lines of its own (every range check reads removals(); the heap around a
// singleton holds whatever was allocated next to it).
class alignas(64) Registry {
 public:
  static Registry& instance() {
    static Registry* r = new Registry();  // outlives static destruction
    return *r;
  }

  uint64_t add(Allocation a);
  // add() unless [a.base, a.base + a.size) overlaps an allocation already
  // registered (checked and added under one lock): 0 then, else the id.
  // a.size must be nonzero and the range must not wrap.
  uint64_t add_unless_overlapping(Allocation a);
  std::optional<Allocation> remove(uintptr_t base);
  // remove() only if the allocation based at `base` is still allocation `id`.
  bool remove_id(uintptr_t base, uint64_t id);
  // The allocation that contains address p, if any.
  std::optional<Allocation> find(uintptr_t p) const;
  // The identity of the allocation containing p (fields that never change
  // while it lives). Answered without the lock from a per-thread cache of
  // recent answers while nothing has been removed since they were cached
  // (an allocation added meanwhile cannot overlap a cached one).
  struct Span {
    uintptr_t base = 0;
    size_t size = 0;
    uint64_t id = 0;
    MemKind kind = MemKind::kDevice;
    uint8_t access = 3;  // as Allocation::access
    bool vmm = false;
    bool contains(uintptr_t p, size_t n) const { return p >= base && n <= size && p - base <= size - n; }
  };
  std::optional<Span> find_span(uintptr_t p) const;
  // find_span() of `count` addresses with one visit of the cache; *epoch is
  // the removals() count read before any lookup (what MemCheck::removals
  // of the answers is).
  void find_spans(const uintptr_t* ps, int count, std::optional<Span>* out, uint64_t* epoch) const;
  // The allocation closest to address p (containing it, or the nearest one
  // below or above it), for fault reports.
  std::optional<Allocation> nearest(uintptr_t p) const;
  // Whether allocation `id` still exists and contains [p, p+n).
  bool still_valid(uint64_t id, uintptr_t p, size_t n) const;
  // Counts removals. A range checked while this read E is still valid as
  // long as it still reads E: nothing was freed in between (the fast path
  // of the execution-time check; acquire pairs with the release in remove).
  uint64_t removals() const { return removals_.load(std::memory_order_acquire); }
  // Updates the stream association of the allocation based at `base`.
  bool set_attachment(uintptr_t base, unsigned flags, uint64_t stream_id);
  bool set_sync_memops(uintptr_t base, bool on);
  // Sets the access of the mapping based at `base`. Counts as a removal:
  // spans cached before it carry the old access.
  bool set_access(uintptr_t base, uint8_t access);
  // Device memory that no registered range stands for (physical
  // allocations of core/vmm.h): added to device_bytes().
  void add_device_bytes(size_t n);
  void remove_device_bytes(size_t n);
  // Applies f to the allocation based at `base` under the registry's lock
  // (f must not call back into the registry). False when there is none.
  template <class F>
  bool update(uintptr_t base, F&& f) {
    std::unique_lock lock(mu_);
    auto it = by_base_.find(base);
    if (it == by_base_.end()) return false;
    f(it->second);
    return true;
  }
  // Marks the pool allocation based at `base` as having its stream-ordered
  // free enqueued, and returns it. Empty when there is none, or it was
  // marked already.
  std::optional<Allocation> begin_async_free(uintptr_t base);
  // A destroyed stream's SINGLE attachments revert to GLOBAL; returns how many.
  size_t detach_stream(uint64_t stream_id);
  // Total bytes of device and managed allocations (for cuMemGetInfo).
  size_t device_bytes() const;
  // Removes every allocation owned by ctx (but module variables and graph
  // blocks) and returns them (for ctx destroy). Host registrations are among
  // them: a registration ends with the context that made it (driver 580).
  std::vector<Allocation> remove_context(Context* ctx);

 private:
  mutable std::shared_mutex mu_;
  std::map<uintptr_t, Allocation> by_base_;  // guarded by mu_
  uint64_t next_id_ = 1;                     // guarded by mu_
  size_t device_bytes_ = 0;                  // guarded by mu_
  std::atomic<uint64_t> removals_{0};
};

}  // namespace cucpu
