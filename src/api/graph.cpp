// Graphs: construction, queries, instantiation and launch.
#include <algorithm>
#include <cstdio>

#include "api/common.h"
#include "core/event.h"
#include "core/graph.h"
#include "core/graph_exec.h"
#include "api/graph_common.h"

using namespace cucpu;
using api::NullStream;
using namespace cucpu::api;

namespace {

// Fills a caller array of capacity *count (or only reports the count).
template <class T, class Get>
CUresult list_out(T* out, size_t* count, size_t have, Get get) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (out) {
    for (size_t i = 0; i < *count; ++i) out[i] = i < have ? get(i) : T{};
  }
  *count = have;
  return CUDA_SUCCESS;
}

CUresult node_deps(CUgraphNode hn, CUgraphNode* out, CUgraphEdgeData* edges, size_t* count, bool incoming) {
  Node* n = node_of(hn);
  if (!n || !count) return CUDA_ERROR_INVALID_VALUE;
  const SmallVec<Node*, 2>& v = incoming ? n->deps : n->dependents;
  if (edges && out) {
    for (size_t i = 0; i < std::min(*count, v.size()); ++i) {
      if (incoming) {
        edges[i] = n->edge_data(i);
      } else {
        const Node* to = v[i];
        auto it = std::find(to->deps.begin(), to->deps.end(), n);
        edges[i] = to->edge_data(static_cast<size_t>(it - to->deps.begin()));
      }
    }
  }
  return list_out(out, count, v.size(), [&](size_t i) { return handle(v[i]); });
}

