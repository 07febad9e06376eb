// GraphExec: an instantiated graph.
//
// Instantiation flattens child graphs, resolves every copy and set once,
// and cuts the node DAG into segments: maximal chains in which each node
// has exactly one predecessor, the previous node, and that predecessor has
// exactly one successor (event nodes, batch-memop nodes and kernel nodes
// that run in parallel stand alone). A launch makes one op per segment
// (a parallel kernel node: its parts and join, core/kernel_op.h), which
// runs its nodes in order, links the segment ops by the
// edges between segments, and enqueues them as one stream group: segments
// run in parallel wherever the edges allow, and the group completes when
// every segment has. Per node, a launch costs the node's own work; per
// segment, one op.
//
// The plan (nodes, segments) is immutable once published: launches share
// it with the ops they create, and setters publish a new copy, so a launch
// in flight keeps the parameters it was launched with. Launches of one exec
// are ordered after each other, in any stream.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <variant>
#include <vector>

#include "core/context.h"
#include "core/copy_resolve.h"
#include "core/graph.h"
#include "base/small_vec.h"
#include "core/mem_ops.h"
#include "exec/op.h"

namespace cucpu {

class Stream;
class Event;
namespace check {
struct PartOrder;
}

// What a copy node runs: the copy resolved once, the memory it names (to
// check it is still live), and the storage of the arrays it names, kept
// while any plan holds the node (a destroyed array's storage lives on).
struct ExecCopy {
  Copy3D copy;
  MemCheck checks[2];
  std::shared_ptr<unsigned char[]> keep[2];
};
// What a memset node runs.
struct ExecSet {
  Memset2D set;
  MemCheck check;
};

// One node of a plan: its kind, edges and what it runs (`work`, by kind:
// host parameters, the copy or set, the event, the memory operations, the
// kernel (its function loaded, its shape checked), the memory block of an
// allocation or free node). Work bigger than a pointer lives apart and is
// shared by the plan's copies (setters publish copies of the plan), so a
// node is small: a plan of many nodes takes few pages when it is built.
struct ExecNode {
  NodeKind kind = NodeKind::kEmpty;
  bool parallel = false;     // a kernel node whose blocks run on several workers (a segment of its own)
  bool cooperative = false;  // a kernel node with the cooperative attribute: all blocks at once (also parallel)
  bool disabled = false;     // cuGraphNodeSetEnabled(0): runs as an empty node
  const Node* origin = nullptr;  // the graph node it came from (for updates and setters)
  SmallVec<uint32_t, 2> dependents;
  std::variant<std::monostate, CUDA_HOST_NODE_PARAMS, std::shared_ptr<const ExecCopy>, std::shared_ptr<const ExecSet>,
               CUevent, std::vector<MemOpSpec>, std::shared_ptr<const KernelNodeData>,
               std::shared_ptr<const GraphMemoryBlock>>
      work;

