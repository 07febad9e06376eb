// Event: a snapshot of a stream's position, taken by cuEventRecord.
//
// Recording enqueues a trivial marker op (core/ops.h MarkerOp); the event
// completes when that op does. An event without timing recorded on a
// stream with nothing left to run holds no op: its snapshot is empty, as a
// never-recorded event's, which every call answers as a reached one.
// Waiting on the event (cuStreamWaitEvent) adds an edge from the marker.
// Re-recording replaces the snapshot; waits already enqueued keep the old
// one, as the driver specifies.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "cuda.h"
#include "core/capture.h"
#include "exec/op.h"

namespace cucpu {

class Context;

// An interprocess event's words (CU_EVENT_INTERPROCESS; core/ipc.h): in
// memory every process holding the event maps. Each record anywhere takes
// the next number from `recorded`; `completed` is the highest record done.
// The event is reached when completed >= recorded.
struct IpcEventWords {
  std::atomic<uint64_t> recorded;
  std::atomic<uint64_t> completed;
};

class Event {
 public:
  // `ctx`: the context it belongs to, with its id (`ctx_id`): once that
  // context is destroyed, every use answers CONTEXT_IS_DESTROYED
  // (core/context.h context_alive).
  Event(Context* ctx, uint64_t ctx_id, unsigned flags) : ctx(ctx), ctx_id(ctx_id), flags(flags) {}
  Context* const ctx;
  const uint64_t ctx_id;
  const unsigned flags;

  bool timing() const { return (flags & CU_EVENT_DISABLE_TIMING) == 0; }

  EventCapture cap;  // guarded by capture_mu()
  // Whether `cap` holds a snapshot; lets a plain record skip capture_mu().
  std::atomic<bool> cap_set{false};

  // An interprocess event's words (unmapped with the last reference: ops
  // that record or wait hold their own) and, in the process that made
  // them, their memory file; set once before the event's handle is
  // published (null and -1 for any other event).
  std::shared_ptr<IpcEventWords> ipc;
  int ipc_fd = -1;

  ~Event() {
    OpRef drop(op_.load(std::memory_order_relaxed));
    if (ipc_fd >= 0) close(ipc_fd);
  }

  void set_snapshot(OpRef op) {
    // Empty over empty changes nothing, and takes no lock (the common
    // record on an idle stream). A record racing this one from another
    // thread is ordered either way, as it would be with the lock.
    if (!op && !op_.load(std::memory_order_acquire)) return;
    Op* old;
    {
      SpinLockGuard g(mu_);
      old = op_.exchange(op.detach(), std::memory_order_acq_rel);
    }
    OpRef drop(old);  // released after the lock drops
  }
  // The marker op of the last record, with a reference; null if never
  // recorded, or recorded reached without timing.
  OpRef snapshot() {
    if (!op_.load(std::memory_order_acquire)) return OpRef();
    SpinLockGuard g(mu_);
    return OpRef::share(op_.load(std::memory_order_relaxed));
  }
  // As snapshot(), but null also when the marker is done already: what a
  // wait needs, without touching the reference count in the common case.
  OpRef pending_snapshot() {
    if (!op_.load(std::memory_order_acquire)) return OpRef();
    SpinLockGuard g(mu_);
    Op* op = op_.load(std::memory_order_relaxed);
    if (!op || op->done()) return OpRef();
    return OpRef::share(op);
  }

 private:
  // A reference is taken under mu_ only: a setter may release the old op
  // once it has swapped it out under mu_. An empty snapshot is read
  // without the lock: there is nothing to take a reference to.
  SpinLock mu_;
  std::atomic<Op*> op_{nullptr};  // holds a reference; changed under mu_
};

}  // namespace cucpu
