// Event: a snapshot of a stream's position, taken by cuEventRecord.
//
// Recording enqueues a trivial marker op (core/ops.h MarkerOp); the event
// completes when that op does. An event without timing recorded on a
// stream with nothing left to run holds no op: its snapshot is empty, as a
// never-recorded event's, which every call answers as a reached one. Waiting on the event (cuStreamWaitEvent) adds an edge from the
// marker. Re-recording replaces the snapshot; waits already enqueued keep
// the old one, as the driver specifies.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "cuda.h"
#include "core/capture.h"
#include "exec/op.h"

namespace cucpu {

class Context;

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

  void set_snapshot(OpRef op) {
    OpRef old;
    SpinLockGuard g(mu_);
    old = std::move(op_);  // released after the lock drops
    op_ = std::move(op);
  }
  // The marker op of the last record, with a reference; null if never
  // recorded, or recorded reached without timing.
  OpRef snapshot() {
    SpinLockGuard g(mu_);
    return OpRef::share(op_.get());
  }
  // As snapshot(), but null also when the marker is done already: what a
  // wait needs, without touching the reference count in the common case.
  OpRef pending_snapshot() {
    SpinLockGuard g(mu_);
    if (!op_ || op_->done()) return OpRef();
    return OpRef::share(op_.get());
  }

 private:
  SpinLock mu_;
  OpRef op_;  // guarded by mu_
};

}  // namespace cucpu
