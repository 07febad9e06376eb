#include "core/graph.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "base/kahn_order.h"
#include "core/context.h"
#include "core/runtime.h"

namespace cucpu {
namespace {
std::atomic<uint64_t> g_next_graph_id{1};
}

Node::Node(Graph* g, ParamsFill fill, uint64_t id) : graph(g), id(id) {
  fill.fn(params, fill.arg);
  if (params.kind() == NodeKind::kChildGraph && params.child()) params.child()->owner = this;
}

Node::~Node() {
  if (params.kind() == NodeKind::kChildGraph && params.child()) {
    params.child()->owner = nullptr;
    destroy_graph(params.child());
  }
}

bool graph_within(const Graph* g, const Graph* ancestor) {
  for (; g; g = g->owner ? g->owner->graph : nullptr)
    if (g == ancestor) return true;
  return false;
}

Graph::Graph(Context* ctx, uint64_t ctx_id) : ctx(ctx), ctx_id(ctx_id), id(g_next_graph_id.fetch_add(1)) {}

Graph::~Graph() {
  rt().nodes.release_all(nodes_.data(), nodes_.size());
  rt().nodes.give_back_cached(node_slots_);
}

Graph* new_graph(Context* ctx) { return rt().graphs.create(ctx, ctx->id); }

void destroy_graph(Graph* g) {
  rt().graphs.kill(g);
  rt().graphs.release(g);
}

Node* Graph::add(ParamsFill fill, const Node* const* deps, size_t n, const CUgraphEdgeData* edge) {
  Node* node = rt().nodes.create_cached(node_slots_, this, fill, next_node_id_++);
  node->position = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(node);
  for (size_t i = 0; i < n; ++i) link(const_cast<Node*>(deps[i]), node, edge ? &edge[i] : nullptr);
  return node;
}

void Graph::remove(Node* n) {
  for (Node* d : n->deps) d->dependents.erase(std::find(d->dependents.begin(), d->dependents.end(), n));
  SmallVec<Node*, 2> out = n->dependents;
  for (Node* s : out) remove_edge(n, s);
  nodes_.erase(nodes_.begin() + n->position);
  for (size_t i = n->position; i < nodes_.size(); ++i) nodes_[i]->position = static_cast<uint32_t>(i);
  rt().nodes.kill(n);
  rt().nodes.release(n);
}

bool Graph::has_edge(const Node* from, const Node* to) const {
  return std::find(to->deps.begin(), to->deps.end(), from) != to->deps.end();
}

void Graph::add_edge(Node* from, Node* to, const CUgraphEdgeData* e) {
  may_have_cycle_ = true;
  link(from, to, e);
}

bool Graph::acyclic() const {
  if (!may_have_cycle_) return true;
  return kahn_order(nodes_.size(), [&](size_t i) -> const auto& { return nodes_[i]->dependents; },
                    [](const Node* d) { return d->position; })
             .size() == nodes_.size();
}

void Graph::link(Node* from, Node* to, const CUgraphEdgeData* e) {
  static const CUgraphEdgeData kDefault{};
  const bool custom = e && std::memcmp(e, &kDefault, sizeof kDefault) != 0;
  if (custom && to->edge.empty()) to->edge.assign(to->deps.size(), kDefault);
  to->deps.push_back(from);
  if (!to->edge.empty()) to->edge.push_back(e ? *e : kDefault);
  from->dependents.push_back(to);
}

bool Graph::remove_edge(Node* from, Node* to) {
  auto it = std::find(to->deps.begin(), to->deps.end(), from);
  if (it == to->deps.end()) return false;
  if (!to->edge.empty()) to->edge.erase(to->edge.begin() + (it - to->deps.begin()));
  to->deps.erase(it);
  from->dependents.erase(std::find(from->dependents.begin(), from->dependents.end(), to));
  return true;
}

bool Graph::reaches(const Node* from, const Node* to) const {
  std::vector<const Node*> stack{from};
  std::vector<const Node*> seen;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n == to) return true;
    if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
    seen.push_back(n);
    for (const Node* d : n->dependents) stack.push_back(d);
  }
  return false;
}

Graph* Graph::clone(std::vector<std::pair<const Node*, Node*>>* map) const {
  Graph* g = rt().graphs.create(ctx, ctx_id);  // its context may be gone: its id, not the slot's
  user_objects.add_to(g->user_objects);
  for (const Node* n : nodes_) {
    NodeParams p = n->params;
    if (p.kind() == NodeKind::kChildGraph) p.child() = p.child()->clone();
    Node* c = g->add(p, nullptr, 0);
    if (map) map->emplace_back(n, c);
  }
  // The clone's nodes sit at their originals' positions.
  for (const Node* n : nodes_)
    for (size_t i = 0; i < n->deps.size(); ++i) {
      CUgraphEdgeData e = n->edge_data(i);
      g->link(g->nodes_[n->deps[i]->position], g->nodes_[n->position], &e);
    }
  g->may_have_cycle_ = may_have_cycle_;
  return g;
}

CUgraphNodeType node_type(NodeKind k) {
  switch (k) {
    case NodeKind::kHost: return CU_GRAPH_NODE_TYPE_HOST;
    case NodeKind::kMemcpy: return CU_GRAPH_NODE_TYPE_MEMCPY;
    case NodeKind::kMemset: return CU_GRAPH_NODE_TYPE_MEMSET;
    case NodeKind::kEventRecord: return CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    case NodeKind::kEventWait: return CU_GRAPH_NODE_TYPE_WAIT_EVENT;
    case NodeKind::kChildGraph: return CU_GRAPH_NODE_TYPE_GRAPH;
    case NodeKind::kBatchMemOp: return CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
    case NodeKind::kKernel: return CU_GRAPH_NODE_TYPE_KERNEL;
    case NodeKind::kMemAlloc: return CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    case NodeKind::kMemFree: return CU_GRAPH_NODE_TYPE_MEM_FREE;
    default: return CU_GRAPH_NODE_TYPE_EMPTY;
  }
}

std::string Graph::dot(unsigned flags) const {
  static const char* kNames[] = {"EMPTY", "HOST", "MEMCPY", "MEMSET", "EVENT_RECORD", "EVENT_WAIT", "GRAPH",
                                 "BATCH_MEM_OP", "KERNEL", "MEM_ALLOC", "MEM_FREE"};
  std::string out = "digraph cucpu_graph_" + std::to_string(id) + " {\n  rankdir=TB;\n";
  char line[256];
  for (const Node* n : nodes_) {
    const char* kind = kNames[static_cast<int>(n->params.kind())];
    if (flags & CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE) {
      std::snprintf(line, sizeof line, "  n%llu [shape=box label=\"%s %llu\\nnode %p\"];\n",
                    static_cast<unsigned long long>(n->id), kind, static_cast<unsigned long long>(n->id),
                    static_cast<const void*>(n));
    } else {
      std::snprintf(line, sizeof line, "  n%llu [shape=box label=\"%s %llu\"];\n",
                    static_cast<unsigned long long>(n->id), kind, static_cast<unsigned long long>(n->id));
    }
    out += line;
  }
  for (const Node* n : nodes_)
    for (const Node* d : n->deps) {
      std::snprintf(line, sizeof line, "  n%llu -> n%llu;\n", static_cast<unsigned long long>(d->id),
                    static_cast<unsigned long long>(n->id));
      out += line;
    }
  return out + "}\n";
}

}  // namespace cucpu
