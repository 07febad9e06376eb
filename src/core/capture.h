// Stream capture: while a stream captures, work enqueued on it becomes
// graph nodes instead of ops.
//
// A CaptureSequence owns (or, for cuStreamBeginCaptureToGraph, borrows) the
// graph being built. Every stream joined to the sequence holds its current
// set of dependency nodes: a captured operation becomes a node that depends
// on that set, and the set becomes {node}. An event recorded during capture
// remembers the recording stream's set; waiting on it joins the waiting
// stream to the sequence (a fork) or merges the sets (a join).
//
// Locking: one global lock (capture_mu(), exec/biased_lock.h) guards every
// sequence, the capture state of every stream and the capture snapshot of
// every event. Capture calls are rare next to plain enqueues, which only
// read the stream's atomic `capturing` pointer; a thread that captures
// alone adds its nodes as the lock's owner, with no locked instruction.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda.h"
#include "core/graph.h"
#include "exec/biased_lock.h"

namespace cucpu {

class Context;
class Stream;
class Event;

struct CaptureSequence {
  uint64_t id = 0;
  Graph* graph = nullptr;
  bool owns_graph = true;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  std::thread::id thread;
  Stream* origin = nullptr;
  Context* ctx = nullptr;
  bool invalidated = false;
  std::vector<Stream*> streams;  // every joined stream, origin first
  // The last nodes of joined streams destroyed during the capture: the
  // stream leaves, and ending the capture requires them joined as a live
  // stream's would be (driver 580: STREAM_CAPTURE_UNJOINED otherwise).
  std::vector<Node*> departed;
};

// Per-stream capture state (guarded by capture_mu()).
struct StreamCapture {
  CaptureSequence* seq = nullptr;
  std::vector<Node*> deps;
  std::vector<CUgraphEdgeData> edges;
};

// Per-event capture snapshot (guarded by capture_mu()).
struct EventCapture {
  CaptureSequence* seq = nullptr;
  uint64_t seq_id = 0;
  std::vector<Node*> nodes;
};

// The lock of all capture state. Its owner (a thread that keeps capturing
// alone) adds nodes without a locked instruction: capture_route.
BiasedLock& capture_mu();

// `mode` is read through its address: callers may pass any 32-bit value.
CUresult capture_begin(Stream* s, const CUstreamCaptureMode& mode, Graph* into, const CUgraphNode* deps,
                       const CUgraphEdgeData* edges, size_t n);
CUresult capture_end(Stream* s, CUgraph* out);
// Status of `s`; for the legacy stream, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
// while a blocking stream of its context captures.
CUresult capture_status(Stream* s, CUstreamCaptureStatus* status);
CUresult capture_info(Stream* s, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                      const CUgraphNode** deps, const CUgraphEdgeData** edges, size_t* n);
CUresult capture_update_deps(Stream* s, const CUgraphNode* deps, const CUgraphEdgeData* edges, size_t n,
                             unsigned flags);

// The outcome of routing stream work through capture.
enum class Route { kEnqueue, kCaptured };
// Called by every stream-ordered entry point before it enqueues. When `s`
// captures, adds a node of `p` (or, with `capturable` false, invalidates
// the sequence and fails with STREAM_CAPTURE_UNSUPPORTED). On the legacy
// stream while a blocking stream captures: STREAM_CAPTURE_IMPLICIT.
// `invalidate` false: refuse without invalidating (batched copies, as the driver does).
// The node's parameters are written by `fill`, only when a node is made.
CUresult capture_route(Stream* s, ParamsFill fill, bool capturable, Route* route, bool invalidate = true);
inline CUresult capture_route(Stream* s, const NodeParams& p, bool capturable, Route* route, bool invalidate = true) {
  return capture_route(s, ParamsFill::copy_of(p), capturable, route, invalidate);
}
// cuEventRecord / cuStreamWaitEvent when the stream or the event is part of a capture.
CUresult capture_record(Event* e, Stream* s, unsigned flags, Route* route);
CUresult capture_wait(Stream* s, Event* e, unsigned flags, Route* route);
// Forgets any capture snapshot of `e` (recorded again outside capture).
void capture_forget_event(Event* e);
// cuEventQuery (sync false) / cuEventSynchronize (sync true) on an event
// last recorded in a live capture: CUDA_ERROR_CAPTURED_EVENT, invalidating
// the capture (driver 580); a sync once it is invalidated, or either call
// once that capture has ended: INVALID_VALUE.
CUresult captured_event_use(Event* e, bool sync);
// A context-wide wait (cuGreenCtxWaitEvent) on an event last recorded in a
// live capture: the capture is invalidated, CAPTURED_EVENT (driver 580).
CUresult capture_refuse_captured_event(Event* e);
// Operations that may not run while the stream captures (query, sync).
CUresult capture_forbid_on_stream(Stream* s);
// Live capture sequences in the process (a relaxed hint for fast paths: a
// call that sees 0 runs as if no capture existed, as it would have a
// moment earlier).
extern std::atomic<int> g_capture_sequences;
// "Potentially unsafe" calls (allocation, queries and synchronizes of
// streams and events, context sync) under the calling thread's capture
// mode; invalidates what they conflict with and returns
// STREAM_CAPTURE_UNSUPPORTED. Inline: most calls happen with no capture.
CUresult capture_check_unsafe_call_slow();
inline CUresult capture_check_unsafe_call() {
  if (g_capture_sequences.load(std::memory_order_acquire) == 0) return CUDA_SUCCESS;
  return capture_check_unsafe_call_slow();
}
// cuCtxSynchronize would wait for a capturing stream of `c`: refused in any
// capture mode and from any thread, invalidating those captures (driver 580).
// `with_green`: the streams of the contexts converted from `c`'s green
// contexts count too (a primary context's work, as cuCtxRecordEvent takes it).
CUresult capture_check_context_sync(Context* c, bool with_green = false);
CUresult exchange_capture_mode(CUstreamCaptureMode* mode);
// A capturing stream being destroyed leaves (and invalidates) its sequence.
void capture_stream_destroyed(Stream* s);
// True while a live capture adds to `g` or to a graph `g` owns: driver 580
// then refuses to destroy `g` (ILLEGAL_STATE).
bool capture_uses_graph(const Graph* g);
// True while a capturing stream holds `n` as a dependency, or `n` owns a
// graph a capture adds to: driver 580 refuses to destroy it (ILLEGAL_STATE).
bool capture_holds_node(const Node* n);

}  // namespace cucpu
