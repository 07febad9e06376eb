#include "core/capture.h"

#include <algorithm>
#include <cstring>

#include "core/context.h"
#include "core/event.h"
#include "core/runtime.h"
#include "core/stream.h"

namespace cucpu {

std::atomic<int> g_capture_sequences{0};

namespace {

std::atomic<uint64_t> g_next_capture_id{1};
std::vector<CaptureSequence*> g_sequences;  // guarded by capture_mu()
thread_local int t_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;  // raw: see exchange_capture_mode

// Joins `s` to `seq` with the given dependency set. Caller holds capture_mu().
void join(Stream* s, CaptureSequence* seq, std::vector<Node*> deps, std::vector<CUgraphEdgeData> edges) {
  s->cap.seq = seq;
  s->cap.deps = std::move(deps);
  s->cap.edges = std::move(edges);
  if (s->cap.edges.size() != s->cap.deps.size()) s->cap.edges.assign(s->cap.deps.size(), CUgraphEdgeData{});
  seq->streams.push_back(s);
  if (s->blocking()) s->ctx->blocking_captures.fetch_add(1);
  s->capturing.store(seq, std::memory_order_release);
}

void leave(Stream* s) {
  if (!s->cap.seq) return;
  if (s->blocking()) s->ctx->blocking_captures.fetch_sub(1);
  s->cap = StreamCapture{};
  s->capturing.store(nullptr, std::memory_order_release);
}

// Ends a sequence: every stream leaves; the graph goes to the caller or away.
Graph* terminate(CaptureSequence* seq, bool keep_graph) {
  for (Stream* s : seq->streams) leave(s);
  g_sequences.erase(std::find(g_sequences.begin(), g_sequences.end(), seq));
  g_capture_sequences.fetch_sub(1);
  Graph* g = seq->graph;
  if (!keep_graph && seq->owns_graph) {
    // No other capture adds to it: capture_begin refuses a graph in use.
    destroy_graph(g);
    g = nullptr;
  }
  delete seq;
  return g;
}

bool all_in_graph(const Graph* g, const CUgraphNode* nodes, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    auto* node = rt().nodes.live(nodes[i]);
    if (!node || node->graph != g) return false;
  }
  return true;
}

// True when `n` (possibly a stale pointer) is a live node of `g`.
bool node_in(const Graph* g, const Node* n) {
  const Node* live = rt().nodes.live(n);
  return live && live->graph == g;
}

// The legacy stream is never captured, except a converted green context's
// default stream, which driver 580 captures as any other.
bool never_captured(const Stream* s) { return s->kind == StreamKind::kLegacy && !s->ctx->green; }

bool legacy_blocked(Stream* s) {
  return s->kind == StreamKind::kLegacy && s->ctx->blocking_captures.load(std::memory_order_acquire) > 0;
}

// Invalidates every capture of blocking streams in the legacy stream's context.
void invalidate_blocking_captures(Context* ctx) {
  for (CaptureSequence* q : g_sequences)
    if (q->ctx == ctx)
      for (Stream* s : q->streams)
        if (s->blocking()) q->invalidated = true;
}

// Using the legacy stream while a blocking stream of its context captures
// would make the capture depend on it implicitly: refused, and the
// blocking captures are invalidated.
CUresult refuse_implicit_legacy_use(Stream* s) {
  if (!legacy_blocked(s)) return CUDA_SUCCESS;
  std::lock_guard<BiasedLock> g(capture_mu());
  invalidate_blocking_captures(s->ctx);
  return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
}

}  // namespace

BiasedLock& capture_mu() {
  static BiasedLock* m = new BiasedLock();  // outlives static destruction
  return *m;
}

CUresult exchange_capture_mode(CUstreamCaptureMode* mode) {
  if (!mode) return CUDA_ERROR_INVALID_VALUE;
  // Driver 580 takes any value (an undefined one then behaves as neither
  // GLOBAL nor RELAXED here: like THREAD_LOCAL). Kept as the raw integer.
  int m;
  std::memcpy(&m, mode, sizeof m);
  std::memcpy(mode, &t_mode, sizeof m);
  t_mode = m;
  return CUDA_SUCCESS;
}

