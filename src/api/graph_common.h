// Helpers shared by the graph entry points (graph.cpp, graph_node_params.cpp).
#pragma once

#include "api/common.h"
#include "core/graph.h"
#include "core/graph_exec.h"

namespace cucpu::api {

inline Graph* graph_of(CUgraph h) { return rt().graphs.live(h); }
inline Node* node_of(CUgraphNode h) { return rt().nodes.live(h); }
inline CUgraphNode handle(Node* n) { return reinterpret_cast<CUgraphNode>(n); }

// Dependencies passed to an add or a capture: all live, in `g`, no duplicates.
inline CUresult check_deps(Graph* g, const CUgraphNode* deps, size_t n) {
  if (n && !deps) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < n; ++i) {
    Node* d = node_of(deps[i]);
    if (!d || d->graph != g) return CUDA_ERROR_INVALID_VALUE;
    for (size_t j = 0; j < i; ++j)
      if (deps[j] == deps[i]) return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

inline CUresult add_node(CUgraphNode* out, CUgraph hg, const CUgraphNode* deps, size_t n, const NodeParams& p,
                  const CUgraphEdgeData* edges = nullptr) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  Graph* g = graph_of(hg);
  if (!g) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = check_deps(g, deps, n)) return r;
  NodeParams checked = p;
  if (p.kind() != NodeKind::kChildGraph) {
    if (CUresult r = validate_node_params(checked)) return r;
  }
  *out = handle(g->add(checked, reinterpret_cast<Node* const*>(deps), n, edges));
  return CUDA_SUCCESS;
}


template <class F>
CUresult with_node(CUgraphNode hn, NodeKind kind, F&& f) {
  Node* n = node_of(hn);
  if (!n || n->params.kind() != kind) return CUDA_ERROR_INVALID_VALUE;
  return f(n);
}

inline CUresult set_node_params(CUgraphNode hn, NodeKind kind, const NodeParams& p) {
  if (kind == NodeKind::kChildGraph) return CUDA_ERROR_INVALID_VALUE;  // a child graph node's graph is fixed
  return with_node(hn, kind, [&](Node* n) {
    NodeParams checked = p;
    if (CUresult r = validate_node_params(checked)) return r;
    n->params = std::move(checked);
    return CUDA_SUCCESS;
  });
}

inline CUresult exec_set(CUgraphExec he, CUgraphNode hn, NodeKind kind, const NodeParams& p) {
  GraphExec* e = rt().execs.live(he);
  Node* n = node_of(hn);
  if (!e || !n || n->params.kind() != kind) return CUDA_ERROR_INVALID_VALUE;
  return e->set_params(n, p);
}

// Batch-memop node parameters (the v1 and v2 structs have one layout). The
// operations are copied into the node and validated with add_node.
inline CUresult memop_params(const CUDA_BATCH_MEM_OP_NODE_PARAMS* p, NodeParams* out) {
  if (!p || p->flags != 0 || p->count >= 256 || (p->count > 0 && !p->paramArray)) return CUDA_ERROR_INVALID_VALUE;
  if (p->ctx) {
    Context* c;
    if (CUresult r = ctx_handle(p->ctx, &c)) return r;
  }
  MemOpNodeData& node = out->become<NodeKind::kBatchMemOp>();
  node.ops.assign(p->paramArray, p->paramArray + p->count);
  node.ctx = p->ctx;
  return CUDA_SUCCESS;
}

}  // namespace cucpu::api
