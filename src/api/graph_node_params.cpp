// The generic node API: cuGraphAddNode (v1, v2), cuGraphNodeSetParams and
// cuGraphExecNodeSetParams, for the node types cucpu executes.
#include "api/graph_common.h"
#include "api/launch_common.h"

using namespace cucpu;
using namespace cucpu::api;

namespace {

// Translates CUgraphNodeParams; node types cucpu cannot run are NOT_SUPPORTED.
CUresult translate(const CUgraphNodeParams* in, NodeParams* out, bool for_add) {
  if (!in) return CUDA_ERROR_INVALID_VALUE;
  switch (raw_enum(in->type)) {
    case CU_GRAPH_NODE_TYPE_EMPTY:
      out->become<NodeKind::kEmpty>();
      return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_HOST:
      out->become<NodeKind::kHost>() = {in->host.fn, in->host.userData};
      return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
      Context* c;
      if (in->memcpy.flags != 0 || in->memcpy.reserved != 0) return CUDA_ERROR_INVALID_VALUE;
      if (in->memcpy.copyCtx) {
        if (CUresult r = ctx_handle(in->memcpy.copyCtx, &c)) return r;
      }
      out->become<NodeKind::kMemcpy>().params = in->memcpy.copyParams;
      return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const CUDA_MEMSET_NODE_PARAMS_v2& m = in->memset;
      Context* c;
      if (m.ctx) {
        if (CUresult r = ctx_handle(m.ctx, &c)) return r;
      }
      out->become<NodeKind::kMemset>().params = {m.dst, m.pitch, m.value, m.elementSize, m.width, m.height};
      return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      out->become<NodeKind::kEventRecord>() = in->eventRecord.event;
      return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      out->become<NodeKind::kEventWait>() = in->eventWait.event;
      return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_GRAPH: {
      if (!for_add) return CUDA_ERROR_INVALID_VALUE;  // a child graph node's graph is fixed
      Graph* child = graph_of(in->graph.graph);
      if (!child) return CUDA_ERROR_INVALID_VALUE;
      int own = raw_enum(in->graph.ownership);
      if (own != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE && own != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE)
        return CUDA_ERROR_INVALID_VALUE;
      // MOVE: the node takes the caller's graph (which it will destroy).
      out->become<NodeKind::kChildGraph>() = own == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE ? child : child->clone();
      return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
      const CUDA_BATCH_MEM_OP_NODE_PARAMS_v2& m = in->memOp;
      CUDA_BATCH_MEM_OP_NODE_PARAMS v1{m.ctx, m.count, m.paramArray, m.flags};
      return memop_params(&v1, out);
    }
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      const CUDA_KERNEL_NODE_PARAMS_v3& k = in->kernel;
      const unsigned grid[3] = {k.gridDimX, k.gridDimY, k.gridDimZ};
      const unsigned block[3] = {k.blockDimX, k.blockDimY, k.blockDimZ};
      return kernel_node_data(k.func, k.kern, k.ctx, grid, block, k.sharedMemBytes, k.kernelParams, k.extra,
                              &out->become<NodeKind::kKernel>());
    }
    default:
      return CUDA_ERROR_NOT_SUPPORTED;  // memory-allocation and semaphore nodes, conditionals
  }
}

// A graph moved into a node must be the caller's (not already owned by a
// node), must not be the new node's graph or one of its owners (the graph
// would own itself), and must not be a graph a capture adds to.
CUresult check_move(const Graph* parent, const CUgraphNodeParams* p) {
  if (!p || raw_enum(p->type) != CU_GRAPH_NODE_TYPE_GRAPH ||
      raw_enum(p->graph.ownership) != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE)
    return CUDA_SUCCESS;
  const Graph* child = graph_of(p->graph.graph);
  if (!child) return CUDA_ERROR_INVALID_VALUE;
  // Driver 580: NOT_SUPPORTED for an owned graph. It accepts a graph moved
  // into itself or into one of its descendants, after which the graphs own
  // each other and can never be destroyed: refused here alike
  // (docs/conformance.md).
  if (child->owner || graph_within(parent, child)) return CUDA_ERROR_NOT_SUPPORTED;
  if (capture_uses_graph(child)) return CUDA_ERROR_ILLEGAL_STATE;
  return CUDA_SUCCESS;
}

CUresult add(CUgraphNode* out, CUgraph hg, const CUgraphNode* deps, const CUgraphEdgeData* edges, size_t n,
             CUgraphNodeParams* p) {
  Graph* parent = graph_of(hg);
  if (!parent || !out) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = check_move(parent, p)) return r;
  NodeParams np;
  if (CUresult r = translate(p, &np, true)) return r;
  CUresult r = add_node(out, hg, deps, n, np, edges);
  if (r != CUDA_SUCCESS && np.kind() == NodeKind::kChildGraph && raw_enum(p->graph.ownership) == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE)
    destroy_graph(np.child());
  return r;
}

}  // namespace

static CUresult impl_cuGraphAddNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                    size_t numDependencies, CUgraphNodeParams* nodeParams) { return add(phGraphNode, hGraph, dependencies, nullptr, numDependencies, nodeParams); }

static CUresult impl_cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams* nodeParams) {
  Node* n = node_of(hNode);
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  NodeParams np;
  if (CUresult r = translate(nodeParams, &np, false)) return r;
  return set_node_params(hNode, np.kind(), np);
}

static CUresult impl_cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeParams* nodeParams) {
  NodeParams np;
  if (CUresult r = translate(nodeParams, &np, false)) return r;
  return exec_set(hGraphExec, hNode, np.kind(), np);
}

static CUresult impl_cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled) {
  GraphExec* e = rt().execs.live(hGraphExec);
  Node* n = node_of(hNode);
  if (!e || !n) return CUDA_ERROR_INVALID_VALUE;
  return e->set_enabled(n, isEnabled != 0);
}

static CUresult impl_cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int* isEnabled) {
  GraphExec* e = rt().execs.live(hGraphExec);
  Node* n = node_of(hNode);
  if (!e || !n || !isEnabled) return CUDA_ERROR_INVALID_VALUE;
  bool on = false;
  if (CUresult r = e->get_enabled(n, &on)) return r;
  *isEnabled = on ? 1 : 0;
  return CUDA_SUCCESS;
}

#include "api/entries/graph_node_params.inc"