CUresult capture_begin(Stream* s, const CUstreamCaptureMode& mode, Graph* into, const CUgraphNode* deps,
                       const CUgraphEdgeData* edges, size_t n) {
  int m;
  std::memcpy(&m, &mode, sizeof m);
  if (m < CU_STREAM_CAPTURE_MODE_GLOBAL || m > CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_ERROR_INVALID_VALUE;
  if (never_captured(s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  std::lock_guard<BiasedLock> g(capture_mu());
  if (s->cap.seq) return CUDA_ERROR_ILLEGAL_STATE;
  // A graph a live capture adds to (the one cuStreamGetCaptureInfo gives),
  // or owns one that it adds to: ILLEGAL_STATE (driver 580). Its owner
  // could otherwise free it under this capture.
  if (into)
    for (CaptureSequence* q : g_sequences)
      if (graph_within(q->graph, into) || graph_within(into, q->graph)) return CUDA_ERROR_ILLEGAL_STATE;
  if (n && !deps) return CUDA_ERROR_INVALID_VALUE;
  if (into && !all_in_graph(into, deps, n)) return CUDA_ERROR_INVALID_VALUE;
  auto* seq = new CaptureSequence();
  seq->id = g_next_capture_id.fetch_add(1);
  seq->graph = into ? into : new_graph(s->ctx);
  seq->owns_graph = into == nullptr;
  seq->mode = static_cast<CUstreamCaptureMode>(m);
  seq->thread = std::this_thread::get_id();
  seq->origin = s;
  seq->ctx = s->ctx;
  g_sequences.push_back(seq);
  g_capture_sequences.fetch_add(1);
  std::vector<Node*> d;
  for (size_t i = 0; i < n; ++i) d.push_back(rt().nodes.live(deps[i]));
  join(s, seq, std::move(d), edges ? std::vector<CUgraphEdgeData>(edges, edges + n) : std::vector<CUgraphEdgeData>());
  return CUDA_SUCCESS;
}

CUresult capture_end(Stream* s, CUgraph* out) {
  std::lock_guard<BiasedLock> g(capture_mu());
  CaptureSequence* seq = s->cap.seq;
  if (!seq) return CUDA_ERROR_ILLEGAL_STATE;
  if (seq->origin != s) return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
  // Driver 580: the wrong thread's attempt ends the capture too, and a
  // NULL graph pointer ends it successfully, discarding the graph.
  if (seq->mode != CU_STREAM_CAPTURE_MODE_RELAXED && seq->thread != std::this_thread::get_id()) {
    terminate(seq, false);
    return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
  }
  if (!out) {
    terminate(seq, false);
    return CUDA_SUCCESS;
  }
  if (seq->invalidated) {
    terminate(seq, false);
    *out = nullptr;
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  // Every other joined stream's work, and that of the streams destroyed
  // during the capture, must be an ancestor of the origin's.
  auto joined = [&](Node* pending) {
    return std::any_of(s->cap.deps.begin(), s->cap.deps.end(),
                       [&](Node* mine) { return seq->graph->reaches(pending, mine); });
  };
  bool all_joined = std::all_of(seq->departed.begin(), seq->departed.end(), joined);
  for (Stream* other : seq->streams)
    if (other != s) all_joined = all_joined && std::all_of(other->cap.deps.begin(), other->cap.deps.end(), joined);
  if (!all_joined) {
    terminate(seq, false);
    *out = nullptr;
    return CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
  }
  *out = reinterpret_cast<CUgraph>(terminate(seq, true));
  return CUDA_SUCCESS;
}

CUresult capture_status(Stream* s, CUstreamCaptureStatus* status) {
  if (legacy_blocked(s)) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  if (!s->capturing.load(std::memory_order_acquire)) {
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
  }
  std::lock_guard<BiasedLock> g(capture_mu());
  CaptureSequence* seq = s->cap.seq;
  *status = !seq ? CU_STREAM_CAPTURE_STATUS_NONE
            : seq->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                               : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  return CUDA_SUCCESS;
}

CUresult capture_info(Stream* s, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                      const CUgraphNode** deps, const CUgraphEdgeData** edges, size_t* n) {
  if (!status) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = capture_status(s, status)) return r;
  if (*status == CU_STREAM_CAPTURE_STATUS_NONE) return CUDA_SUCCESS;
  std::lock_guard<BiasedLock> g(capture_mu());
  CaptureSequence* seq = s->cap.seq;
  if (!seq) {
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
  }
  if (id) *id = seq->id;
  if (graph) *graph = reinterpret_cast<CUgraph>(seq->graph);
  // The arrays stay valid until the stream's capture state next changes.
  if (deps) *deps = reinterpret_cast<const CUgraphNode*>(s->cap.deps.data());
  if (edges) *edges = s->cap.edges.data();  // the driver returns the array even when all default
  if (n) *n = s->cap.deps.size();
  return CUDA_SUCCESS;
}

CUresult capture_update_deps(Stream* s, const CUgraphNode* deps, const CUgraphEdgeData* edges, size_t n,
                             unsigned flags) {
  if (flags != CU_STREAM_ADD_CAPTURE_DEPENDENCIES && flags != CU_STREAM_SET_CAPTURE_DEPENDENCIES)
    return CUDA_ERROR_INVALID_VALUE;
  if (n && !deps) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<BiasedLock> g(capture_mu());
  CaptureSequence* seq = s->cap.seq;
  if (!seq) return CUDA_ERROR_ILLEGAL_STATE;
  if (!all_in_graph(seq->graph, deps, n)) return CUDA_ERROR_INVALID_VALUE;
  if (flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES) {
    s->cap.deps.clear();
    s->cap.edges.clear();
  }
  for (size_t i = 0; i < n; ++i) {
    Node* node = rt().nodes.live(deps[i]);
    if (std::find(s->cap.deps.begin(), s->cap.deps.end(), node) != s->cap.deps.end()) continue;
    s->cap.deps.push_back(node);
    s->cap.edges.push_back(edges ? edges[i] : CUgraphEdgeData{});
  }
  return CUDA_SUCCESS;
}

namespace {
// capture_route's work, under capture_mu() (locked, or entered as its owner).
CUresult add_captured_node(Stream* s, ParamsFill fill, bool capturable, Route* route, bool invalidate) {
  CaptureSequence* seq = s->cap.seq;
  if (!seq) return CUDA_SUCCESS;  // capture ended meanwhile
  if (seq->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  if (!capturable) {
    if (invalidate) seq->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  Node* node = seq->graph->add(fill, s->cap.deps.data(), s->cap.deps.size(), s->cap.edges.data());
  s->cap.deps.assign(1, node);
  s->cap.edges.assign(1, CUgraphEdgeData{});
  *route = Route::kCaptured;
  return CUDA_SUCCESS;
}

struct OwnedSection {
  BiasedLock& lock;
  ~OwnedSection() { lock.leave_owned(); }
};
}  // namespace

CUresult capture_route(Stream* s, ParamsFill fill, bool capturable, Route* route, bool invalidate) {
  *route = Route::kEnqueue;
  if (CUresult r = refuse_implicit_legacy_use(s)) return r;
  if (!s->capturing.load(std::memory_order_acquire)) return CUDA_SUCCESS;
  BiasedLock& mu = capture_mu();
  if (mu.enter_owned()) {
    OwnedSection section{mu};
    return add_captured_node(s, fill, capturable, route, invalidate);
  }
  std::lock_guard<BiasedLock> g(mu);
  return add_captured_node(s, fill, capturable, route, invalidate);
}

void capture_forget_event(Event* e) {
  if (!e->cap_set.load(std::memory_order_acquire)) return;
  std::lock_guard<BiasedLock> g(capture_mu());
  e->cap = EventCapture{};
  e->cap_set.store(false, std::memory_order_release);
}

CUresult captured_event_use(Event* e, bool sync) {
  if (!e->cap_set.load(std::memory_order_acquire)) return CUDA_SUCCESS;
  std::lock_guard<BiasedLock> g(capture_mu());
  CaptureSequence* seq = e->cap.seq;
  bool live = seq && std::any_of(g_sequences.begin(), g_sequences.end(),
                                 [&](CaptureSequence* q) { return q == seq && q->id == e->cap.seq_id; });
  // Last recorded in a capture that has ended: it was never recorded in a
  // stream (driver 580: INVALID_VALUE until it is recorded again outside one).
  if (!live) return CUDA_ERROR_INVALID_VALUE;
  if (sync && seq->invalidated) return CUDA_ERROR_INVALID_VALUE;
  seq->invalidated = true;
  return CUDA_ERROR_CAPTURED_EVENT;
}

CUresult capture_refuse_captured_event(Event* e) {
  if (!e->cap_set.load(std::memory_order_acquire)) return CUDA_SUCCESS;
  std::lock_guard<BiasedLock> g(capture_mu());
  CaptureSequence* seq = e->cap.seq;
  for (CaptureSequence* q : g_sequences) {
    if (q != seq || q->id != e->cap.seq_id) continue;
    q->invalidated = true;
    return CUDA_ERROR_CAPTURED_EVENT;
  }
  return CUDA_SUCCESS;
}

// CU_EVENT_RECORD_EXTERNAL / CU_EVENT_WAIT_EXTERNAL in capture: an event node.
CUresult capture_event_node(Stream* s, NodeKind kind, Event* e, Route* route) {
  NodeParams p;
  const CUevent handle = reinterpret_cast<CUevent>(e);
  if (kind == NodeKind::kEventRecord) p.become<NodeKind::kEventRecord>() = handle;
  else p.become<NodeKind::kEventWait>() = handle;
  return capture_route(s, p, true, route);
}

CUresult capture_record(Event* e, Stream* s, unsigned flags, Route* route) {
  *route = Route::kEnqueue;
  if (!s->capturing.load(std::memory_order_acquire) && !legacy_blocked(s)) {
    // An external record is a graph's event-record node: only in a capture.
    if (flags & CU_EVENT_RECORD_EXTERNAL) return CUDA_ERROR_ILLEGAL_STATE;
    capture_forget_event(e);
    return CUDA_SUCCESS;
  }
  if (flags & CU_EVENT_RECORD_EXTERNAL) return capture_event_node(s, NodeKind::kEventRecord, e, route);
  if (legacy_blocked(s)) return capture_route(s, NodeParams{}, true, route);
  std::lock_guard<BiasedLock> g(capture_mu());
  CaptureSequence* seq = s->cap.seq;
  if (!seq) return CUDA_SUCCESS;
  if (seq->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  e->cap.seq = seq;
  e->cap.seq_id = seq->id;
  e->cap.nodes = s->cap.deps;
  e->cap_set.store(true, std::memory_order_release);
  *route = Route::kCaptured;
  return CUDA_SUCCESS;
}

CUresult capture_wait(Stream* s, Event* e, unsigned flags, Route* route) {
  *route = Route::kEnqueue;
  const bool stream_captures = s->capturing.load(std::memory_order_acquire) != nullptr;
  const bool event_captured = g_capture_sequences.load(std::memory_order_acquire) > 0 && e->cap_set.load(std::memory_order_acquire);
  if (!stream_captures && (flags & CU_EVENT_WAIT_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;  // only in a capture
  if (!stream_captures && !event_captured && !legacy_blocked(s)) return CUDA_SUCCESS;
  if (stream_captures && (flags & CU_EVENT_WAIT_EXTERNAL)) return capture_event_node(s, NodeKind::kEventWait, e, route);
  if (legacy_blocked(s)) return capture_route(s, NodeParams{}, true, route);
  std::lock_guard<BiasedLock> g(capture_mu());
  CaptureSequence* eseq = e->cap.seq;
  bool live = eseq && std::find(g_sequences.begin(), g_sequences.end(), eseq) != g_sequences.end() &&
              eseq->id == e->cap.seq_id;
  CaptureSequence* sseq = s->cap.seq;
  if (!sseq) {
    if (!live) return CUDA_SUCCESS;  // raced with the end of the capture
    if (never_captured(s)) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    std::vector<Node*> nodes;
    for (Node* n : e->cap.nodes)
      if (node_in(eseq->graph, n)) nodes.push_back(n);  // skip nodes destroyed since the record
    join(s, eseq, std::move(nodes), {});  // a fork: s now captures into eseq
    *route = Route::kCaptured;
    return CUDA_SUCCESS;
  }
  if (sseq->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  if (!live) {
    // An event from outside the capture: a dependency across its boundary.
    sseq->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
  }
  if (eseq != sseq) {
    sseq->invalidated = true;
    eseq->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_MERGE;
  }
  for (Node* n : e->cap.nodes) {
    if (!node_in(eseq->graph, n)) continue;  // destroyed since the record
    if (std::find(s->cap.deps.begin(), s->cap.deps.end(), n) != s->cap.deps.end()) continue;
    s->cap.deps.push_back(n);
    s->cap.edges.push_back(CUgraphEdgeData{});
  }
  *route = Route::kCaptured;
  return CUDA_SUCCESS;
}

CUresult capture_forbid_on_stream(Stream* s) {
  if (CUresult r = refuse_implicit_legacy_use(s)) return r;
  if (!s->capturing.load(std::memory_order_acquire)) return CUDA_SUCCESS;
  std::lock_guard<BiasedLock> g(capture_mu());
  if (!s->cap.seq) return CUDA_SUCCESS;
  s->cap.seq->invalidated = true;
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUresult capture_check_unsafe_call_slow() {
  if (t_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_SUCCESS;
  std::lock_guard<BiasedLock> g(capture_mu());
  const auto me = std::this_thread::get_id();
  bool prohibited = false;
  for (CaptureSequence* q : g_sequences) {
    bool mine = q->thread == me && q->mode != CU_STREAM_CAPTURE_MODE_RELAXED;
    bool global_other = t_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && q->thread != me &&
                        q->mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
    if (mine || global_other) {
      q->invalidated = true;
      prohibited = true;
    }
  }
  return prohibited ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

CUresult capture_check_context_sync(Context* c, bool with_green) {
  if (g_capture_sequences.load(std::memory_order_acquire) == 0) return CUDA_SUCCESS;
  std::lock_guard<BiasedLock> g(capture_mu());
  bool prohibited = false;
  for (CaptureSequence* q : g_sequences) {
    // A live sequence's context is alive: destroying it ends its captures.
    if (q->ctx != c && !(with_green && q->ctx->owner == c)) continue;
    q->invalidated = true;
    prohibited = true;
  }
  return prohibited ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

bool capture_uses_graph(const Graph* g) {
  if (g_capture_sequences.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<BiasedLock> lock(capture_mu());
  for (CaptureSequence* q : g_sequences)
    if (graph_within(q->graph, g)) return true;
  return false;
}

bool capture_holds_node(const Node* n) {
  if (g_capture_sequences.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<BiasedLock> lock(capture_mu());
  for (CaptureSequence* q : g_sequences) {
    if (n->params.kind() == NodeKind::kChildGraph && graph_within(q->graph, n->params.child())) return true;
    for (Stream* s : q->streams)
      if (std::find(s->cap.deps.begin(), s->cap.deps.end(), n) != s->cap.deps.end()) return true;
    if (std::find(q->departed.begin(), q->departed.end(), n) != q->departed.end()) return true;
  }
  return false;
}

void capture_stream_destroyed(Stream* s) {
  if (!s->capturing.load(std::memory_order_acquire)) return;
  std::lock_guard<BiasedLock> g(capture_mu());
  CaptureSequence* seq = s->cap.seq;
  if (!seq) return;
  if (seq->origin == s) {
    seq->invalidated = true;
    terminate(seq, false);
    return;
  }
  // A joined stream leaves; the capture goes on (driver 580), and its work
  // must still be joined by the end.
  seq->departed.insert(seq->departed.end(), s->cap.deps.begin(), s->cap.deps.end());
  seq->streams.erase(std::find(seq->streams.begin(), seq->streams.end(), s));
  leave(s);
}

}  // namespace cucpu
