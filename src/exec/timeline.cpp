// The timeline protocol (timeline.h): links, ownership, give-ups and
// claims, completion and waiting.
#include "exec/timeline.h"

#include <mutex>
#include <thread>
#include <vector>

#include "exec/asymmetric_fence.h"
#include "exec/scheduler.h"

namespace cucpu {

bool Timeline::link_tail(Op* op, bool fenced) {
  Op* prev = tail_;
  op->seq = enqueued.load(std::memory_order_relaxed) + 1;
  enqueued.store(op->seq, std::memory_order_release);
  op->retain_unpublished();  // the tail reference
  tail_ = op;
  // From here the follower of `prev` may run, finish and free it at any
  // time; nothing below touches it unless this thread claims the stream.
  // The stream's first op: no follower exists to race with, so this
  // thread is the follower without a fence or a compare-exchange.
  if (!prev) return true;
  prev->set_next_in_stream(op);
  // The link, then idle_tail_: pairs with give_up (idle_tail_, then the link).
  if (fenced) std::atomic_thread_fence(std::memory_order_seq_cst);
  else light_fence();
  if (idle_tail_.load(std::memory_order_relaxed) != prev || !claim(prev)) return false;
  // Claimed: the old tail's follower gave up, so this thread is now the
  // one that followed its link, and drops its tail reference.
  prev->release();
  return true;
}

bool Timeline::try_enqueue_owned(Op* op) {
  ProducerSlot* me = ProducerSlot::mine_if_any();
  if (!me || owner_.load(std::memory_order_relaxed) != me) return false;
  // Announce the enqueue, then re-read ownership: pairs with the revoker's
  // store of owner_ and heavy fence, then load of in_progress.
  me->in_progress.store(this, std::memory_order_relaxed);
  light_fence();
  // A blocking stream needs no look at the legacy stream here: every
  // legacy enqueue takes owned blocking streams back, after linking its own
  // op and before looking at theirs (last_pending_op), and waits out an
  // enqueue like this one. So this op either precedes the legacy op (which
  // then waits for it) or finds the stream taken back and takes the locked
  // path (which orders it after the legacy op). Legacy work older than the
  // grant is ordered before this op through the granting enqueue, which
  // took the locked path.
  if (owner_.load(std::memory_order_relaxed) != me) {
    me->in_progress.store(nullptr, std::memory_order_release);
    return false;
  }
  const bool claimed = link_tail(op, false);
  // Release: a revoker that sees this store sees tail_ and enqueued as left here.
  me->in_progress.store(nullptr, std::memory_order_release);
  if (claimed) {
    if (op->release_stream_link()) Scheduler::instance().submit(op);
    else op->release();
  }
  return true;
}

void Timeline::revoke_locked(ProducerSlot* owner, ProducerSlot* after) {
  // kRevoking until the owner is out of any enqueue that read the old
  // owner_: a follower giving up meanwhile still uses the heavy fence.
  owner_.store(kRevoking, std::memory_order_relaxed);
  heavy_fence();
  while (owner->in_progress.load(std::memory_order_acquire) == this) std::this_thread::yield();
  owner_.store(after, std::memory_order_release);
}

void Timeline::take_back_locked() {
  ProducerSlot* const o = owner_.load(std::memory_order_relaxed);
  if (o == nullptr || o == kShared || o == kRevoking) return;
  revoke_locked(o, nullptr);
  producer_run_ = 0;
  if (grant_after_ < kMaxGrantAfter) grant_after_ *= 2;
}

void Timeline::note_producer_locked() {
  ProducerSlot* const o = owner_.load(std::memory_order_relaxed);
  if (o == kShared) return;
  ProducerSlot* const me = ProducerSlot::mine();
  if (o == me) return;
  if (o) {
    // Another thread owns the stream: several threads feed it, and it stays
    // on the locked path for good.
    revoke_locked(o, kShared);
    return;
  }
  if (!grantable_ || !heavy_fence_available()) return;
  if (last_producer_ != me) {
    last_producer_ = me;
    producer_run_ = 1;
    return;
  }
  if (++producer_run_ < grant_after_) return;
  // Granted before the caller's full fence in link_tail: a follower giving
  // up either sees the owner (and uses the heavy fence) or is ordered before
  // that fence, and then every later load of idle_tail_ here sees its give-up.
  owner_.store(me, std::memory_order_relaxed);
}

bool Timeline::give_up(Op* tail) {
  ProducerSlot* const me = ProducerSlot::mine_if_any();
  ProducerSlot* o = owner_.load(std::memory_order_acquire);
  const uint64_t ops_since = tail->seq - last_give_up_seq_;
  last_give_up_seq_ = tail->seq;
  if (o != nullptr && o != kShared && o != me && ops_since < kOpsPerHeavyFence) {
    // An owned stream that keeps going idle: each give-up costs a heavy
    // fence, so take the ownership back (one heavy fence) and make the next
    // grant wait twice as long. A stream whose producer runs ahead of it,
    // given up now and then between bursts, keeps its owner.
    SpinLockGuard g(tail_lock_);
    if (owner_.load(std::memory_order_relaxed) != me) take_back_locked();
  }
  // Release: a producer that claims the stream (acq_rel) sees what this
  // follower did.
  idle_tail_.store(tail, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // An owner's enqueue has only a compiler barrier between its link and its
  // load of idle_tail_; the heavy fence orders it. Needed only while the
  // stream has an owner (or is being revoked), and not when this thread is
  // the owner (it is not inside an enqueue).
  o = owner_.load(std::memory_order_relaxed);
  if (o != nullptr && o != kShared && o != me) heavy_fence();
  if (!tail->next_in_stream()) return false;
  return claim(tail);
}


Timeline::~Timeline() {
  // The last op's follower gave the timeline up before dropping the last
  // reference, so the tail reference is still held here.
  if (tail_) tail_->release();
}

bool Timeline::link(Op* const* parts, size_t n, const std::vector<bool>* roots, Op* join) {
  SpinLockGuard g(tail_lock_);
  note_producer_locked();
  // Parts that need the earlier work wait for the tail op. It cannot be
  // freed meanwhile: its tail reference lasts until a follower sees the
  // link to the join, which is stored below.
  if (tail_)
    for (size_t i = 0; i < n; ++i)
      if (!roots || (*roots)[i]) tail_->add_successor(parts[i]);
  return link_tail(join, true);
}

OpRef Timeline::last_pending_op() {
  SpinLockGuard g(tail_lock_);
  // A legacy-stream enqueue asks this of every blocking stream after
  // linking its own op. An owner may be linking without the lock: take the
  // stream back first (and wait out that enqueue), so that its op is either
  // seen here or was linked after the owner saw the legacy stream busy (and
  // took the locked path, which orders it after the legacy op).
  take_back_locked();
  // tail_lock_ now guards tail_, and the tail reference keeps the op alive
  // while tail_ names it.
  if (!tail_ || tail_->done()) return OpRef();
  return OpRef::share(tail_);
}

void Timeline::drop_handle() {
  // Our own reference while we look at the timeline: once final_seq_ is
  // stored, the worker completing the last op may drop the handle's
  // reference at any moment.
  retain();
  const uint64_t last = enqueued.load(std::memory_order_seq_cst);
  final_seq_.store(last, std::memory_order_seq_cst);
  // Pairs with on_op_done: this store of final_seq_ and its store of
  // `completed` are each followed by a load of the other, so at least one
  // side sees that the last op is done; handle_dropped_ makes it exactly one.
  if (completed.load(std::memory_order_seq_cst) >= last && !handle_dropped_.exchange(true, std::memory_order_acq_rel))
    release();  // the handle's
  release();    // ours
}

void Timeline::on_op_done(uint64_t seq) {
  // Ops of a stream finish in order (each waits for its predecessor's
  // completion), so this store only ever raises `completed`.
  // seq_cst on both sides (here and in wait_for) orders this store before
  // the load of wake_at_, and the waiter's registration before its load of
  // `completed`: either the waiter sees the new value or we see its target.
  completed.store(seq, std::memory_order_seq_cst);
  if (wake_at_.load(std::memory_order_seq_cst) <= seq) {
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    epoch_.notify_all();
  }
  // The handle is gone and this was the last op: drop the handle's
  // reference (the caller holds its own, see Scheduler::finish).
  if (seq == final_seq_.load(std::memory_order_seq_cst) && !handle_dropped_.exchange(true, std::memory_order_acq_rel))
    release();
}

void Timeline::wait_for(uint64_t seq) {
  // Spin briefly (the common case: work finishing within microseconds),
  // yielding the core, then sleep on the completion epoch.
  for (int i = 0; i < 200; ++i) {
    if (completed.load(std::memory_order_acquire) >= seq) return;
    if (i % 8 == 7) std::this_thread::yield();
    else cpu_relax();
  }
  {
    std::lock_guard<SpinLock> g(wait_mu_);
    wait_targets_.push_back(seq);
    if (seq < wake_at_.load(std::memory_order_relaxed)) wake_at_.store(seq, std::memory_order_seq_cst);
  }
  for (;;) {
    uint32_t e = epoch_.load(std::memory_order_seq_cst);
    if (completed.load(std::memory_order_seq_cst) >= seq) break;
    epoch_.wait(e, std::memory_order_seq_cst);
  }
  std::lock_guard<SpinLock> g(wait_mu_);
  for (size_t i = 0; i < wait_targets_.size(); ++i)
    if (wait_targets_[i] == seq) {
      wait_targets_[i] = wait_targets_.back();
      wait_targets_.pop_back();
      break;
    }
  uint64_t lowest = UINT64_MAX;
  for (uint64_t t : wait_targets_) lowest = t < lowest ? t : lowest;
  wake_at_.store(lowest, std::memory_order_seq_cst);
}

}  // namespace cucpu
