// Graphs: nodes with parameters and dependency edges, built by the graph
// API or by stream capture, and instantiated into executable graphs
// (core/graph_exec.h).
//
// Contract: like the driver's, a graph is not safe to mutate from several
// threads at once; stream capture serializes its own additions through the
// capture sequence's lock. Nodes are owned by their graph and die with it.
#pragma once

#include <cstdint>
#include <string>
#include <memory>
#include <variant>
#include <vector>

#include "cuda.h"
#include "core/allocation.h"
#include "core/module.h"
#include "core/user_object.h"
#include "base/small_vec.h"
#include "core/handle_pool.h"

namespace cucpu {

class Context;
class Graph;

enum class NodeKind {
  kEmpty, kHost, kMemcpy, kMemset, kEventRecord, kEventWait, kChildGraph, kBatchMemOp, kKernel, kMemAlloc, kMemFree
};

// The memory of a graph's allocation node. It is mapped when the node is
// created, and its address is the node's for the graph's life (as on the
// driver). The shared_ptr's deleter (set where the block is made,
// api/graph_mem_nodes.cpp) releases it once no node, clone or executable
// graph names it. Between a free node and the next launch it stays mapped:
// touching it then is undefined on the driver and harmless here.
struct GraphMemoryBlock {
  CUdeviceptr dptr = 0;
  size_t bytes = 0;
  CUmemPoolProps pool{};
  std::vector<CUmemAccessDesc> access;
};

// A kernel node's launch: the function (kept alive by `module`), the shape
// and the packed parameters, copied when the node is set.
struct KernelNodeData {
  Function* fn = nullptr;
  ModuleRef module;
  CUkernel kern = nullptr;  // the library kernel fn instantiates, if any (reported back)
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared = 0;
  std::vector<uint64_t> params;  // param_bytes bytes, 8-byte aligned
  // Kernel-node attributes set on the node (cuGraphKernelNodeSetAttribute),
  // at most one per id.
  std::vector<CUlaunchAttribute> attrs;
  // The pointers cuGraphKernelNodeGetParams hands back (one per parameter,
  // into `params`); rebuilt by each such call.
  std::vector<void*> args;
};

// A copy node's parameters, and the device memory they named when they were
// set (core/graph_exec.h record_memory_checks): instantiation refuses a node
// whose memory was freed since.
struct CopyNodeData {
  CUDA_MEMCPY3D params{};
  MemCheck checks[2];
};
// A memset node's parameters and the memory they named (as for copies).
struct MemsetNodeData {
  CUDA_MEMSET_NODE_PARAMS params{};
  MemCheck check;
};
// A batch-memop node's operations (owned copies) and the node's context.
struct MemOpNodeData {
  std::vector<CUstreamBatchMemOpParams> ops;
  CUcontext ctx = nullptr;
};

// What a node of kind K holds.
template <NodeKind K> struct NodePayload { using type = std::monostate; };  // kEmpty
template <> struct NodePayload<NodeKind::kHost> { using type = CUDA_HOST_NODE_PARAMS; };
template <> struct NodePayload<NodeKind::kMemcpy> { using type = CopyNodeData; };
template <> struct NodePayload<NodeKind::kMemset> { using type = MemsetNodeData; };
template <> struct NodePayload<NodeKind::kEventRecord> { using type = CUevent; };
template <> struct NodePayload<NodeKind::kEventWait> { using type = CUevent; };
// Owned by the node: a clone, or the caller's graph moved in.
template <> struct NodePayload<NodeKind::kChildGraph> { using type = Graph*; };
template <> struct NodePayload<NodeKind::kBatchMemOp> { using type = MemOpNodeData; };
template <> struct NodePayload<NodeKind::kKernel> { using type = KernelNodeData; };
template <> struct NodePayload<NodeKind::kMemAlloc> { using type = std::shared_ptr<const GraphMemoryBlock>; };
template <> struct NodePayload<NodeKind::kMemFree> { using type = std::shared_ptr<const GraphMemoryBlock>; };

// A node's kind and the parameters of that kind only: a node is as big as
// its largest kind's parameters, and making one writes only its own kind's
// (a captured host node touches a few cache lines, not every kind's).
//
// Contract: an accessor names the payload of the node's kind (callers check
// kind() first); asking for another kind's throws std::bad_variant_access.
class NodeParams {
 public:
  NodeKind kind() const { return kind_; }
  // Makes these the default parameters of a node of kind K and returns them.
  template <NodeKind K> typename NodePayload<K>::type& become() {
    kind_ = K;
    return data_.emplace<typename NodePayload<K>::type>();
  }

