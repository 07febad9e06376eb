// Stream: a timeline of ops that execute one after another.
//
// Contract:
//  - enqueue() links a new op after the stream's last op (and, for blocking
//    streams, after the context's legacy stream or vice versa), then hands
//    it to the scheduler once its dependencies are done.
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
  OpRef last_;          // guarded by tail_lock_

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
