// ProducerSlot: what a thread publishes about the lock-free section it is
// in, so that a thread revoking its ownership of something (a timeline,
// exec/timeline.h; a biased lock, exec/biased_lock.h) can wait until it is
// out of that section.
//
// Contract: a thread is inside at most one such section at a time (they
// never nest), named by `in_progress`. Slots are never freed; a slot of an
// exited thread goes to the next new thread (which then owns what the old
// one owned: still one live owner each).
#pragma once

#include <atomic>

namespace cucpu {

struct alignas(64) ProducerSlot {
  // The object whose owner-only section this thread is in, or null. The
  // owner clears it with a release store when it leaves.
  std::atomic<const void*> in_progress{nullptr};
  // The calling thread's slot (allocated on first use).
  static ProducerSlot* mine();
  // The calling thread's slot if it has one, else null.
  static ProducerSlot* mine_if_any() { return t_slot; }
  // The calling thread, exiting, gives its slot to the next new thread.
  static void thread_exits();

 private:
  // initial-exec: a plain %fs-relative load, instead of a call to
  // __tls_get_addr (this library is normally loaded at start-up).
  __attribute__((tls_model("initial-exec"))) static inline thread_local ProducerSlot* t_slot = nullptr;
};

}  // namespace cucpu