CUresult edges_of(CUgraph hg, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* data, size_t* count) {
  Graph* g = graph_of(hg);
  if (!g || !count) return CUDA_ERROR_INVALID_VALUE;
  if ((from == nullptr) != (to == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  std::vector<std::pair<Node*, size_t>> all;  // (to-node, index in its deps)
  for (Node* n : g->nodes())
    for (size_t i = 0; i < n->deps.size(); ++i) all.emplace_back(n, i);
  if (from) {
    for (size_t i = 0; i < *count; ++i) {
      bool have = i < all.size();
      from[i] = have ? handle(all[i].first->deps[all[i].second]) : nullptr;
      to[i] = have ? handle(all[i].first) : nullptr;
      if (data) data[i] = have ? all[i].first->edge_data(all[i].second) : CUgraphEdgeData{};
    }
  }
  *count = all.size();
  return CUDA_SUCCESS;
}

CUresult change_deps(CUgraph hg, const CUgraphNode* from, const CUgraphNode* to, const CUgraphEdgeData* data,
                     size_t n, bool add) {
  Graph* g = graph_of(hg);
  if (!g) return CUDA_ERROR_INVALID_VALUE;
  if (n && (!from || !to)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < n; ++i) {
    Node* a = node_of(from[i]);
    Node* b = node_of(to[i]);
    if (!a || !b || a->graph != g || b->graph != g || a == b) return CUDA_ERROR_INVALID_VALUE;
    if (g->has_edge(a, b) == add) return CUDA_ERROR_INVALID_VALUE;
  }
  for (size_t i = 0; i < n; ++i) {
    if (add) g->add_edge(node_of(from[i]), node_of(to[i]), data ? &data[i] : nullptr);
    else g->remove_edge(node_of(from[i]), node_of(to[i]));
  }
  return CUDA_SUCCESS;
}

CUresult instantiate(CUgraphExec* out, CUgraph hg, unsigned long long flags, CUgraphNode* err_node) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  Graph* g = graph_of(hg);
  if (!g) return CUDA_ERROR_INVALID_VALUE;
  const unsigned long long known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
                                   CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
                                   CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
  if (flags & ~known) return CUDA_ERROR_INVALID_VALUE;
  if (!g->acyclic()) return CUDA_ERROR_INVALID_VALUE;
  if (!context_alive(g->ctx, g->ctx_id)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  GraphExec* e = rt().execs.create(g->ctx, flags);
  const Node* bad = nullptr;
  if (CUresult r = e->build(*g, &bad)) {
    rt().execs.kill(e);
    rt().execs.release(e);
    if (err_node) *err_node = handle(const_cast<Node*>(bad));
    return r;
  }
  *out = reinterpret_cast<CUgraphExec>(e);
  return CUDA_SUCCESS;
}

// The parameters of a node of kind K, as `p` gives them (callers check it is not null).
template <NodeKind K, class P>
NodeParams node_params(const P& p) {
  NodeParams n;
  auto& payload = n.become<K>();
  if constexpr (K == NodeKind::kMemcpy || K == NodeKind::kMemset) payload.params = p;
  else payload = p;
  return n;
}

CUresult launch(NullStream ns, CUgraphExec he, CUstream h) {
  GraphExec* e = rt().execs.live(he);
  if (!e) return CUDA_ERROR_INVALID_VALUE;
  // Driver 580 crashes launching an exec of a destroyed context; the slot
  // may hold a later context, whose memory the exec would write.
  if (!context_alive(e->ctx, e->ctx_id)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  if (s->ctx->owner != e->ctx) return CUDA_ERROR_INVALID_VALUE;
  // Driver 580 refuses a graph launch into a capturing stream
  // (STREAM_CAPTURE_UNSUPPORTED) and invalidates the capture.
  Route route;
  if (CUresult r = api::refuse_during_capture(s, &route)) return r;
  return e->launch(s);
}

CUresult upload(NullStream ns, CUgraphExec he, CUstream h) {
  GraphExec* e = rt().execs.live(he);
  if (!e) return CUDA_ERROR_INVALID_VALUE;
  Stream* s;
  return api::stream_handle(h, ns, &s);  // nothing to upload: memory is shared
}

CUresult instantiate_with_params(NullStream ns, CUgraphExec* out, CUgraph hg, CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  // The upload stream is checked before the executable graph is made: a
  // call that fails leaves nothing behind (the graph's allocation nodes'
  // memory went with an executable graph no one could destroy).
  if (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) {
    Stream* s;
    if (CUresult u = api::stream_handle(p->hUploadStream, ns, &s)) return u;
  }
  CUgraphNode err = nullptr;
  CUresult r = instantiate(out, hg, p->flags, &err);
  p->hErrNode_out = err;
  p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
  return r;
}

CUresult exec_update(CUgraphExec he, CUgraph hg, CUgraphExecUpdateResultInfo* info) {
  GraphExec* e = rt().execs.live(he);
  Graph* g = graph_of(hg);
  if (!e || !g || !info) return CUDA_ERROR_INVALID_VALUE;
  const Node* err = nullptr;
  CUgraphExecUpdateResult res = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  CUresult r = e->update_from(*g, &err, &res);
  info->result = res;
  info->errorNode = handle(const_cast<Node*>(err));
  info->errorFromNode = nullptr;
  return r;
}

}  // namespace

static CUresult impl_cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  if (!phGraph || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  *phGraph = reinterpret_cast<CUgraph>(new_graph(c));
  return CUDA_SUCCESS;
}

static CUresult impl_cuGraphDestroy(CUgraph hGraph) {
  Graph* g = graph_of(hGraph);
  if (!g) return CUDA_ERROR_INVALID_VALUE;
  // Driver 580: a child graph belongs to its node; a graph a capture adds
  // to (directly or through a child) stays until the capture ends.
  if (g->owner) return CUDA_ERROR_INVALID_VALUE;
  if (capture_uses_graph(g)) return CUDA_ERROR_ILLEGAL_STATE;
  if (!rt().graphs.try_kill(g)) return CUDA_ERROR_INVALID_VALUE;  // another thread destroyed it first
  rt().graphs.release(g);
  return CUDA_SUCCESS;
}

static CUresult impl_cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph) {
  Graph* g = graph_of(originalGraph);
  if (!phGraphClone || !g) return CUDA_ERROR_INVALID_VALUE;
  *phGraphClone = reinterpret_cast<CUgraph>(g->clone());
  return CUDA_SUCCESS;
}

static CUresult impl_cuGraphNodeFindInClone(CUgraphNode* phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph) {
  Node* orig = node_of(hOriginalNode);
  Graph* g = graph_of(hClonedGraph);
  if (!phNode || !orig || !g) return CUDA_ERROR_INVALID_VALUE;
  // Clones add nodes in the same order, so ids match.
  for (Node* n : g->nodes())
    if (n->id == orig->id && n->params.kind() == orig->params.kind()) {
      *phNode = handle(n);
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}

static CUresult impl_cuGraphAddEmptyNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n) { return add_node(out, g, deps, n, NodeParams{}); }
static CUresult impl_cuGraphAddHostNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                                        const CUDA_HOST_NODE_PARAMS* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return add_node(out, g, deps, n, node_params<NodeKind::kHost>(*p));
}
static CUresult impl_cuGraphAddMemcpyNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                                          const CUDA_MEMCPY3D* p, CUcontext ctx) {
  Context* c;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = api::ctx_handle(ctx, &c)) return r;
  return add_node(out, g, deps, n, node_params<NodeKind::kMemcpy>(*p));
}
static CUresult impl_cuGraphAddMemsetNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                                          const CUDA_MEMSET_NODE_PARAMS* p, CUcontext ctx) {
  Context* c;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = api::ctx_handle(ctx, &c)) return r;
  return add_node(out, g, deps, n, node_params<NodeKind::kMemset>(*p));
}
static CUresult impl_cuGraphAddEventRecordNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n, CUevent e) { return add_node(out, g, deps, n, node_params<NodeKind::kEventRecord>(e)); }
static CUresult impl_cuGraphAddEventWaitNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n, CUevent e) { return add_node(out, g, deps, n, node_params<NodeKind::kEventWait>(e)); }
static CUresult impl_cuGraphAddChildGraphNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n, CUgraph child) {
  Graph* c = graph_of(child);
  if (!c || child == g) return CUDA_ERROR_INVALID_VALUE;
  // The parent first: the copy made next may take a destroyed parent's
  // slot, and the node would then be added to the copy itself.
  if (!out || !graph_of(g)) return CUDA_ERROR_INVALID_VALUE;
  NodeParams p;
  Graph* copy = c->clone();  // the node embeds a copy, as the driver's does
  p.become<NodeKind::kChildGraph>() = copy;
  CUresult r = add_node(out, g, deps, n, p);
  if (r != CUDA_SUCCESS) destroy_graph(copy);
  return r;
}
static CUresult impl_cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph* phGraph) {
  if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
  return with_node(hNode, NodeKind::kChildGraph, [&](Node* n) {
    *phGraph = reinterpret_cast<CUgraph>(n->params.child());
    return CUDA_SUCCESS;
  });
}

