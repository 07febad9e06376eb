// Timeline: ops that execute one after another (a stream's order), and the
// protocol that hands each op to the next without a lock on the common path.
// This header is the protocol's one home; Op holds only the link field
// (next_in_stream), Scheduler::finish and watch_tail follow links, and
// core/stream.h adds what a CUDA stream adds (its context, the legacy
// stream's ordering rules, capture).
//
// Contract:
//  - Links. A producer appends an op by storing it in the previous op's
//    next_in_stream (a plain release store). Exactly one thread at a time
//    is the timeline's *follower*: the one that will finish the tail op and
//    follow its link. When that thread finds no link, it watches for one a
//    few microseconds (Scheduler) and then gives the timeline up: it stores
//    the tail it gave up in idle_tail_, and the next producer claims the
//    timeline and launches its op itself. The race between "link stored,
//    idle_tail_ loaded" (the producer) and "idle_tail_ stored, link loaded"
//    (give_up) is settled by fences: a full fence on both sides, or, on
//    timelines with an owner, an asymmetric pair (exec/asymmetric_fence.h)
//    that leaves the owner's enqueue without any locked instruction. A
//    claim is a compare-exchange of idle_tail_ from that very tail to null,
//    so when both sides see each other exactly one follows, and a give-up
//    that lost its race cannot claim a later give-up of the same timeline.
//  - Ownership. A grantable timeline fed by one thread for a while is
//    granted to that thread: its enqueues then skip tail_lock_ and all
//    fences. Any other thread that enqueues revokes the grant for good (an
//    asymmetric fence, then it waits until the owner is not inside an
//    enqueue of this timeline). Taken back until earned again: by a
//    follower that keeps giving the timeline up (each give-up of an owned
//    timeline costs a heavy fence), and by last_pending_op (a CUDA legacy
//    stream enqueue asks it of every blocking stream before ordering itself
//    after their work).
//  - `enqueued` and `completed` are sequence numbers: an op with seq N is
//    done when completed >= N. Ops of one timeline finish in seq order, so
//    a query is two atomic loads.
//  - References. The object is reference counted: the user's handle holds
//    one reference, and threads that wait on the timeline without owning a
//    handle take one with try_retain(). Ops hold none, to keep enqueue off
//    this object's reference count: drop_handle() leaves the handle's
//    reference to the last op, so the object (and its pending work) lives on
//    until that op finishes. The two threads that race for that hand-over
//    (the destroyer, the worker completing the op) each hold a reference of
//    their own while they look at the timeline. The last release calls
//    last_reference_dropped(), which the owner of the object implements.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "exec/op.h"
#include "exec/producer_slot.h"
#include "exec/spin_lock.h"

namespace cucpu {

class Scheduler;

class Timeline {
 public:
  // `grantable`: whether a single producer may be granted ownership; `id`:
  // the timeline's number in the process (stream ids), stable from run to
  // run; `error`, `fault`: two error words (a context's sticky error, its
  // device's fault) that outlive the timeline; `pool`: the worker pool its
  // ops run on (exec/scheduler.h "Pools"), which outlives it.
  Timeline(int priority, bool grantable, uint64_t id, const std::atomic<int>* error, const std::atomic<int>* fault,
           Scheduler* pool)
      : id(id), priority(priority), pool(pool), errors_{error, fault}, grantable_(grantable) {}
  virtual ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // The status an op of this timeline starts with: the first nonzero error
  // word (0: CUDA_SUCCESS). The engine asks before it executes each op.
  int status_before_execute() const {
    const int e = errors_[0]->load(std::memory_order_acquire);
    return e ? e : errors_[1]->load(std::memory_order_acquire);
  }

  // Layout, by who writes: the first line is read-mostly (set at creation,
  // read by every enqueue and by every op's run); the producer's line
  // (enqueued, the tail, ownership) is written by each enqueue; idle_tail_
  // by both sides, at hand-overs only; the completion line (completed, the
  // reference count, give-up and wake-up state) by the workers that finish
  // ops. An enqueue on one core and a run on another write no line in
  // common, and the run's reads of the first line never miss.
  const uint64_t id;
  std::atomic<int> priority;  // copied into each op at enqueue (lower runs first)
  Scheduler* const pool;

 private:
  const std::atomic<int>* const errors_[2];
  const bool grantable_;

 public:
  alignas(64) std::atomic<uint64_t> enqueued{0};

  // --- the producer side (core/stream.cpp's enqueue paths) ---
  // The owner's enqueue: links `op` (taking over the caller's reference)
  // with no lock and no locked instruction, and launches it when this
  // thread claimed the timeline. False (nothing done) when the calling
  // thread does not own the timeline.
  bool try_enqueue_owned(Op* op);
  // Links `join` as the new tail under tail_lock_, first making each part
  // (`parts`, those `roots` marks, or all) a successor of the current tail.
  // Returns true when this thread claimed the timeline: it must then
  // release the join's stream link itself.
  bool link(Op* const* parts, size_t n, const std::vector<bool>* roots, Op* join);
  // The last op enqueued, with a reference (null when none is pending).
  // Takes the timeline back from its owner first (see "Ownership").
  OpRef last_pending_op();
  // True when the calling thread owns the timeline (for tests and
  // diagnostics: the answer may change at once).
  bool owned_by_caller() const {
    ProducerSlot* me = ProducerSlot::mine_if_any();
    return me && owner_.load(std::memory_order_relaxed) == me;
  }

