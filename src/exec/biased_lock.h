// BiasedLock: a mutex whose critical sections one thread, its owner, may
// enter without a locked instruction, for state that one thread feeds for
// long stretches (a stream capture's graph, node by node) while others
// touch it rarely.
//
// Contract:
//  - lock()/unlock() (BasicLockable) work from any thread, the owner too.
//  - An owner's section: `if (l.enter_owned()) { ...; l.leave_owned(); }
//    else { std::lock_guard g(l); ... }`. enter_owned() is true only for
//    the owner, which then holds the lock until leave_owned(); the section
//    must not block or take this lock.
//  - Ownership is granted to a thread that takes the lock kGrantAfter
//    times in a row with no other thread in between (and only where the
//    asymmetric fence exists). Another thread's lock() takes it back: an
//    asymmetric fence, then a wait until the owner is out of its section
//    (about as dear as a few microseconds). A lock taken back from its
//    owner is granted again only after twice as long a run, so a lock fed
//    by several threads in turn settles as a plain mutex.
//  - The owner's enter and a revoker's take-back are a store-buffering
//    pair ordered by the asymmetric fence (exec/asymmetric_fence.h): the
//    owner publishes its section in its ProducerSlot, then reads the owner
//    word; the revoker stores the owner word, fences, then reads the slot.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "exec/asymmetric_fence.h"
#include "exec/producer_slot.h"

namespace cucpu {

class BiasedLock {
 public:
  bool enter_owned() {
    ProducerSlot* const me = ProducerSlot::mine_if_any();
    if (!me || owner_.load(std::memory_order_relaxed) != me) return false;
    me->in_progress.store(this, std::memory_order_relaxed);
    light_fence();
    // Still the owner: a revoker has not cleared the word, or clears it
    // after this load and then waits for this section (its heavy fence).
    // Ownership comes to a thread only in its own lock(), under mu_.
    if (owner_.load(std::memory_order_relaxed) == me) return true;
    me->in_progress.store(nullptr, std::memory_order_release);
    return false;
  }
  void leave_owned() {
    // Release: a revoker that sees the section left sees what it wrote.
    ProducerSlot::mine_if_any()->in_progress.store(nullptr, std::memory_order_release);
  }

  void lock();
  void unlock() { mu_.unlock(); }

 private:
  static constexpr uint32_t kGrantAfter = 16;
  static constexpr uint32_t kMaxGrantAfter = 1u << 20;

  std::mutex mu_;
  std::atomic<ProducerSlot*> owner_{nullptr};
  ProducerSlot* last_taker_ = nullptr;  // guarded by mu_
  uint32_t run_ = 0;                    // guarded by mu_: lock()s in a row by last_taker_
  uint32_t grant_after_ = kGrantAfter;  // guarded by mu_
};

}  // namespace cucpu