static CUresult impl_cuGraphDestroyNode(CUgraphNode hNode) {
  Node* n = node_of(hNode);
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  if (capture_holds_node(n)) return CUDA_ERROR_ILLEGAL_STATE;  // driver 580
  n->graph->remove(n);
  return CUDA_SUCCESS;
}

static CUresult impl_cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type) {
  Node* n = node_of(hNode);
  if (!n || !type) return CUDA_ERROR_INVALID_VALUE;
  *type = node_type(n->params.kind());
  return CUDA_SUCCESS;
}

static CUresult impl_cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes) {
  Graph* g = graph_of(hGraph);
  if (!g) return CUDA_ERROR_INVALID_VALUE;
  return list_out(nodes, numNodes, g->nodes().size(), [&](size_t i) { return handle(g->nodes()[i]); });
}

static CUresult impl_cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* roots, size_t* numRoots) {
  Graph* g = graph_of(hGraph);
  if (!g) return CUDA_ERROR_INVALID_VALUE;
  std::vector<Node*> r;
  for (Node* n : g->nodes())
    if (n->deps.empty()) r.push_back(n);
  return list_out(roots, numRoots, r.size(), [&](size_t i) { return handle(r[i]); });
}

static CUresult impl_cuGraphGetEdges(CUgraph g, CUgraphNode* from, CUgraphNode* to, size_t* n) { return edges_of(g, from, to, nullptr, n); }

