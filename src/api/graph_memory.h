// Graph memory: the blocks behind memory-allocation nodes, shared by the
// node entry points (graph_mem_nodes.cpp) and the capture of stream-ordered
// allocation (mem_pool.cpp).
#pragma once
#include <memory>

#include "core/graph.h"

namespace cucpu::api {

// Maps and registers a block of `bytes` in `c` for an allocation node; its
// memory goes with the last shared_ptr. Null with *r set on failure.
std::shared_ptr<const GraphMemoryBlock> make_graph_memory(Context* c, size_t bytes, const CUmemPoolProps& pool,
                                                          std::vector<CUmemAccessDesc> access, CUresult* r);
// The live block based at `dptr`, or null.
std::shared_ptr<const GraphMemoryBlock> graph_memory_at(CUdeviceptr dptr);

}  // namespace cucpu::api
