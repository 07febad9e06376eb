// HandlePool<T>: stable storage for objects that the C API hands out as
// opaque handles, so that any pointer a caller passes can be checked without
// touching memory it may not own.
//
// Contract:
//  - Slots live in one reserved virtual range that is never unmapped. Reading
//    a slot's cookie is therefore always safe, even for a destroyed object or
//    a forged pointer that happens to fall inside the range; pointers outside
//    it are rejected by address alone.
//  - A slot's cookie is kLive while the object is usable through its handle,
//    kDead after the user destroyed it (the object itself may live on while
//    the engine still references it), and 0 when the slot was never used.
//  - Freed slots are reused first-in first-out, which keeps a stale handle
//    recognisably dead for as long as possible; a pool made with a
//    quarantine of N hands a freed slot out again only once N slots freed
//    after it wait too (or no never-used slot is left). The queue runs
//    through the free slots' headers (nothing is allocated under its lock,
//    and a freed object's storage is left as its destructor left it).
//  - A dead slot may carry an epitaph: a word its owner leaves for stale
//    handles to read (what a destroyed object still answers), kept until the
//    slot is reused.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

#include "exec/spin_lock.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace cucpu {

enum class HandleState { kInvalid, kDead, kLive };

template <class T>
class HandlePool {
 public:
  static constexpr uint32_t kLive = 0x4c495645;  // "LIVE"
  static constexpr uint32_t kDead = 0x44454144;  // "DEAD"

  // The first `prefault` bytes are faulted in now, so that a process's first
  // objects (its first capture's nodes) do not each pay a page fault.
  explicit HandlePool(size_t capacity, size_t prefault = 64 * 1024, size_t quarantine = 0)
      : capacity_(capacity), bytes_(capacity * sizeof(Slot)), quarantine_(quarantine) {
    static_assert(offsetof(Slot, storage) == (alignof(T) > 16 ? alignof(T) : 16), "the header fits its padding");
    void* p = mmap(nullptr, capacity * sizeof(Slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    slots_ = static_cast<Slot*>(p);
    populate(p, std::min(prefault, capacity * sizeof(Slot)));
#if defined(__SANITIZE_ADDRESS__)
    // Objects in the slots own heap memory; the leak checker must see them.
    __lsan_register_root_region(p, capacity * sizeof(Slot));
#endif
  }
  static void populate(void* p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0) return;
#endif
    // Older kernels: touch each page (they read as zero; writing zero keeps them so).
    for (size_t at = 0; at < bytes; at += 4096) static_cast<volatile char*>(p)[at] = 0;
  }
  HandlePool(const HandlePool&) = delete;
  HandlePool& operator=(const HandlePool&) = delete;
  // The range stays mapped for the life of the process: handles may be
  // checked by threads that outlive static destruction.

  template <class... A>
  T* create(A&&... args) {
    Slot* s = take_slot();
    try {
      return construct(s, std::forward<A>(args)...);
    } catch (...) {
      give_back(s);
      throw;
    }
  }

  // Slots taken ahead by one owner that makes many objects in a row and
  // frees them together (a graph's nodes), so that the pool's lock is taken
  // once per kCachedSlots creates rather than once each. Not thread-safe:
  // its owner's. The owner hands back what it did not use (give_back_cached)
  // before it goes.
  static constexpr unsigned kCachedSlots = 16;
  struct SlotCache {
    void* slots[kCachedSlots];
    unsigned n = 0;
  };
  template <class... A>
  T* create_cached(SlotCache& cache, A&&... args) {
    if (cache.n == 0) refill(cache);
    Slot* s = static_cast<Slot*>(cache.slots[--cache.n]);
    try {
      return construct(s, std::forward<A>(args)...);
    } catch (...) {
      cache.slots[cache.n++] = s;
      throw;
    }
  }
  void give_back_cached(SlotCache& cache) {
    if (cache.n == 0) return;
    for (unsigned i = 0; i < cache.n; ++i) set_next_free(static_cast<Slot*>(cache.slots[i]), nullptr);
    SpinLockGuard lock(mu_);
    for (unsigned i = 0; i < cache.n; ++i) append_free(static_cast<Slot*>(cache.slots[i]));
    cache.n = 0;
  }
  // Kills and destroys `n` objects and recycles their slots under one
  // taking of the lock.
  void release_all(T* const* objs, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      Slot* s = slot_of(objs[i]);
      s->cookie.store(kDead, std::memory_order_release);
      objs[i]->~T();
      set_next_free(s, nullptr);
    }
    SpinLockGuard lock(mu_);
    for (size_t i = 0; i < n; ++i) append_free(slot_of(objs[i]));
  }

  // Marks the handle dead; the object stays constructed until release().
  void kill(T* obj) { slot_of(obj)->cookie.store(kDead, std::memory_order_release); }
  // kill() by exactly one of several threads destroying one handle at once:
  // true for the caller that turned it from live to dead.
  bool try_kill(T* obj) {
    uint32_t live = kLive;
    return slot_of(obj)->cookie.compare_exchange_strong(live, kDead, std::memory_order_acq_rel);
  }

  // Destroys the object and recycles its slot. Call once, after kill().
  void release(T* obj) { release_all(&obj, 1); }