static CUresult impl_cuGraphNodeGetDependencies(CUgraphNode h, CUgraphNode* deps, size_t* n) { return node_deps(h, deps, nullptr, n, true); }
static CUresult impl_cuGraphNodeGetDependencies_v2(CUgraphNode h, CUgraphNode* deps, CUgraphEdgeData* d, size_t* n) { return node_deps(h, deps, d, n, true); }
static CUresult impl_cuGraphNodeGetDependentNodes(CUgraphNode h, CUgraphNode* deps, size_t* n) { return node_deps(h, deps, nullptr, n, false); }
static CUresult impl_cuGraphNodeGetDependentNodes_v2(CUgraphNode h, CUgraphNode* deps, CUgraphEdgeData* d, size_t* n) { return node_deps(h, deps, d, n, false); }
static CUresult impl_cuGraphAddDependencies(CUgraph g, const CUgraphNode* from, const CUgraphNode* to, size_t n) { return change_deps(g, from, to, nullptr, n, true); }
static CUresult impl_cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode* from, const CUgraphNode* to,
                                               const CUgraphEdgeData* d, size_t n) { return change_deps(g, from, to, d, n, true); }
static CUresult impl_cuGraphRemoveDependencies(CUgraph g, const CUgraphNode* from, const CUgraphNode* to, size_t n) { return change_deps(g, from, to, nullptr, n, false); }
static CUresult impl_cuGraphRemoveDependencies_v2(CUgraph g, const CUgraphNode* from, const CUgraphNode* to,
                                                  const CUgraphEdgeData* d, size_t n) { return change_deps(g, from, to, d, n, false); }

static CUresult impl_cuGraphHostNodeGetParams(CUgraphNode h, CUDA_HOST_NODE_PARAMS* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return with_node(h, NodeKind::kHost, [&](Node* n) { *p = n->params.host(); return CUDA_SUCCESS; });
}
static CUresult impl_cuGraphHostNodeSetParams(CUgraphNode h, const CUDA_HOST_NODE_PARAMS* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return set_node_params(h, NodeKind::kHost, node_params<NodeKind::kHost>(*p));
}
static CUresult impl_cuGraphMemcpyNodeGetParams(CUgraphNode h, CUDA_MEMCPY3D* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return with_node(h, NodeKind::kMemcpy, [&](Node* n) { *p = n->params.copy().params; return CUDA_SUCCESS; });
}
static CUresult impl_cuGraphMemcpyNodeSetParams(CUgraphNode h, const CUDA_MEMCPY3D* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return set_node_params(h, NodeKind::kMemcpy, node_params<NodeKind::kMemcpy>(*p));
}
static CUresult impl_cuGraphMemsetNodeGetParams(CUgraphNode h, CUDA_MEMSET_NODE_PARAMS* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return with_node(h, NodeKind::kMemset, [&](Node* n) { *p = n->params.memset().params; return CUDA_SUCCESS; });
}
static CUresult impl_cuGraphMemsetNodeSetParams(CUgraphNode h, const CUDA_MEMSET_NODE_PARAMS* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return set_node_params(h, NodeKind::kMemset, node_params<NodeKind::kMemset>(*p));
}
static CUresult impl_cuGraphEventRecordNodeGetEvent(CUgraphNode h, CUevent* e) {
  if (!e) return CUDA_ERROR_INVALID_VALUE;
  return with_node(h, NodeKind::kEventRecord, [&](Node* n) { *e = n->params.event(); return CUDA_SUCCESS; });
}
static CUresult impl_cuGraphEventRecordNodeSetEvent(CUgraphNode h, CUevent e) { return set_node_params(h, NodeKind::kEventRecord, node_params<NodeKind::kEventRecord>(e)); }
static CUresult impl_cuGraphEventWaitNodeGetEvent(CUgraphNode h, CUevent* e) {
  if (!e) return CUDA_ERROR_INVALID_VALUE;
  return with_node(h, NodeKind::kEventWait, [&](Node* n) { *e = n->params.event(); return CUDA_SUCCESS; });
}
static CUresult impl_cuGraphEventWaitNodeSetEvent(CUgraphNode h, CUevent e) { return set_node_params(h, NodeKind::kEventWait, node_params<NodeKind::kEventWait>(e)); }

