// Stream: a timeline of ops that execute one after another.
//
// Contract:
//  - enqueue() links a new op after the stream's last op (and, for blocking
//    streams, after the context's legacy stream or vice versa), then hands
//    it to the scheduler once its dependencies are done.
//  - Stream links (see exec/op.h). Exactly one thread at a time is this
//    stream's *follower*: the one that will finish the tail op and follow
//    its link. When that thread finds no link, it watches for one a few
//    microseconds (Scheduler) and then gives the stream up: it stores the
//    tail it gave up in idle_tail_, and the next producer claims the stream
//    and launches its op itself. The race between "link stored, idle_tail_
//    loaded" (the producer) and "idle_tail_ stored, link loaded" (give_up)
//    is settled by fences: a full fence on both sides, or, on streams with
//    an owner, an asymmetric pair (exec/asymmetric_fence.h) that leaves the
//    owner's enqueue without any locked instruction. A claim is a
//    compare-exchange of idle_tail_ from that very tail to null, so when both
//    sides see each other exactly one follows, and a give-up that lost its
//    race cannot claim a later give-up of the same stream.
//  - Ownership. A stream (not the legacy one) fed by one thread for a
//    while is granted to that thread: its enqueues then skip tail_lock_ and
//    all fences. Any other thread that enqueues revokes the grant for good
//    (an asymmetric fence, then it waits until the owner is not inside an
//    enqueue of this stream). Taken back until earned again: by a follower
//    that keeps giving the stream up (each give-up of an owned stream costs
//    a heavy fence), and by a legacy enqueue, for a blocking stream, before
//    it orders itself after the stream's work.
//  - `enqueued` and `completed` are sequence numbers: an op with seq N is
//    done when completed >= N. Ops of one stream finish in seq order, so
//    query is two atomic loads.
//  - The object is reference counted: the user's handle holds one reference,
//    and threads that wait on the stream without owning a handle
//    (cuCtxSynchronize) take one with try_retain(). Ops hold none, to keep
//    enqueue off this object's reference count: drop_handle() leaves the
//    handle's reference to the stream's last op, so the object (and its
//    pending work) lives on until that op finishes. The two threads that
//    race for that hand-over (the destroyer, the worker completing the op)
//    each hold a reference of their own while they look at the stream.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cuda.h"
#include "core/capture.h"
#include "exec/op.h"

namespace cucpu {

class Context;

// What a thread that enqueues publishes about itself, so that a thread
// revoking its ownership of a stream can wait until it is not inside an
// enqueue of that stream. Slots are never freed; a slot of an exited thread
// goes to the next new thread (which may then enqueue into the streams the
// old one owned: still one live owner each).
struct alignas(64) ProducerSlot {
  std::atomic<const void*> in_progress{nullptr};  // the stream being enqueued into without a lock
  // The calling thread's slot (allocated on first use).
  static ProducerSlot* mine();
  // The calling thread's slot if it has one, else null.
  static ProducerSlot* mine_if_any();
};

enum class StreamKind { kRegular, kLegacy, kPerThread };

// Stream attributes other than priority (which lives on the stream itself).
struct StreamAttributes {
  CUaccessPolicyWindow access_policy{};
  // Driver 580 reads back 0xFFFFFFFF ("never set") until a policy is set;
  // kept as the raw 32-bit value so no out-of-range enum is ever loaded.
  int32_t sync_policy = -1;
  CUlaunchMemSyncDomainMap domain_map{0, 1};
  CUlaunchMemSyncDomain domain = CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT;
};

class Stream {
 public:
  Stream(Context* ctx, StreamKind kind, unsigned flags, int priority);
  ~Stream();

  Context* const ctx;
  const StreamKind kind;
  const unsigned flags;
  const uint64_t id;
  std::atomic<int> priority;

  // Layout: the fields above and the enqueue side's below share the first
  // cache line; the completion side (written by workers) has a line of its
  // own at the end, so enqueues and completions on different cores do not
  // write the same line.
  std::atomic<uint64_t> enqueued{0};
  // Non-null while the stream captures; the rest of the state is in `cap`,
  // guarded by capture_mu(). Enqueue paths read only this pointer.
  std::atomic<CaptureSequence*> capturing{nullptr};

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

 public:

  bool blocking() const { return (flags & CU_STREAM_NON_BLOCKING) == 0; }

  // Links `op` into the stream (taking over the caller's reference) after
  // the stream's last op and after `extra_dep` when it is not null.
  void enqueue(Op* op, Op* extra_dep = nullptr);
  // Enqueues a group: `parts` may run in parallel once the stream's earlier
  // work is done; `join` runs after all of them and is the group's position
  // in the stream (its seq). Takes over one reference to each op.
  // `roots`/`sinks`, when given, mark the parts that need the earlier work
  // and that the join needs (the others are ordered through their peers).
  void enqueue_group(Op* const* parts, size_t n, Op* join, Op* extra_dep = nullptr,
                     const std::vector<bool>* roots = nullptr, const std::vector<bool>* sinks = nullptr);

  // True when work enqueued now would be ready at once: the stream is
  // idle and, for a blocking stream, so is the legacy stream (the legacy
  // stream itself is never reported quiescent: it waits for many streams).
  bool quiescent();