  // --- the follower side (Scheduler) ---
  // Called by the engine when the op with sequence `seq` is done.
  void on_op_done(uint64_t seq);
  // Called by the thread that finished `tail`, this timeline's tail op, and
  // found no link after it: this thread stops being the follower. Returns
  // true when a link arrived meanwhile and this thread claimed it after
  // all (it must then follow it).
  bool give_up(Op* tail);
  // True once the handle is dropped: nothing more will be enqueued.
  bool closed() const { return final_seq_.load(std::memory_order_relaxed) != UINT64_MAX; }

  // --- completion and waiting ---
  bool idle() const {
    return completed.load(std::memory_order_acquire) >= enqueued.load(std::memory_order_acquire);
  }
  // Waits until every op enqueued before the call is done.
  void wait_idle() { wait_for(enqueued.load(std::memory_order_acquire)); }
  void wait_for(uint64_t seq);

  // --- references ---
  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Takes a reference unless the count already reached zero (the object is
  // being destroyed and only waits to leave its owner's lists).
  bool try_retain() {
    int n = refs_.load(std::memory_order_acquire);  // pairs with release(): its ops are done
    while (n > 0)
      if (refs_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
    return false;
  }
  void release() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) last_reference_dropped();
  }
  // Drops the handle's reference once every op enqueued so far is done (at
  // once when the timeline is idle). Called once, after the handle is
  // killed: nothing may be enqueued afterwards.
  void drop_handle();

 protected:
  // The last reference is gone: every op is done. Destroys the object.
  virtual void last_reference_dropped() = 0;

 private:
  SpinLock tail_lock_;  // held for a few instructions: linking an op
  // The last op enqueued (null before the first), holding the tail
  // reference, which its follower drops once the next op is linked.
  // Guarded by tail_lock_, or by ownership.
  Op* tail_ = nullptr;
  // The owning thread's slot; null: none (may be granted); kShared: fed by
  // several threads, never granted again; kRevoking: being taken back.
  // Written under tail_lock_.
  std::atomic<ProducerSlot*> owner_{nullptr};
  static inline ProducerSlot* const kShared = reinterpret_cast<ProducerSlot*>(uintptr_t{1});
  static inline ProducerSlot* const kRevoking = reinterpret_cast<ProducerSlot*>(uintptr_t{2});
  ProducerSlot* last_producer_ = nullptr;  // guarded by tail_lock_: for granting ownership
  uint32_t producer_run_ = 0;              // guarded by tail_lock_: enqueues by last_producer_ in a row
  // Enqueues by one thread in a row after which it owns the timeline
  // (guarded by tail_lock_). Timelines that see a few ops never get an
  // owner, and so never cost a heavy fence; each give-up that takes
  // ownership back doubles it.
  uint32_t grant_after_ = 32;
  static constexpr uint32_t kMaxGrantAfter = 1u << 20;
  // Ops between two give-ups of an owned timeline below which the follower
  // takes the ownership back (above, one heavy fence per give-up costs
  // little per op).
  static constexpr uint64_t kOpsPerHeavyFence = 256;

  // Links `op` as the new tail (tail_lock_ held, or ownership). Returns true
  // when this thread claimed the timeline (nobody followed the old tail): it
  // must then release the op's stream link itself. `fenced`: a full fence
  // between the link and the load of idle_tail_ (every caller but an owner).
  bool link_tail(Op* op, bool fenced);
  // tail_lock_ held: grants or revokes ownership for the calling thread.
  void note_producer_locked();
  // tail_lock_ held: takes ownership from `owner` (see "Ownership"), then
  // sets owner_ to `after`.
  void revoke_locked(ProducerSlot* owner, ProducerSlot* after);
  // tail_lock_ held: takes the timeline back from its owner, if any, so that
  // it may be granted again later (each take-back doubles the wait).
  void take_back_locked();
  // Becomes the follower of `tail`, if it is still the tail given up.
  bool claim(Op* tail) {
    return idle_tail_.compare_exchange_strong(tail, nullptr, std::memory_order_acq_rel, std::memory_order_relaxed);
  }

  // Read by every enqueue; written only when a follower gives the timeline
  // up and when a producer claims it back. The tail op its follower gave
  // up, or null while a thread follows. Before the first op nobody follows
  // and nothing is given up: that op's producer launches it itself.
  alignas(64) std::atomic<Op*> idle_tail_{nullptr};

  // Written by the workers that complete ops (read by waiters):
 public:
  alignas(64) std::atomic<uint64_t> completed{0};

 private:
  std::atomic<uint64_t> final_seq_{UINT64_MAX};  // seq of the last op once the handle is dropped
  // Completion wake-ups. A finishing op bumps epoch_ and wakes sleepers
  // only when its seq reaches wake_at_, the lowest seq a thread sleeps for,
  // so a timeline draining under a synchronize makes one futex call, not
  // one per op.
  std::atomic<uint64_t> wake_at_{UINT64_MAX};
  std::atomic<uint32_t> epoch_{0};
  std::atomic<bool> handle_dropped_{false};
  // Taken by the worker finishing each op (Scheduler::finish), by waiters
  // and by handles.
  std::atomic<int> refs_{1};
  // Seq of the last tail given up. Written by followers only, which the
  // timeline's links and claims order one after another.
  uint64_t last_give_up_seq_ = 0;

  // Waiters' registrations (wait_for), off the enqueue and completion lines.
  alignas(64) SpinLock wait_mu_;
  std::vector<uint64_t> wait_targets_;  // guarded by wait_mu_: seqs slept for
};

}  // namespace cucpu
