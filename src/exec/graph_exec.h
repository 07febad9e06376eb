// GraphExec: an instantiated graph.
//
// Instantiation flattens child graphs, resolves every copy and set once,
// and cuts the node DAG into segments: maximal chains in which each node
// has exactly one predecessor, the previous node, and that predecessor has
// exactly one successor (event nodes, batch-memop nodes and kernel nodes
// that run in parallel stand alone). A launch makes one op per segment
// (a parallel kernel node: its parts and join, exec/kernel_op.h), which
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
#include <vector>

#include "copy/copy3d.h"
#include "core/graph.h"
#include "exec/mem_ops.h"
#include "exec/op.h"

namespace cucpu {

class Stream;
class Event;

struct ExecNode {
  NodeKind kind = NodeKind::kEmpty;
  const Node* origin = nullptr;  // the graph node it came from (for updates and setters)
  CUDA_HOST_NODE_PARAMS host{};
  Copy3D copy;
  MemCheck checks[2];
  Memset2D set;
  MemCheck set_check;
  CUevent event = nullptr;
  std::vector<MemOpSpec> memops;  // batch-memop nodes
  KernelNodeData kernel;          // kernel nodes: function loaded, shape checked
  std::shared_ptr<const GraphMemoryBlock> memory;  // allocation and free nodes (kept alive by the plan)
  bool parallel = false;          // a kernel node whose blocks run on several workers (a segment of its own)
  bool cooperative = false;       // a kernel node with the cooperative attribute: all blocks at once (also parallel)
  bool disabled = false;          // cuGraphNodeSetEnabled(0): runs as an empty node
  // Storage of the arrays a copy node names, kept while any plan holds the
  // node (a destroyed array's storage lives on until then).
  std::shared_ptr<unsigned char[]> keep[2];
  std::vector<uint32_t> dependents;
};

struct ExecPlan {
  std::vector<ExecNode> nodes;
  std::vector<std::vector<uint32_t>> segments;        // node indices, in run order
  std::vector<std::vector<uint32_t>> seg_dependents;  // edges between segments
  std::vector<bool> seg_roots, seg_sinks;
  // Computes the segments from the nodes' edges.
  void segment();
};

class GraphExec {
 public:
  GraphExec(Context* ctx, uint64_t flags) : ctx(ctx), flags(flags) {}
  Context* const ctx;
  const uint64_t flags;

  // Builds the exec from `g`; on failure returns the error and the node.
  CUresult build(const Graph& g, const Node** err_node);
  CUresult launch(Stream* s);
  // Replaces the parameters of the exec node made from `n`.
  CUresult set_params(const Node* n, const NodeParams& p);
  // cuGraphNodeSetEnabled / GetEnabled: kernel, memcpy and memset nodes.
  CUresult set_enabled(const Node* n, bool enabled);
  CUresult get_enabled(const Node* n, bool* enabled) const;
  // cuGraphExecUpdate: same topology and node types, new parameters.
  CUresult update_from(const Graph& g, const Node** err_node, CUgraphExecUpdateResult* result);

 private:
  static CUresult add_graph(const Graph& g, ExecPlan& plan, std::vector<uint32_t>* entries,
                            std::vector<uint32_t>* exits, const Node** err_node);
  static CUresult resolve(const NodeParams& p, ExecNode* e);

 public:
  static CUresult resolve_for_validation(const NodeParams& p, ExecNode* e) { return resolve(p, e); }

 private:

  mutable std::mutex mu_;                   // guards plan_ and last_launch_
  std::shared_ptr<const ExecPlan> plan_;
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
