// Event: a snapshot of a stream's position, taken by cuEventRecord.
//
// Recording enqueues a trivial marker op (exec/ops.h MarkerOp; the snapshot
// always holds one); the event completes when that op
// does. Waiting on the event (cuStreamWaitEvent) adds an edge from the
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
  Event(Context* ctx, unsigned flags) : ctx(ctx), flags(flags) {}
  Context* const ctx;
  const unsigned flags;

  bool timing() const { return (flags & CU_EVENT_DISABLE_TIMING) == 0; }

  EventCapture cap;  // guarded by capture_mu()
  // Whether `cap` holds a snapshot; lets a plain record skip capture_mu().
  std::atomic<bool> cap_set{false};

  void set_snapshot(OpRef op) {
    std::lock_guard<std::mutex> g(mu_);
    op_ = std::move(op);
  }
  // The marker op of the last record, with a reference; null if never recorded.
  OpRef snapshot() {
    std::lock_guard<std::mutex> g(mu_);
    return OpRef::share(op_.get());
  }

 private:
  std::mutex mu_;
  OpRef op_;  // guarded by mu_
};

}  // namespace cucpu