  // Leaves `word` (nonzero) for stale handles of obj to read once it is
  // dead, until its slot is reused.
  void set_epitaph(T* obj, uint32_t word) { slot_of(obj)->epitaph.store(word, std::memory_order_release); }
  // The epitaph of a dead handle, or 0 (live, never used, none left, or no handle).
  uint32_t epitaph(const void* handle) const {
    const Slot* s = slot_at(handle);
    if (!s || s->cookie.load(std::memory_order_acquire) != kDead) return 0;
    return s->epitaph.load(std::memory_order_acquire);
  }

  HandleState state(const void* handle) const {
    const Slot* s = slot_at(handle);
    if (!s) return HandleState::kInvalid;
    uint32_t c = s->cookie.load(std::memory_order_acquire);
    return c == kLive ? HandleState::kLive : c == kDead ? HandleState::kDead : HandleState::kInvalid;
  }

  // The state of an object this pool made (a pointer the library holds, not
  // a caller's handle: no range or slot check).
  HandleState state_of(const T* obj) const {
    const uint32_t c = slot_of(const_cast<T*>(obj))->cookie.load(std::memory_order_acquire);
    return c == kLive ? HandleState::kLive : HandleState::kDead;
  }

  // The object behind a live handle, or nullptr.
  T* live(const void* handle) const {
    return state(handle) == HandleState::kLive ? static_cast<T*>(const_cast<void*>(handle)) : nullptr;
  }

 private:
  struct Slot {
    std::atomic<uint32_t> cookie;
    std::atomic<uint32_t> epitaph;  // in the header's padding: costs no space
    // A free slot's link in the free queue (guarded by mu_), also in the
    // header's padding: freeing a slot writes nothing into the object's
    // storage, which a thread that checked a stale handle may still read.
    Slot* next_free = nullptr;
    alignas(alignof(T) > 16 ? alignof(T) : 16) unsigned char storage[sizeof(T)];
  };

  // The slot a handle names, or nullptr where it names none. An address
  // below the range wraps to a large offset; no division: a slot is found
  // from the handle itself once the offset is known to be a slot's.
  const Slot* slot_at(const void* handle) const {
    const uintptr_t addr = reinterpret_cast<uintptr_t>(handle);
    const uintptr_t off = addr - reinterpret_cast<uintptr_t>(slots_) - offsetof(Slot, storage);
    if (off >= bytes_ || off % sizeof(Slot) != 0) return nullptr;
    return reinterpret_cast<const Slot*>(addr - offsetof(Slot, storage));
  }

  // Builds an object in `s` and makes its handle live.
  template <class... A>
  T* construct(Slot* s, A&&... args) {
    T* obj = new (s->storage) T(std::forward<A>(args)...);
    s->epitaph.store(0, std::memory_order_relaxed);
    s->cookie.store(kLive, std::memory_order_release);
    return obj;
  }

  static Slot* slot_of(T* obj) {
    return reinterpret_cast<Slot*>(reinterpret_cast<unsigned char*>(obj) - offsetof(Slot, storage));
  }

  static Slot* next_free(const Slot* s) { return s->next_free; }
  static void set_next_free(Slot* s, Slot* n) { s->next_free = n; }

  Slot* take_slot() {
    SpinLockGuard lock(mu_);
    Slot* s = take_slot_locked();
    if (!s) throw std::bad_alloc();
    return s;
  }
  // Fills `cache` with up to kCachedSlots slots (at least one, or bad_alloc).
  void refill(SlotCache& cache) {
    SpinLockGuard lock(mu_);
    while (cache.n < kCachedSlots) {
      Slot* s = take_slot_locked();
      if (!s) break;
      cache.slots[cache.n++] = s;
    }
    if (cache.n == 0) throw std::bad_alloc();
  }
  // Null when none is left. Under mu_.
  Slot* take_slot_locked() {
    if (free_count_ > quarantine_ || (used_ == capacity_ && free_head_)) {
      Slot* s = free_head_;
      free_head_ = next_free(s);
      if (!free_head_) free_tail_ = nullptr;
      --free_count_;
      return s;
    }
    if (used_ == capacity_) return nullptr;
    return &slots_[used_++];
  }
  void give_back(Slot* s) {
    set_next_free(s, nullptr);
    SpinLockGuard lock(mu_);
    append_free(s);
  }
  // Under mu_; s's link is null.
  void append_free(Slot* s) {
    if (free_tail_) set_next_free(free_tail_, s);
    else free_head_ = s;
    free_tail_ = s;
    ++free_count_;
  }

  Slot* slots_ = nullptr;
  size_t capacity_;
  size_t bytes_;  // capacity_ slots
  size_t quarantine_;
  // A few instructions under it, never a call: a spin lock.
  SpinLock mu_;
  size_t used_ = 0;             // slots ever handed out; guarded by mu_
  Slot* free_head_ = nullptr;   // oldest freed slot; guarded by mu_
  Slot* free_tail_ = nullptr;   // newest freed slot; guarded by mu_
  size_t free_count_ = 0;       // slots in the free queue; guarded by mu_
};

}  // namespace cucpu
