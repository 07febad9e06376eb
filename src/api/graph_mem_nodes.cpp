// Memory-allocation and -free nodes (cuGraphAddMemAllocNode, ...FreeNode and
// their getters), the device's graph-memory attributes, and the blocks
// behind the nodes (api/graph_memory.h). A block is mapped when its node is
// made, so the node's address is fixed and cuMemAllocAsync under capture can
// return it at once; executing either node moves nothing.
#include <algorithm>
#include <map>
#include <mutex>

#include "api/common.h"
#include "api/graph_common.h"
#include "api/graph_memory.h"
#include "core/allocator.h"

using namespace cucpu;
using namespace cucpu::api;

namespace {

struct Blocks {
  std::mutex mu;
  std::map<uintptr_t, std::weak_ptr<const GraphMemoryBlock>> by_base;  // guarded by mu
  uint64_t used = 0, high = 0;                                          // guarded by mu
};
Blocks& blocks() {
  static Blocks* b = new Blocks();  // never destroyed: blocks may outlive static destructors
  return *b;
}

CUresult alloc_params(const CUDA_MEM_ALLOC_NODE_PARAMS* p, Context** ctx) {
  if (!p || p->bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  if (raw_enum(p->poolProps.allocType) != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  if (raw_enum(p->poolProps.location.type) != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
  const int dev = p->poolProps.location.id;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (p->accessDescCount > 0 && !p->accessDescs) return CUDA_ERROR_INVALID_VALUE;
  return current_ctx(ctx);
}

}  // namespace

namespace cucpu::api {

std::shared_ptr<const GraphMemoryBlock> make_graph_memory(Context* c, size_t bytes, const CUmemPoolProps& pool,
                                                          std::vector<CUmemAccessDesc> access, CUresult* r) {
  void* p = nullptr;
  if ((*r = allocate(c, bytes, MemKind::kDevice, 0, &p))) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(p);
  Registry::instance().update(base, [](Allocation& a) { a.graph_owned = true; });
  auto* block = new GraphMemoryBlock{reinterpret_cast<CUdeviceptr>(p), bytes, pool, std::move(access)};
  std::shared_ptr<const GraphMemoryBlock> out(block, [base, bytes](const GraphMemoryBlock* b) {
    {
      std::lock_guard<std::mutex> g(blocks().mu);
      blocks().by_base.erase(base);
      blocks().used -= bytes;
    }
    if (auto a = Registry::instance().find(base); a && a->base == base) release_allocation(*a);
    delete b;
  });
  std::lock_guard<std::mutex> g(blocks().mu);
  blocks().by_base[base] = out;
  blocks().used += bytes;
  blocks().high = std::max(blocks().high, blocks().used);
  return out;
}

std::shared_ptr<const GraphMemoryBlock> graph_memory_at(CUdeviceptr dptr) {
  std::lock_guard<std::mutex> g(blocks().mu);
  auto it = blocks().by_base.find(static_cast<uintptr_t>(dptr));
  return it == blocks().by_base.end() ? nullptr : it->second.lock();
}

}  // namespace cucpu::api

static CUresult impl_cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                            size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams) {
  if (!phGraphNode || !graph_of(hGraph)) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = alloc_params(nodeParams, &c)) return r;
  CUresult r;
  NodeParams np;
  auto& block = np.become<NodeKind::kMemAlloc>();
  block = make_graph_memory(c, nodeParams->bytesize, nodeParams->poolProps,
                                {nodeParams->accessDescs, nodeParams->accessDescs + nodeParams->accessDescCount}, &r);
  if (!block) return r;
  if ((r = add_node(phGraphNode, hGraph, dependencies, numDependencies, np))) return r;
  nodeParams->dptr = block->dptr;
  return CUDA_SUCCESS;
}

static CUresult impl_cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* params_out) {
  if (!params_out) return CUDA_ERROR_INVALID_VALUE;
  return with_node(hNode, NodeKind::kMemAlloc, [&](Node* n) {
    const GraphMemoryBlock& b = *n->params.memory();
    params_out->poolProps = b.pool;
    params_out->accessDescs = b.access.empty() ? nullptr : b.access.data();
    params_out->accessDescCount = b.access.size();
    params_out->bytesize = b.bytes;
    params_out->dptr = b.dptr;
    return CUDA_SUCCESS;
  });
}

static CUresult impl_cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                           size_t numDependencies, CUdeviceptr dptr) {
  if (!phGraphNode || !graph_of(hGraph)) return CUDA_ERROR_INVALID_VALUE;
  NodeParams np;
  auto& block = np.become<NodeKind::kMemFree>();
  block = graph_memory_at(dptr);  // only graph memory is freed by a node
  if (!block) return CUDA_ERROR_INVALID_VALUE;
  return add_node(phGraphNode, hGraph, dependencies, numDependencies, np);
}

static CUresult impl_cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr* dptr_out) {
  if (!dptr_out) return CUDA_ERROR_INVALID_VALUE;
  return with_node(hNode, NodeKind::kMemFree, [&](Node* n) {
    *dptr_out = n->params.memory()->dptr;
    return CUDA_SUCCESS;
  });
}

// Graph memory is held only while a graph names it: nothing is cached to trim.
static CUresult impl_cuDeviceGraphMemTrim(CUdevice device) {
  if (!device_ok(device)) return CUDA_ERROR_INVALID_DEVICE;
  return CUDA_SUCCESS;
}

static CUresult impl_cuDeviceGetGraphMemAttribute(CUdevice device, const CUgraphMem_attribute& attr, void* value) {
  if (!device_ok(device)) return CUDA_ERROR_INVALID_DEVICE;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> g(blocks().mu);
  uint64_t v;
  switch (raw_enum(attr)) {
    case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: v = blocks().used; break;
    case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: v = blocks().high; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  *static_cast<cuuint64_t*>(value) = v;
  return CUDA_SUCCESS;
}

// Only the high watermarks can be set, and only to 0 (a reset).
static CUresult impl_cuDeviceSetGraphMemAttribute(CUdevice device, const CUgraphMem_attribute& attr, void* value) {
  if (!device_ok(device)) return CUDA_ERROR_INVALID_DEVICE;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  const int a = raw_enum(attr);
  if (a != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && a != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) return CUDA_ERROR_INVALID_VALUE;
  if (*static_cast<const cuuint64_t*>(value) != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> g(blocks().mu);
  blocks().high = blocks().used;
  return CUDA_SUCCESS;
}

#include "api/entries/graph_mem_nodes.inc"
