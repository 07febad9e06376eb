#include "core/stream.h"

#include <thread>

#include "core/allocation.h"
#include "core/context.h"
#include "core/runtime.h"
#include "exec/scheduler.h"
#include "exec/spin_lock.h"

namespace cucpu {

Stream::Stream(Context* ctx, StreamKind kind, unsigned flags, int priority)
    : ctx(ctx), kind(kind), flags(flags),
      id(rt().next_stream_id.fetch_add(1, std::memory_order_relaxed)), priority(priority) {}

Stream::~Stream() {
  // The last op's follower gave the stream up before dropping the last
  // reference, so the tail reference is still held here.
  if (tail_) tail_->release();
}

void Stream::release() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (kind != StreamKind::kLegacy) ctx->unlink_stream(this);
  // Every op, including attach ops, has run: the association reverts.
  if (attached_.load(std::memory_order_acquire)) Registry::instance().detach_stream(id);
  rt().streams.release(this);
}

bool Stream::quiescent() {
  if (kind == StreamKind::kLegacy || !idle()) return false;
  return !blocking() || ctx->legacy_stream()->idle();
}

OpRef Stream::last_pending_op() {
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

void Stream::enqueue(Op* op, Op* extra_dep) { enqueue_group(nullptr, 0, op, extra_dep); }

void Stream::enqueue_group(Op* const* parts, size_t n, Op* join, Op* extra_dep, const std::vector<bool>* roots,
                           const std::vector<bool>* sinks) {
  const int prio = priority.load(std::memory_order_relaxed);
  join->stream = this;
  join->priority = prio;
  // The common case: one op, nothing to wait for but the stream (and, for
  // a blocking stream, an idle legacy stream), enqueued by the thread that
  // owns the stream.
  const bool plain = n == 0 && !extra_dep && kind != StreamKind::kLegacy;
  if (plain && try_enqueue_owned(join)) return;

  // Ops take no reference to the stream: a destroyed stream lives until its
  // last op is done (see drop_handle). Parts keep seq 0: they are not
  // timeline positions, and the join finishes after every part.
  for (size_t i = 0; i < n; ++i) {
    parts[i]->stream = this;
    parts[i]->priority = prio;
  }
  // More than the stream link may be linked to the join: a build guard.
  const bool guarded = n > 0 || extra_dep || kind == StreamKind::kLegacy || blocking();
  if (guarded) join->add_build_guard();
  std::vector<OpRef> legacy_deps;
  bool claimed = false;

  auto link_in_stream = [&] {
    SpinLockGuard g(tail_lock_);
    note_producer_locked();
    // Parts that need the earlier work wait for the tail op. It cannot be
    // freed meanwhile: its tail reference lasts until a follower sees the
    // link to the join, which is stored below.
    if (tail_)
      for (size_t i = 0; i < n; ++i)
        if (!roots || (*roots)[i]) tail_->add_successor(parts[i]);
    claimed = link_tail(join, true);
  };

  if (kind == StreamKind::kLegacy) {
    std::unique_lock<std::shared_mutex> order(ctx->order_mu);
    link_in_stream();
    ctx->for_each_stream([&](Stream* s) {
      if (s->blocking()) {
        OpRef dep = s->last_pending_op();
        if (dep) legacy_deps.push_back(std::move(dep));
      }
    });
  } else if (blocking()) {
    std::shared_lock<std::shared_mutex> order(ctx->order_mu);
    link_in_stream();
    OpRef dep = ctx->legacy_stream()->last_pending_op();
    if (dep) legacy_deps.push_back(std::move(dep));
  } else {
    link_in_stream();
  }

  // The heads are what must wait for other streams' work: the join op
  // alone, or every root part (and the join then waits for the parts).
  auto link_head = [&](Op* head) {
    for (auto& d : legacy_deps) d->add_successor(head);
    if (extra_dep) extra_dep->add_successor(head);
  };
  if (n == 0) {
    link_head(join);
  } else {
    for (size_t i = 0; i < n; ++i) {
      if (!roots || (*roots)[i]) link_head(parts[i]);
      // Before the part's guard drops, so it cannot be done yet.
      if (!sinks || (*sinks)[i]) parts[i]->add_successor(join);
    }
  }
  // Dropping a dependency we hold (a build guard, or the join's stream
  // link once claimed): an op ready now goes to the scheduler with that
  // dependency's reference; otherwise the reference is dropped and the last
  // dependency's reference will carry the op (Scheduler::finish).
  Scheduler& sched = Scheduler::instance();
  auto launch = [&](Op* o) {
    if (o->release_dependency()) sched.submit(o);
    else o->release();
  };
  for (size_t i = 0; i < n; ++i) launch(parts[i]);
  if (guarded) launch(join);
  if (claimed) launch(join);
}

void Stream::drop_handle() {
  // Our own reference while we look at the stream: once final_seq_ is
  // stored, the worker completing the last op may drop the handle's
  // reference at any moment (found by TSan in the stress test).
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

void Stream::on_op_done(uint64_t seq) {
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

void Stream::wait_for(uint64_t seq) {
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

// Engine hooks (declared in exec/scheduler.h).
int op_status_before_execute(Op* op) { return op->stream->ctx->sticky_error(); }

}  // namespace cucpu
