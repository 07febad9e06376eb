// GraphExec: an instantiated graph. Instantiation flattens child graphs,
// resolves every copy and set once, and precomputes the edges; a launch
// turns each node into one op, links them by those edges and enqueues them
// as one stream group (its nodes run in parallel wherever the edges allow;
// the group completes when every node has). Launches of one exec are
// ordered after each other, in any stream.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "copy/copy3d.h"
#include "core/graph.h"
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
  std::vector<uint32_t> dependents;
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
  // cuGraphExecUpdate: same topology and node types, new parameters.
  CUresult update_from(const Graph& g, const Node** err_node, CUgraphExecUpdateResult* result);
  size_t size() const { return nodes_.size(); }

 private:
  CUresult add_graph(const Graph& g, std::vector<uint32_t>* entries, std::vector<uint32_t>* exits,
                     const Node** err_node);
  static CUresult resolve(const NodeParams& p, ExecNode* e);

 public:
  static CUresult resolve_for_validation(const NodeParams& p, ExecNode* e) { return resolve(p, e); }

 private:

  std::mutex mu_;             // guards nodes_ against concurrent launch/update and last_launch_
  std::vector<ExecNode> nodes_;
  std::vector<bool> roots_, sinks_;  // computed by build(): nodes without deps / dependents
  OpRef last_launch_;         // the join op of the previous launch
};

// Checks node parameters the way the graph API does when a node is added.
CUresult validate_node_params(const NodeParams& p);

}  // namespace cucpu