  bool idle() const {
    return completed.load(std::memory_order_acquire) >= enqueued.load(std::memory_order_acquire);
  }
  // Waits until every op enqueued before the call is done.
  void wait_idle() { wait_for(enqueued.load(std::memory_order_acquire)); }
  void wait_for(uint64_t seq);
  // The last op enqueued, with a reference (null when none is pending).
  OpRef last_pending_op();

  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Takes a reference unless the count already reached zero (the stream is
  // being destroyed and only waits to leave its context's list).
  bool try_retain() {
    int n = refs_.load(std::memory_order_acquire);  // pairs with release(): its ops are done
    while (n > 0)
      if (refs_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
    return false;
  }
  void release();
  // Drops the handle's reference once every op enqueued so far is done (at
  // once when the stream is idle). Called once, after the handle is killed:
  // nothing may be enqueued afterwards.
  void drop_handle();

  // Called by the engine when the op with sequence `seq` is done.
  void on_op_done(uint64_t seq);
  // True when the calling thread owns the stream (see "Ownership"; for
  // tests and diagnostics: the answer may change at once).
  bool owned_by_caller() const {
    ProducerSlot* me = ProducerSlot::mine_if_any();
    return me && owner_.load(std::memory_order_relaxed) == me;
  }
  // True once the handle is dropped: nothing more will be enqueued.
  bool closed() const { return final_seq_.load(std::memory_order_relaxed) != UINT64_MAX; }

  // Called by the thread that finished `tail`, this stream's tail op, and
  // found no link after it: this thread stops being the follower. Returns
  // true when a link arrived meanwhile and this thread claimed it after
  // all (it must then follow it).
  bool give_up(Op* tail);

  SpinLock attr_mu;
  StreamAttributes attrs;  // guarded by attr_mu

  // Set once managed memory was attached to this stream (SINGLE).
  void note_attachment() { attached_.store(true, std::memory_order_release); }
  StreamCapture cap;

 private:
  std::atomic<int> refs_{1};
  std::atomic<bool> attached_{false};
  std::atomic<bool> handle_dropped_{false};
  SpinLock wait_mu_;
  std::vector<uint64_t> wait_targets_;  // guarded by wait_mu_: seqs slept for
  ProducerSlot* last_producer_ = nullptr;  // guarded by tail_lock_: for granting ownership
  uint32_t producer_run_ = 0;              // guarded by tail_lock_: enqueues by last_producer_ in a row
  // Enqueues by one thread in a row after which it owns the stream (guarded
  // by tail_lock_). Streams that see a few ops never get an owner, and so
  // never cost a heavy fence; each give-up that takes ownership back
  // doubles it.
  uint32_t grant_after_ = 32;
  static constexpr uint32_t kMaxGrantAfter = 1u << 20;
  // Seq of the last tail given up. Written by followers only, which the
  // stream's links and claims order one after another.
  uint64_t last_give_up_seq_ = 0;
  // Ops between two give-ups of an owned stream below which the follower
  // takes the ownership back (above, one heavy fence per give-up costs
  // little per op).
  static constexpr uint64_t kOpsPerHeavyFence = 256;

  // Links `op` as the new tail (tail_lock_ held, or ownership). Returns true
  // when this thread claimed the stream (nobody followed the old tail): it
  // must then release the op's stream link itself. `fenced`: a full fence
  // between the link and the load of idle_tail_ (every caller but an owner).
  bool link_tail(Op* op, bool fenced);
  // The owner's enqueue: no lock, no locked instruction. False (nothing
  // done) when the calling thread does not own the stream.
  bool try_enqueue_owned(Op* op);
  // tail_lock_ held: grants or revokes ownership for the calling thread.
  void note_producer_locked();
  // tail_lock_ held: takes ownership from `owner` (see "Ownership"), then
  // sets owner_ to `after`.
  void revoke_locked(ProducerSlot* owner, ProducerSlot* after);
  // tail_lock_ held: takes the stream back from its owner, if any, so that
  // it may be granted again later (each take-back doubles the wait).
  void take_back_locked();
  // Becomes the follower of `tail`, if it is still the tail given up.
  bool claim(Op* tail) {
    return idle_tail_.compare_exchange_strong(tail, nullptr, std::memory_order_acq_rel, std::memory_order_relaxed);
  }

  // Read by every enqueue; written only when a follower gives the stream
  // up and when a producer claims it back.
  // The tail op its follower gave up, or null while a thread follows the
  // stream. Before the first op nobody follows and nothing is given up:
  // that op's producer launches it itself (link_tail).
  alignas(64) std::atomic<Op*> idle_tail_{nullptr};

  // Written by the workers that complete ops (read by waiters):
 public:
  alignas(64) std::atomic<uint64_t> completed{0};

 private:
  std::atomic<uint64_t> final_seq_{UINT64_MAX};  // seq of the last op once the handle is dropped
  // Completion wake-ups. A finishing op bumps epoch_ and wakes sleepers
  // only when its seq reaches wake_at_, the lowest seq a thread sleeps for,
  // so a stream draining under cuStreamSynchronize makes one futex call,
  // not one per op.
  std::atomic<uint64_t> wake_at_{UINT64_MAX};
  std::atomic<uint32_t> epoch_{0};
};

}  // namespace cucpu
