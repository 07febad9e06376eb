// Batch-memop graph nodes: stream memory operations in a graph. Each runs
// as its own op when the graph is launched (a MemOpsOp, which may defer).
#include "api/graph_common.h"

using namespace cucpu;
using namespace cucpu::api;

extern "C" {

CUresult cuGraphAddBatchMemOpNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                                  const CUDA_BATCH_MEM_OP_NODE_PARAMS* p) {
  return api::call("cuGraphAddBatchMemOpNode", api::kDefault, [&] {
    NodeParams np;
    if (CUresult r = memop_params(p, &np)) return r;
    return add_node(out, g, deps, n, np);
  }, out, g, deps, n, p);
}

// The returned paramArray points into the node: valid until the node's
// parameters change or the node is destroyed.
CUresult cuGraphBatchMemOpNodeGetParams(CUgraphNode h, CUDA_BATCH_MEM_OP_NODE_PARAMS* out) {
  return api::call("cuGraphBatchMemOpNodeGetParams", api::kDefault, [&] {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    return with_node(h, NodeKind::kBatchMemOp, [&](Node* n) {
      out->ctx = n->params.memop_ctx;
      out->count = static_cast<unsigned>(n->params.memops.size());
      out->paramArray = n->params.memops.data();
      out->flags = 0;
      return CUDA_SUCCESS;
    });
  }, h, out);
}

CUresult cuGraphBatchMemOpNodeSetParams(CUgraphNode h, const CUDA_BATCH_MEM_OP_NODE_PARAMS* p) {
  return api::call("cuGraphBatchMemOpNodeSetParams", api::kDefault, [&] {
    NodeParams np;
    if (CUresult r = memop_params(p, &np)) return r;
    return set_node_params(h, NodeKind::kBatchMemOp, np);
  }, h, p);
}

CUresult cuGraphExecBatchMemOpNodeSetParams(CUgraphExec e, CUgraphNode h, const CUDA_BATCH_MEM_OP_NODE_PARAMS* p) {
  return api::call("cuGraphExecBatchMemOpNodeSetParams", api::kDefault, [&] {
    NodeParams np;
    if (CUresult r = memop_params(p, &np)) return r;
    return exec_set(e, h, NodeKind::kBatchMemOp, np);
  }, e, h, p);
}

}  // extern "C"