static CUresult impl_cuGraphInstantiateWithFlags(CUgraphExec* out, CUgraph g, unsigned long long flags) { return instantiate(out, g, flags, nullptr); }
static CUresult instantiate_logged(CUgraphExec* out, CUgraph g, CUgraphNode* err, char* log, size_t size) {
  if (log && size) log[0] = 0;
  return instantiate(out, g, 0, err);
}

static CUresult impl_cuGraphExecDestroy(CUgraphExec h) {
  GraphExec* e = rt().execs.live(h);
  if (!e || !rt().execs.try_kill(e)) return CUDA_ERROR_INVALID_VALUE;
  rt().execs.release(e);  // launches in flight hold their own ops
  return CUDA_SUCCESS;
}

static CUresult impl_cuGraphExecGetFlags(CUgraphExec h, cuuint64_t* flags) {
  GraphExec* e = rt().execs.live(h);
  if (!e || !flags) return CUDA_ERROR_INVALID_VALUE;
  *flags = e->flags;
  return CUDA_SUCCESS;
}

static CUresult impl_cuGraphExecUpdate(CUgraphExec he, CUgraph hg, CUgraphNode* err, CUgraphExecUpdateResult* res) {
  if (!err || !res) return CUDA_ERROR_INVALID_VALUE;
  CUgraphExecUpdateResultInfo info{};
  CUresult r = exec_update(he, hg, &info);
  *err = info.errorNode;
  *res = info.result;
  return r;
}

static CUresult impl_cuGraphExecHostNodeSetParams(CUgraphExec e, CUgraphNode n, const CUDA_HOST_NODE_PARAMS* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return exec_set(e, n, NodeKind::kHost, node_params<NodeKind::kHost>(*p));
}
static CUresult impl_cuGraphExecMemcpyNodeSetParams(CUgraphExec e, CUgraphNode n, const CUDA_MEMCPY3D* p, CUcontext ctx) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return exec_set(e, n, NodeKind::kMemcpy, node_params<NodeKind::kMemcpy>(*p));
}
static CUresult impl_cuGraphExecMemsetNodeSetParams(CUgraphExec e, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS* p,
                                                    CUcontext ctx) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return exec_set(e, n, NodeKind::kMemset, node_params<NodeKind::kMemset>(*p));
}
static CUresult impl_cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraph childGraph) {
  GraphExec* e = rt().execs.live(hGraphExec);
  Node* n = node_of(hNode);
  Graph* g = graph_of(childGraph);
  if (!e || !n || !g) return CUDA_ERROR_INVALID_VALUE;
  return e->set_child_params(n, *g);
}
static CUresult impl_cuGraphExecEventRecordNodeSetEvent(CUgraphExec e, CUgraphNode n, CUevent ev) { return exec_set(e, n, NodeKind::kEventRecord, node_params<NodeKind::kEventRecord>(ev)); }
static CUresult impl_cuGraphExecEventWaitNodeSetEvent(CUgraphExec e, CUgraphNode n, CUevent ev) { return exec_set(e, n, NodeKind::kEventWait, node_params<NodeKind::kEventWait>(ev)); }

static CUresult impl_cuGraphDebugDotPrint(CUgraph hGraph, const char* path, unsigned int flags) {
  Graph* g = graph_of(hGraph);
  if (!g || !path) return CUDA_ERROR_INVALID_VALUE;
  std::FILE* f = std::fopen(path, "w");
  if (!f) return CUDA_ERROR_OPERATING_SYSTEM;
  std::string text = g->dot(flags);
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  return ok ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
}

#include "api/entries/graph.inc"
