// Batch-memop graph nodes: stream memory operations in a graph. Each runs
// as its own op when the graph is launched (a MemOpsOp, which may defer).
#include "api/graph_common.h"

using namespace cucpu;
using namespace cucpu::api;

static CUresult impl_cuGraphAddBatchMemOpNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                                              const CUDA_BATCH_MEM_OP_NODE_PARAMS* p) {
  NodeParams np;
  if (CUresult r = memop_params(p, &np)) return r;
  return add_node(out, g, deps, n, np);
}

// The returned paramArray points into the node: valid until the node's
// parameters change or the node is destroyed.
static CUresult impl_cuGraphBatchMemOpNodeGetParams(CUgraphNode h, CUDA_BATCH_MEM_OP_NODE_PARAMS* out) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  return with_node(h, NodeKind::kBatchMemOp, [&](Node* n) {
    MemOpNodeData& node = n->params.memops();
    out->ctx = node.ctx;
    out->count = static_cast<unsigned>(node.ops.size());
    out->paramArray = node.ops.data();
    out->flags = 0;
    return CUDA_SUCCESS;
  });
}

static CUresult impl_cuGraphBatchMemOpNodeSetParams(CUgraphNode h, const CUDA_BATCH_MEM_OP_NODE_PARAMS* p) {
  NodeParams np;
  if (CUresult r = memop_params(p, &np)) return r;
  return set_node_params(h, NodeKind::kBatchMemOp, np);
}

static CUresult impl_cuGraphExecBatchMemOpNodeSetParams(CUgraphExec e, CUgraphNode h, const CUDA_BATCH_MEM_OP_NODE_PARAMS* p) {
  NodeParams np;
  if (CUresult r = memop_params(p, &np)) return r;
  return exec_set(e, h, NodeKind::kBatchMemOp, np);
}

#include "api/entries/graph_memop_nodes.inc"