  CUDA_HOST_NODE_PARAMS& host() { return std::get<CUDA_HOST_NODE_PARAMS>(data_); }
  const CUDA_HOST_NODE_PARAMS& host() const { return std::get<CUDA_HOST_NODE_PARAMS>(data_); }
  CopyNodeData& copy() { return std::get<CopyNodeData>(data_); }
  const CopyNodeData& copy() const { return std::get<CopyNodeData>(data_); }
  MemsetNodeData& memset() { return std::get<MemsetNodeData>(data_); }
  const MemsetNodeData& memset() const { return std::get<MemsetNodeData>(data_); }
  CUevent event() const { return std::get<CUevent>(data_); }
  Graph*& child() { return std::get<Graph*>(data_); }
  Graph* child() const { return std::get<Graph*>(data_); }
  MemOpNodeData& memops() { return std::get<MemOpNodeData>(data_); }
  const MemOpNodeData& memops() const { return std::get<MemOpNodeData>(data_); }
  KernelNodeData& kernel() { return std::get<KernelNodeData>(data_); }
  const KernelNodeData& kernel() const { return std::get<KernelNodeData>(data_); }
  const std::shared_ptr<const GraphMemoryBlock>& memory() const {
    return std::get<std::shared_ptr<const GraphMemoryBlock>>(data_);
  }

 private:
  NodeKind kind_ = NodeKind::kEmpty;
  std::variant<std::monostate, CUDA_HOST_NODE_PARAMS, CopyNodeData, MemsetNodeData, CUevent, Graph*, MemOpNodeData,
               KernelNodeData, std::shared_ptr<const GraphMemoryBlock>>
      data_;
};

// Writes a new node's parameters in place, where they start as NodeParams{}
// (so that a capture's node is built once, in the node, not built and copied).
struct ParamsFill {
  void (*fn)(NodeParams& out, const void* arg);
  const void* arg;
  // A fill that copies `p`, which must outlive the fill's use.
  static ParamsFill copy_of(const NodeParams& p) {
    return {[](NodeParams& out, const void* a) { out = *static_cast<const NodeParams*>(a); }, &p};
  }
};

struct Node {
  // A child-graph node takes ownership of params.child().
  Node(Graph* g, ParamsFill fill, uint64_t id);
  ~Node();
  Graph* const graph;
  const uint64_t id;
  // Its index in graph->nodes(); kept by Graph::add and Graph::remove, so
  // that walks over a graph index their scratch arrays without a lookup.
  uint32_t position = 0;
  SmallVec<Node*, 2> deps;        // incoming edges, in insertion order
  SmallVec<Node*, 2> dependents;  // outgoing edges
  // Edge data of incoming edge i (default unless some was given).
  CUgraphEdgeData edge_data(size_t i) const { return edge.empty() ? CUgraphEdgeData{} : edge[i]; }
  // Parallel to deps once any incoming edge carries non-default data; empty before.
  std::vector<CUgraphEdgeData> edge;
  // Last, so that a node of a small kind touches the lines of its header
  // and its kind and little else.
  NodeParams params;
};

class Graph {
 public:
  Graph(Context* ctx, uint64_t ctx_id);
  ~Graph();
  // The context current when it was made, with its id (context_alive).
  Context* const ctx;
  const uint64_t ctx_id;
  const uint64_t id;
  // The child-graph node that owns this graph, or null for a graph the
  // caller owns. An owned graph dies with its node, never through
  // cuGraphDestroy.
  Node* owner = nullptr;
  // References to user objects (cuGraphRetainUserObject); a clone holds
  // its own, an executable graph takes its own at instantiation.
  UserObjectRefs user_objects;

  // Adds a node after `deps` (all must belong to this graph; checked by the caller).
  Node* add(ParamsFill fill, const Node* const* deps, size_t n, const CUgraphEdgeData* edge = nullptr);
  Node* add(const NodeParams& p, const Node* const* deps, size_t n, const CUgraphEdgeData* edge = nullptr) {
    return add(ParamsFill::copy_of(p), deps, n, edge);
  }
  // Removes a node and its edges, destroying it.
  void remove(Node* n);
  bool has_edge(const Node* from, const Node* to) const;
  // An edge between nodes already in the graph: it may close a cycle.
  void add_edge(Node* from, Node* to, const CUgraphEdgeData* e = nullptr);
  // False when the edges form a cycle (cuGraphInstantiate refuses it). A
  // walk over the graph only once an edge joined two existing nodes: a node
  // added after its dependencies closes none.
  bool acyclic() const;
  bool remove_edge(Node* from, Node* to);
  // True when `to` is reachable from `from` (an edge from->to would not create a cycle iff false for to->from).
  bool reaches(const Node* from, const Node* to) const;

  const std::vector<Node*>& nodes() const { return nodes_; }
  // A deep copy; `map` (when given) receives original -> clone pairs.
  Graph* clone(std::vector<std::pair<const Node*, Node*>>* map = nullptr) const;
  std::string dot(unsigned flags) const;

 private:
  void link(Node* from, Node* to, const CUgraphEdgeData* e);
  std::vector<Node*> nodes_;
  // Node slots taken ahead from the runtime's pool (one lock for many adds);
  // given back with the graph.
  HandlePool<Node>::SlotCache node_slots_;
  uint64_t next_node_id_ = 0;
  bool may_have_cycle_ = false;  // some add_edge since the graph was made
};

CUgraphNodeType node_type(NodeKind k);
// A new graph and node, registered with the handle pools.
Graph* new_graph(Context* ctx);
// True when `g` is `ancestor` or is owned, through child-graph nodes, by it.
bool graph_within(const Graph* g, const Graph* ancestor);
void destroy_graph(Graph* g);

}  // namespace cucpu
