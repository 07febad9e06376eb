// Kernel nodes: add, get and set their parameters (v1 and v2 structs), set
// them in an executable graph, and the kernel-node attributes.
#include <cstring>

#include "api/graph_common.h"
#include "api/launch_common.h"

using namespace cucpu;
using namespace cucpu::api;

namespace {

// The parameters of either struct version; v1 has no `kern`.
template <class P>
CUresult node_params(const P* p, CUkernel kern, CUcontext ctx, NodeParams* out) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  const unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
  const unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
  return kernel_node_data(p->func, kern, ctx, grid, block, p->sharedMemBytes, p->kernelParams, p->extra,
                          &out->become<NodeKind::kKernel>());
}
CUresult node_params(const CUDA_KERNEL_NODE_PARAMS_v1* p, NodeParams* out) {
  return node_params(p, nullptr, nullptr, out);
}
CUresult node_params(const CUDA_KERNEL_NODE_PARAMS_v2* p, NodeParams* out) {
  return node_params(p, p ? p->kern : nullptr, p ? p->ctx : nullptr, out);
}

// Fills the fields both versions share. kernelParams points at the node's
// own copy of each parameter (valid until the node's parameters change).
template <class P>
void fill(Node* n, P* out) {
  KernelNodeData& k = n->params.kernel();
  const auto& params = k.fn->entry().params;
  k.args.resize(params.size());
  auto* base = reinterpret_cast<unsigned char*>(k.params.data());
  for (size_t i = 0; i < params.size(); ++i) k.args[i] = base + params[i].offset;
  out->func = reinterpret_cast<CUfunction>(k.fn);
  out->gridDimX = k.grid[0], out->gridDimY = k.grid[1], out->gridDimZ = k.grid[2];
  out->blockDimX = k.block[0], out->blockDimY = k.block[1], out->blockDimZ = k.block[2];
  out->sharedMemBytes = k.shared;
  out->kernelParams = k.args.empty() ? nullptr : k.args.data();
  out->extra = nullptr;
}

template <class P>
CUresult add(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n, const P* p) {
  if (!out || !graph_of(g)) return CUDA_ERROR_INVALID_VALUE;
  NodeParams np;
  if (CUresult r = node_params(p, &np)) return r;
  return add_node(out, g, deps, n, np);
}

template <class P>
CUresult set(CUgraphNode h, const P* p) {
  if (!node_of(h)) return CUDA_ERROR_INVALID_VALUE;
  NodeParams np;
  if (CUresult r = node_params(p, &np)) return r;
  return with_node(h, NodeKind::kKernel, [&](Node* n) {
    np.kernel().attrs = n->params.kernel().attrs;  // attributes are not parameters
    if (CUresult r = validate_node_params(np)) return r;
    n->params = std::move(np);
    return CUDA_SUCCESS;
  });
}

template <class P>
CUresult exec_set_kernel(CUgraphExec e, CUgraphNode h, const P* p) {
  NodeParams np;
  if (CUresult r = node_params(p, &np)) return r;
  return exec_set(e, h, NodeKind::kKernel, np);
}

// The attributes a kernel node carries.
bool node_attribute(int id) {
  switch (id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      return true;
    default:
      return false;
  }
}

CUresult get_attribute(CUgraphNode h, const CUkernelNodeAttrID& attr, CUkernelNodeAttrValue* out) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  const int id = raw_enum(attr);
  if (!node_attribute(id)) return CUDA_ERROR_INVALID_VALUE;
  return with_node(h, NodeKind::kKernel, [&](Node* n) {
    std::memset(out, 0, sizeof *out);
    if (id == CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP) out->memSyncDomainMap = {0, 1};
    if (id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) out->clusterDim = {1, 1, 1};
    for (const CUlaunchAttribute& a : n->params.kernel().attrs)
      if (raw_enum(a.id) == id) *out = a.value;
    return CUDA_SUCCESS;
  });
}

CUresult set_attribute(CUgraphNode h, const CUkernelNodeAttrID& attr, const CUkernelNodeAttrValue* v) {
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  const int id = raw_enum(attr);
  if (!node_attribute(id)) return CUDA_ERROR_INVALID_VALUE;
  if (id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
    if (!v->clusterDim.x || !v->clusterDim.y || !v->clusterDim.z) return CUDA_ERROR_INVALID_VALUE;
    if (uint64_t{v->clusterDim.x} * v->clusterDim.y * v->clusterDim.z > 1) return CUDA_ERROR_NOT_SUPPORTED;
  }
  return with_node(h, NodeKind::kKernel, [&](Node* n) {
    auto& attrs = n->params.kernel().attrs;
    for (CUlaunchAttribute& a : attrs)
      if (raw_enum(a.id) == id) {
        a.value = *v;
        return CUDA_SUCCESS;
      }
    CUlaunchAttribute a{};
    a.id = static_cast<CUlaunchAttributeID>(id);
    a.value = *v;
    attrs.push_back(a);
    return CUDA_SUCCESS;
  });
}

}  // namespace

static CUresult impl_cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  return with_node(hNode, NodeKind::kKernel, [&](Node* n) {
    fill(n, nodeParams);
    return CUDA_SUCCESS;
  });
}
static CUresult impl_cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v2* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  return with_node(hNode, NodeKind::kKernel, [&](Node* n) {
    fill(n, nodeParams);
    nodeParams->kern = n->params.kernel().kern;  // cudart maps it back to its host stub
    nodeParams->ctx = reinterpret_cast<CUcontext>(n->params.kernel().fn->module->ctx);
    return CUDA_SUCCESS;
  });
}

static CUresult impl_cuGraphKernelNodeCopyAttributes(CUgraphNode dst, CUgraphNode src) {
  Node* s = node_of(src);
  if (!s || s->params.kind() != NodeKind::kKernel) return CUDA_ERROR_INVALID_VALUE;
  return with_node(dst, NodeKind::kKernel, [&](Node* d) {
    d->params.kernel().attrs = s->params.kernel().attrs;
    return CUDA_SUCCESS;
  });
}

#include "api/entries/graph_kernel.inc"
