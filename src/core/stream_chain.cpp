// Stream links and ownership: the enqueue side of the protocol described in
// stream.h ("Stream links", "Ownership"), and give_up, its worker side.
#include <mutex>
#include <thread>
#include <vector>

#include "core/stream.h"
#include "exec/asymmetric_fence.h"
#include "exec/scheduler.h"
#include "exec/spin_lock.h"

namespace cucpu {
namespace {


struct SlotList {
  std::mutex mu;
  std::vector<ProducerSlot*> free;  // guarded by mu: slots of exited threads
};
SlotList& slot_list() {
  static SlotList* l = new SlotList();  // outlives thread-exit returns
  return *l;
}

// initial-exec: a plain %fs-relative load on the enqueue path, instead of a
// call to __tls_get_addr (this library is normally loaded at start-up).
__attribute__((tls_model("initial-exec"))) thread_local ProducerSlot* t_slot = nullptr;

struct SlotReturn {
  ~SlotReturn() {
    if (!t_slot) return;
    std::lock_guard<std::mutex> g(slot_list().mu);
    slot_list().free.push_back(t_slot);
    t_slot = nullptr;
  }
};
thread_local SlotReturn t_slot_return;

}  // namespace

ProducerSlot* ProducerSlot::mine() {
  if (ProducerSlot* s = t_slot) return s;
  ProducerSlot* s = nullptr;
  {
    std::lock_guard<std::mutex> g(slot_list().mu);
    if (!slot_list().free.empty()) {
      s = slot_list().free.back();
      slot_list().free.pop_back();
    }
  }
  if (!s) s = new ProducerSlot();
  (void)&t_slot_return;  // constructs it: the slot goes back when the thread exits
  t_slot = s;
  return s;
}

ProducerSlot* ProducerSlot::mine_if_any() { return t_slot; }

bool Stream::link_tail(Op* op, bool fenced) {
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

bool Stream::try_enqueue_owned(Op* op) {
  ProducerSlot* me = t_slot;
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

void Stream::revoke_locked(ProducerSlot* owner, ProducerSlot* after) {
  // kRevoking until the owner is out of any enqueue that read the old
  // owner_: a follower giving up meanwhile still uses the heavy fence.
  owner_.store(kRevoking, std::memory_order_relaxed);
  heavy_fence();
  while (owner->in_progress.load(std::memory_order_acquire) == this) std::this_thread::yield();
  owner_.store(after, std::memory_order_release);
}

void Stream::take_back_locked() {
  ProducerSlot* const o = owner_.load(std::memory_order_relaxed);
  if (o == nullptr || o == kShared || o == kRevoking) return;
  revoke_locked(o, nullptr);
  producer_run_ = 0;
  if (grant_after_ < kMaxGrantAfter) grant_after_ *= 2;
}

void Stream::note_producer_locked() {
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
  if (kind == StreamKind::kLegacy || !heavy_fence_available()) return;
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

bool Stream::give_up(Op* tail) {
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

}  // namespace cucpu