  // The work of a node of the matching kind (callers check `kind` first).
  const CUDA_HOST_NODE_PARAMS& host() const { return *std::get_if<CUDA_HOST_NODE_PARAMS>(&work); }
  const ExecCopy& copy() const { return **std::get_if<std::shared_ptr<const ExecCopy>>(&work); }
  const ExecSet& set() const { return **std::get_if<std::shared_ptr<const ExecSet>>(&work); }
  const KernelNodeData& kernel() const { return **std::get_if<std::shared_ptr<const KernelNodeData>>(&work); }
  const std::vector<MemOpSpec>& memops() const { return *std::get_if<std::vector<MemOpSpec>>(&work); }
  // Event record and wait nodes; null for other kinds.
  CUevent event() const { return std::holds_alternative<CUevent>(work) ? std::get<CUevent>(work) : nullptr; }
};

struct ExecPlan {
  // The user objects of the graph and its child graphs, referenced until
  // the exec and every launch in flight are gone (launches hold the plan).
  std::shared_ptr<const UserObjectRefs> user_objects;
  std::vector<ExecNode> nodes;
  // Segment k runs nodes seg_nodes[seg_begin[k] .. seg_begin[k + 1]), in
  // that order; its edges to other segments are
  // seg_deps[seg_dep_begin[k] .. seg_dep_begin[k + 1]).
  std::vector<uint32_t> seg_begin, seg_nodes;
  std::vector<uint32_t> seg_dep_begin, seg_deps;
  std::vector<bool> seg_roots, seg_sinks;
  size_t segment_count() const { return seg_roots.size(); }
  std::span<const uint32_t> segment_nodes(size_t k) const {
    return {seg_nodes.data() + seg_begin[k], seg_nodes.data() + seg_begin[k + 1]};
  }
  std::span<const uint32_t> segment_deps(size_t k) const {
    return {seg_deps.data() + seg_dep_begin[k], seg_deps.data() + seg_dep_begin[k + 1]};
  }
  // Computes the segments from the nodes' edges.
  void segment();
};

class GraphExec {
 public:
  // `ctx`: the context instantiating it; the exec belongs to its owner,
  // remembered with its id: once that context is destroyed the exec is
  // never launched (its memory nodes and kernels named that context's
  // memory and modules; a later context may hold those addresses now).
  GraphExec(Context* ctx, uint64_t flags) : ctx(ctx->owner), ctx_id(ctx->owner->id), flags(flags) {}
  Context* const ctx;
  const uint64_t ctx_id;
  const uint64_t flags;

  // Builds the exec from `g`; on failure returns the error and the node.
  CUresult build(const Graph& g, const Node** err_node);
  CUresult launch(Stream* s);
  // Replaces the parameters of the exec node made from `n`.
  CUresult set_params(const Node* n, const NodeParams& p);
  // cuGraphExecChildGraphNodeSetParams: the nodes made from child-graph
  // node `n`'s graph take the parameters of `fresh`'s nodes (the same
  // topology, insertion order and kinds, child graphs within included).
  CUresult set_child_params(const Node* n, const Graph& fresh);
  // cuGraphNodeSetEnabled / GetEnabled: kernel, memcpy and memset nodes.
  CUresult set_enabled(const Node* n, bool enabled);
  CUresult get_enabled(const Node* n, bool* enabled) const;
  // cuGraphExecUpdate: same topology and node types, new parameters.
  CUresult update_from(const Graph& g, const Node** err_node, CUgraphExecUpdateResult* result);

 private:
  // Appends g's nodes (child graphs flattened) to plan.nodes with their
  // edges; `entries` and `exits` (null at the top level) receive the exec
  // nodes where g starts and ends, for the edges into a child graph's node.
  static CUresult add_graph(const Graph& g, ExecPlan& plan, std::vector<uint32_t>* entries,
                            std::vector<uint32_t>* exits, const Node** err_node);
  static CUresult resolve(const NodeParams& p, ExecNode* e);

 public:
  static CUresult resolve_for_validation(const NodeParams& p, ExecNode* e) { return resolve(p, e); }

 private:

  mutable std::mutex mu_;                   // guards plan_ and last_launch_
  std::shared_ptr<const ExecPlan> plan_;
  // `cucpu check`: the order among plan_'s nodes, built at a launch while
  // checking (guarded by mu_).
  std::shared_ptr<const ExecPlan> check_order_plan_;
  std::shared_ptr<const check::PartOrder> check_order_;
  OpRef last_launch_;                       // the join op of the previous launch
};

// Checks node parameters the way the graph API does when a node is added,
// and records in p.checks the device memory they name.
CUresult validate_node_params(NodeParams& p);
// Records in p.checks the device memory a copy or set node names (captured
// nodes: the entry point validated them already).
void record_memory_checks(NodeParams& p);
void record_checks(NodeParams& p, const ExecNode& resolved);

}  // namespace cucpu
