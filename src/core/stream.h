// Stream: a CUDA stream. Its order and the protocol that hands each op to
// the next are its Timeline (exec/timeline.h); a Stream adds its context,
// flags and attributes, the legacy stream's ordering rules (a blocking
// stream's work waits for the legacy stream's earlier work, and the other
// way round), capture, and managed-memory attachment.
//
// Contract:
//  - enqueue() links a new op after the stream's last op (and, for blocking
//    streams, after the context's legacy stream's last op, or, for the
//    legacy stream, after every blocking stream's), then hands it to the
//    scheduler once its dependencies are done.
//  - A stream (not the legacy one) may be granted to a single producer
//    (timeline.h "Ownership"); a legacy enqueue takes each blocking stream
//    back before it orders itself after the stream's work
//    (Timeline::last_pending_op), so an owner's lock-free enqueue either
//    precedes the legacy op or takes the locked path.
//  - The user's handle holds a reference (timeline.h "References"); the
//    last release unlinks the stream from its context and frees it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "cuda.h"
#include "core/capture.h"
#include "exec/op.h"
#include "exec/timeline.h"

namespace cucpu {

class Context;

// kMarkers: a context's own timeline of markers (Context::marker_stream),
// which no handle names and nothing is ordered after.
enum class StreamKind { kRegular, kLegacy, kPerThread, kMarkers };

// Stream attributes other than priority (which lives on the stream itself).
struct StreamAttributes {
  CUaccessPolicyWindow access_policy{};
  // Driver 580 reads back 0xFFFFFFFF ("never set") until a policy is set;
  // kept as the raw 32-bit value so no out-of-range enum is ever loaded.
  int32_t sync_policy = -1;
  CUlaunchMemSyncDomainMap domain_map{0, 1};
  CUlaunchMemSyncDomain domain = CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT;
};

class Stream final : public Timeline {
 public:
  Stream(Context* ctx, StreamKind kind, unsigned flags, int priority);

  // On a cache line of their own: every enqueue reads these, and the
  // Timeline's last line before them is written by the workers on every
  // completion.
  alignas(64) Context* const ctx;
  const StreamKind kind;
  const unsigned flags;
  // Non-null while the stream captures; the rest of the state is in `cap`,
  // guarded by capture_mu(). Enqueue paths read only this pointer.
  std::atomic<CaptureSequence*> capturing{nullptr};

  bool blocking() const { return (flags & CU_STREAM_NON_BLOCKING) == 0; }
  // "stream 0x... (ctx 0x..., prio P, non-blocking)": what the trace's track
  // and the race checker's reports call it.
  std::string describe() const;

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

  SpinLock attr_mu;
  StreamAttributes attrs;  // guarded by attr_mu

  // Set once managed memory was attached to this stream (SINGLE).
  void note_attachment() { attached_.store(true, std::memory_order_release); }
  StreamCapture cap;

 protected:
  void last_reference_dropped() override;

 private:
  std::atomic<bool> attached_{false};
};

// The stream an op of a stream's timeline belongs to (every timeline is a
// Stream's).
inline Stream* stream_of(const Op* op) { return static_cast<Stream*>(op->timeline); }

}  // namespace cucpu
