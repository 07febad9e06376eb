#include "exec/biased_lock.h"

#include <thread>

namespace cucpu {

void BiasedLock::lock() {
  mu_.lock();
  ProducerSlot* const me = ProducerSlot::mine();
  ProducerSlot* const owner = owner_.load(std::memory_order_relaxed);
  if (owner == me) return;  // the owner is here, so not in a section of its own
  if (owner) {
    // Taken back: the owner either sees the cleared word before its
    // section (and comes here) or is seen inside it, and waited out.
    owner_.store(nullptr, std::memory_order_relaxed);
    heavy_fence();
    while (owner->in_progress.load(std::memory_order_acquire) == this) std::this_thread::yield();
    if (grant_after_ < kMaxGrantAfter) grant_after_ *= 2;
    last_taker_ = me;
    run_ = 1;
    return;
  }
  if (last_taker_ != me) {
    last_taker_ = me;
    run_ = 1;
    return;
  }
  // Granted while this thread holds mu_: its next enter_owned() follows
  // this section in its own program order.
  if (++run_ >= grant_after_ && heavy_fence_available()) owner_.store(me, std::memory_order_relaxed);
}

}  // namespace cucpu
