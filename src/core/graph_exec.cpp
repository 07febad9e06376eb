#include "core/graph_exec.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "base/kahn_order.h"
#include "copy/copy_plan.h"
#include "core/check.h"
#include "core/event.h"
#include "core/runtime.h"
#include "core/stream.h"
#include "core/kernel_op.h"
#include "core/ops.h"
#include "exec/trace.h"
#include "symbols/names.h"

namespace cucpu {

CUresult GraphExec::add_graph(const Graph& g, ExecPlan& plan, std::vector<uint32_t>* entries,
                              std::vector<uint32_t>* exits, const Node** err_node) {
  std::vector<ExecNode>& nodes_ = plan.nodes;
  // Each node maps to the exec nodes where it starts and where it ends: one
  // index for a plain node; a child graph starts at its roots and ends at
  // its sinks. Scratch arrays are indexed by Node::position (no scratch
  // state in the graph: it may be instantiated from several threads at once).
  const auto& nodes = g.nodes();
  const size_t count = nodes.size();
  std::vector<uint32_t> single(count, UINT32_MAX);
  std::vector<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> child_span;
  std::vector<uint32_t> child_of(count, UINT32_MAX);
  nodes_.reserve(nodes_.size() + count);
  for (size_t i = 0; i < count; ++i) {
    const Node* n = nodes[i];
    if (n->params.kind() == NodeKind::kChildGraph) {
      std::vector<uint32_t> in, out;
      if (CUresult r = add_graph(*n->params.child(), plan, &in, &out, err_node)) return r;
      if (!in.empty()) {
        child_of[i] = static_cast<uint32_t>(child_span.size());
        child_span.emplace_back(std::move(in), std::move(out));
        continue;
      }
    }
    ExecNode& e = nodes_.emplace_back();
    e.origin = n;
    if (CUresult r = resolve(n->params, &e)) {
      nodes_.pop_back();
      *err_node = n;
      return r;
    }
    if (n->params.kind() == NodeKind::kChildGraph) e.kind = NodeKind::kEmpty;  // an empty child graph
    single[i] = static_cast<uint32_t>(nodes_.size() - 1);
  }
  auto starts = [&](size_t i) -> const std::vector<uint32_t>* {
    return child_of[i] == UINT32_MAX ? nullptr : &child_span[child_of[i]].first;
  };
  auto ends = [&](size_t i) -> const std::vector<uint32_t>* {
    return child_of[i] == UINT32_MAX ? nullptr : &child_span[child_of[i]].second;
  };
  auto each = [&](const std::vector<uint32_t>* many, uint32_t one, auto&& f) {
    if (many) {
      for (uint32_t v : *many) f(v);
    } else {
      f(one);
    }
  };
  for (size_t i = 0; i < count; ++i)
    for (const Node* d : nodes[i]->deps) {
      const size_t j = d->position;
      each(ends(j), single[j], [&](uint32_t from) {
        each(starts(i), single[i], [&](uint32_t to) { nodes_[from].dependents.push_back(to); });
      });
    }
  if (entries)
    for (size_t i = 0; i < count; ++i) {
      if (nodes[i]->deps.empty()) each(starts(i), single[i], [&](uint32_t v) { entries->push_back(v); });
      if (nodes[i]->dependents.empty()) each(ends(i), single[i], [&](uint32_t v) { exits->push_back(v); });
    }
  return CUDA_SUCCESS;
}

void ExecPlan::segment() {
  const size_t n = nodes.size();
  // Event and batch-memop nodes stand alone: each becomes its own op (a
  // marker, or a MemOpsOp that may defer), never part of a chain; so do
  // kernel nodes that run in parallel (a group of their own).
  std::vector<uint32_t> indeg(n, 0), pred(n, UINT32_MAX);
  std::vector<uint8_t> alone(n);
  for (uint32_t i = 0; i < n; ++i) {
    const ExecNode& e = nodes[i];
    alone[i] = e.kind == NodeKind::kEventRecord || e.kind == NodeKind::kEventWait || e.kind == NodeKind::kBatchMemOp ||
               (e.kind == NodeKind::kKernel && e.parallel);
    for (uint32_t d : e.dependents) {
      ++indeg[d];
      pred[d] = i;  // meaningful only where indeg ends up 1
    }
  }
  // Whether node i continues its one predecessor's chain.
  std::vector<uint8_t> continues(n);
  for (uint32_t i = 0; i < n; ++i)
    continues[i] = indeg[i] == 1 && !alone[i] && !alone[pred[i]] && nodes[pred[i]].dependents.size() == 1;
  // Each chain from its head: a node that continues none. (A cycle would
  // have no head; instantiation refuses graphs with one, Graph::acyclic.)
  std::vector<uint32_t> seg_of(n, UINT32_MAX);
  seg_begin.clear();
  seg_nodes.clear();
  seg_nodes.reserve(n);
  seg_roots.clear();
  seg_sinks.clear();
  for (uint32_t head = 0; head < n; ++head) {
    if (continues[head]) continue;
    const auto k = static_cast<uint32_t>(seg_begin.size());
    seg_begin.push_back(static_cast<uint32_t>(seg_nodes.size()));
    seg_roots.push_back(indeg[head] == 0);
    uint32_t i = head;
    for (;;) {
      seg_of[i] = k;
      seg_nodes.push_back(i);
      if (nodes[i].dependents.size() != 1 || !continues[nodes[i].dependents[0]]) break;
      i = nodes[i].dependents[0];
    }
    seg_sinks.push_back(nodes[i].dependents.empty());
  }
  seg_begin.push_back(static_cast<uint32_t>(seg_nodes.size()));
  // Only a chain's last node has edges out of it, each to another chain's head.
  const size_t count = segment_count();
  seg_dep_begin.assign(1, 0);
  seg_deps.clear();
  for (size_t k = 0; k < count; ++k) {
    const size_t at = seg_deps.size();
    for (uint32_t d : nodes[seg_nodes[seg_begin[k + 1] - 1]].dependents)
      if (seg_of[d] != UINT32_MAX) seg_deps.push_back(seg_of[d]);
    if (seg_deps.size() - at > 1) {
      std::sort(seg_deps.begin() + static_cast<ptrdiff_t>(at), seg_deps.end());
      seg_deps.erase(std::unique(seg_deps.begin() + static_cast<ptrdiff_t>(at), seg_deps.end()), seg_deps.end());
    }
    seg_dep_begin.push_back(static_cast<uint32_t>(seg_deps.size()));
  }
}

namespace {
// References of its own to the user objects of g and its child graphs.
void add_user_objects(const Graph& g, UserObjectRefs& out) {
  g.user_objects.add_to(out);
  for (const Node* n : g.nodes())
    if (n->params.kind() == NodeKind::kChildGraph && n->params.child()) add_user_objects(*n->params.child(), out);
}
}  // namespace

CUresult GraphExec::build(const Graph& g, const Node** err_node) {
  auto plan = std::make_shared<ExecPlan>();
  if (CUresult r = add_graph(g, *plan, nullptr, nullptr, err_node)) return r;
  auto refs = std::make_shared<UserObjectRefs>();
  add_user_objects(g, *refs);
  plan->user_objects = std::move(refs);
  plan->segment();
  std::lock_guard<std::mutex> lock(mu_);
  plan_ = std::move(plan);
  return CUDA_SUCCESS;
}

namespace {

// The launch a kernel node makes (its parameters stay in the node).
devrt::LaunchConfig kernel_config(const ExecNode& n) {
  const KernelNodeData& k = n.kernel();
  devrt::LaunchConfig cfg;
  cfg.grid = {k.grid[0], k.grid[1], k.grid[2]};
  cfg.block = {k.block[0], k.block[1], k.block[2]};
  cfg.dynamic_shared_bytes = k.shared;
  cfg.params = k.params.data();
  cfg.globals = k.fn->globals();
  return cfg;
}

// What the timeline trace calls a graph node (its slice inside its segment's).
std::string node_trace_name(const ExecNode& n) {
  switch (n.kind) {
    case NodeKind::kHost: return "host node";
    case NodeKind::kMemcpy: return "memcpy node " + std::to_string(bytes_of(n.copy().copy)) + " B";
    case NodeKind::kMemset: return "memset node";
    case NodeKind::kKernel: return "kernel node " + symbols::readable_name(n.kernel().fn->name());
    case NodeKind::kEventRecord: return "event record node";
    case NodeKind::kEventWait: return "event wait node";
    case NodeKind::kBatchMemOp: return "memory operations node";
    case NodeKind::kMemAlloc: return "memory allocation node";
    case NodeKind::kMemFree: return "memory free node";
    case NodeKind::kEmpty: return "empty node";
    default: return "node";
  }
}

// For `cucpu check`: which nodes of `plan` an edge path orders, each node
// named as reports name it. Null for plans too big to check (the nodes of
// a launch are then not checked against each other).
std::shared_ptr<const check::PartOrder> node_order(const ExecPlan& plan) {
  constexpr size_t kMaxNodes = 8192;  // 8 MiB of bits
  static std::atomic<uint64_t> next_id{1};
  const size_t n = plan.nodes.size();
  if (n == 0 || n > kMaxNodes) return nullptr;
  auto order = std::make_shared<check::PartOrder>();
  order->id = next_id.fetch_add(1, std::memory_order_relaxed);
  order->words = (n + 63) / 64;
  order->reach.assign(n * order->words, 0);
  const std::vector<uint32_t> topo =
      kahn_order(plan.nodes.size(), [&](size_t i) -> const auto& { return plan.nodes[i].dependents; },
                 [](uint32_t d) { return d; });
  for (size_t k = topo.size(); k-- > 0;) {  // successors first
    const uint32_t i = topo[k];
    uint64_t* mine = &order->reach[i * order->words];
    for (uint32_t d : plan.nodes[i].dependents) {
      mine[d / 64] |= uint64_t{1} << (d % 64);
      const uint64_t* theirs = &order->reach[d * order->words];
      for (size_t w = 0; w < order->words; ++w) mine[w] |= theirs[w];
    }
  }
  order->names.reserve(n);
  for (uint32_t i = 0; i < n; ++i) order->names.push_back(node_trace_name(plan.nodes[i]) + " (node " + std::to_string(i) + ")");
  return order;
}

// A node's name in the trace, built once per thread and kind of node.
uint32_t node_name_id(const ExecNode& n) {
  const uint64_t what = n.kind == NodeKind::kKernel   ? reinterpret_cast<uintptr_t>(n.kernel().fn)
                        : n.kind == NodeKind::kMemcpy ? bytes_of(n.copy().copy)
                                                      : 0;
  return trace::keyed_name(trace::name_key({100 + static_cast<uint64_t>(n.kind), what}),
                           [](const void* p) { return node_trace_name(*static_cast<const ExecNode*>(p)); }, &n);
}

// Runs one segment's nodes in order. Host nodes run with the thread marked
// "inside a host function"; copies and sets are skipped once the context
// has faulted (and fault it when their memory is gone).
class SegmentOp final : public Op {
 public:
  const char* trace_literal() const override { return nullptr; }
  uint64_t trace_name_key() const override { return trace::name_key({20, plan_->segment_nodes(seg_).size()}); }
  std::string trace_name() const override {
    return "graph segment (" + std::to_string(plan_->segment_nodes(seg_).size()) + " nodes)";
  }
  SegmentOp(std::shared_ptr<const ExecPlan> plan, uint32_t seg) : plan_(std::move(plan)), seg_(seg) {}
  bool marks_writes_as_run() const override { return true; }
  bool accesses_when_run() const override {
    for (uint32_t i : plan_->segment_nodes(seg_))
      if (plan_->nodes[i].kind == NodeKind::kKernel) return true;
    return false;
  }
  // Each access names its node (part: the node's index + 1).
  void accesses(std::vector<MemAccess>& out) const override {
    for (uint32_t i : plan_->segment_nodes(seg_)) {
      const ExecNode& n = plan_->nodes[i];
      if (n.disabled) continue;
      const size_t from = out.size();
      if (n.kind == NodeKind::kMemcpy) check::copy_accesses(n.copy().copy, out);
      else if (n.kind == NodeKind::kMemset) out.push_back(check::memset_access(n.set().set));
      for (size_t k = from; k < out.size(); ++k) out[k].part = i + 1;
    }
  }
  void execute(int status) override {
    const bool traced = trace_id != 0;
    uint64_t t0 = traced ? trace::now() : 0;  // a node starts when the one before it ended
    for (uint32_t i : plan_->segment_nodes(seg_)) {
      const ExecNode& n = plan_->nodes[i];
      if (n.disabled) continue;
      switch (n.kind) {
        case NodeKind::kHost:
          set_in_host_function(true);
          n.host().fn(n.host().userData);
          set_in_host_function(false);
          break;
        case NodeKind::kMemcpy:
          if (status == CUDA_SUCCESS && !run_on_live_memory(n.copy().checks, 2, [&n] { run_copy(n.copy().copy); }))
            status = fault();
          if (status == CUDA_SUCCESS && check::on()) [[unlikely]] node_wrote(n);
          break;
        case NodeKind::kMemset:
          if (status == CUDA_SUCCESS && !run_on_live_memory(&n.set().check, 1, [&n] { run_memset(n.set().set); }))
            status = fault();
          if (status == CUDA_SUCCESS && check::on()) [[unlikely]] node_wrote(n);
          break;
        case NodeKind::kKernel:
          if (status == CUDA_SUCCESS) {
            check::KernelRun checked(this, n.kernel().fn->name(), false, i + 1);
            if (!run_kernel_inline(*n.kernel().fn, kernel_config(n))) status = n.kernel().fn->module->ctx->sticky_error();
          }
          break;
        default:
          break;
      }
      if (traced) [[unlikely]] {
        const uint64_t t1 = trace::now();
        trace::part_ran(timeline, node_name_id(n), t0, t1);
        t0 = t1;
      }
    }
    if (check::on()) [[unlikely]] check::ran(this, {}, true);
  }

 private:
  int fault() {
    stream_of(this)->ctx->set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  // `cucpu check`: what a copy or set node wrote, as soon as it has run.
  static void node_wrote(const ExecNode& n) {
    std::vector<MemAccess> ranges;
    if (n.kind == NodeKind::kMemcpy) check::copy_accesses(n.copy().copy, ranges);
    else ranges.push_back(check::memset_access(n.set().set));
    check::node_wrote(ranges);
  }
  std::shared_ptr<const ExecPlan> plan_;
  uint32_t seg_;
};

}  // namespace

CUresult GraphExec::launch(Stream* s) {
  std::lock_guard<std::mutex> g(mu_);
  const std::shared_ptr<const ExecPlan>& plan = plan_;
  const size_t count = plan->segment_count();
  // Each segment enters at one op or more (a parallel kernel's parts) and
  // leaves at one (the op itself, or the kernel's join): segment k's entry
  // ops are ops[first[k] .. first[k + 1] - 1], its exit ops[exit[k]].
  std::vector<Op*> ops;
  std::vector<uint32_t> first(count + 1), exit(count);
  ops.reserve(count);
  for (size_t k = 0; k < count; ++k) {
    first[k] = static_cast<uint32_t>(ops.size());
    const ExecNode& node = plan->nodes[plan->segment_nodes(k).front()];
    bool event = node.kind == NodeKind::kEventRecord || node.kind == NodeKind::kEventWait;
    if (node.kind == NodeKind::kKernel && node.parallel && node.disabled) {  // its segment is the node alone
      exit[k] = static_cast<uint32_t>(ops.size());
      ops.push_back(new MarkerOp());
      continue;
    }
    if (node.kind == NodeKind::kKernel && node.cooperative) {
      exit[k] = static_cast<uint32_t>(ops.size());
      ops.push_back(make_cooperative_op(node.kernel().fn, kernel_config(node)));
      continue;
    }
    if (node.kind == NodeKind::kKernel && node.parallel) {
      KernelGroup kg = make_kernel_group(node.kernel().fn, kernel_config(node), plan);
      for (Op* p : kg.parts) {
        p->add_successor(kg.join);
        ops.push_back(p);
      }
      exit[k] = static_cast<uint32_t>(ops.size());
      ops.push_back(kg.join);
      continue;
    }
    exit[k] = static_cast<uint32_t>(ops.size());
    if (node.kind == NodeKind::kBatchMemOp) ops.push_back(new MemOpsOp(node.memops()));
    else if (event) ops.push_back(new MarkerOp(/*timed=*/true));
    else ops.push_back(new SegmentOp(plan, static_cast<uint32_t>(k)));
  }
  first[count] = static_cast<uint32_t>(ops.size());
  const bool grouped = ops.size() != count;  // some segment has more than one op
  std::vector<bool> roots, sinks;
  if (grouped) {
    roots.assign(ops.size(), false);
    sinks.assign(ops.size(), false);
  }
  for (size_t k = 0; k < count; ++k) {
    Op* out = ops[exit[k]];
    for (uint32_t d : plan->segment_deps(k))
      for (uint32_t i = first[d]; i < first[d + 1]; ++i)
        if (i != exit[d] || first[d + 1] - first[d] == 1) out->add_successor(ops[i]);
    if (grouped) {
      if (plan->seg_roots[k])
        for (uint32_t i = first[k]; i < first[k + 1]; ++i)
          if (i != exit[k] || first[k + 1] - first[k] == 1) roots[i] = true;
      sinks[exit[k]] = plan->seg_sinks[k];
    }
    const ExecNode& node = plan->nodes[plan->segment_nodes(k).front()];
    if (Event* ev = rt().events.live(node.event())) {
      if (node.kind == NodeKind::kEventWait) {
        OpRef dep = ev->snapshot();
        if (dep) dep->add_successor(ops[exit[k]]);
      } else if (node.kind == NodeKind::kEventRecord) {
        ev->set_snapshot(OpRef::share(ops[exit[k]]));
      }
    }
  }
  Op* join = new MarkerOp();
  OpRef prev_launch = std::move(last_launch_);
  last_launch_ = OpRef::share(join);
  const bool checking = check::on();
  if (checking) [[unlikely]] {
    if (check_order_plan_ != plan) {
      check_order_ = node_order(*plan);
      check_order_plan_ = plan;
    }
    std::vector<std::pair<const Op*, uint32_t>> node_ops;  // ops that are one node each (not segments)
    if (check_order_)
      for (size_t k = 0; k < count; ++k) {
        const ExecNode& node = plan->nodes[plan->segment_nodes(k).front()];
        if (node.kind == NodeKind::kBatchMemOp || (node.kind == NodeKind::kKernel && (node.parallel || node.cooperative)))
          node_ops.emplace_back(ops[exit[k]], plan->segment_nodes(k).front() + 1);
      }
    check::graph_parts(join, check_order_, node_ops);
    check::graph_launch_begins(this, s);
    for (const ExecNode& n : plan->nodes)
      if (n.kind == NodeKind::kEventWait)
        if (Event* ev = rt().events.live(n.event())) check::stream_waits_event(s, ev);
  }
  s->enqueue_group(ops.data(), ops.size(), join, prev_launch.get(), grouped ? &roots : &plan->seg_roots,
                   grouped ? &sinks : &plan->seg_sinks);
  if (checking) [[unlikely]] {
    check::graph_launch_enqueued(this, s);
    for (const ExecNode& n : plan->nodes)
      if (n.kind == NodeKind::kEventRecord)
        if (Event* ev = rt().events.live(n.event())) check::event_recorded(ev, s);
  }
  return CUDA_SUCCESS;
}

CUresult GraphExec::set_params(const Node* n, const NodeParams& p) {
  std::lock_guard<std::mutex> g(mu_);
  auto next = std::make_shared<ExecPlan>(*plan_);  // launches in flight keep the old plan
  for (ExecNode& e : next->nodes) {
    if (e.origin != n) continue;
    if (e.kind != p.kind()) return CUDA_ERROR_INVALID_VALUE;
    ExecNode fresh;
    if (CUresult r = resolve(p, &fresh)) return r;
    // A kernel node's function may change, but not its context.
    if (p.kind() == NodeKind::kKernel && fresh.kernel().fn->module->ctx != e.kernel().fn->module->ctx)
      return CUDA_ERROR_INVALID_VALUE;
    fresh.origin = e.origin;
    fresh.dependents = std::move(e.dependents);
    const bool resegment = fresh.parallel != e.parallel;  // a kernel node joins or leaves a chain
    e = std::move(fresh);
    if (resegment) next->segment();
    plan_ = std::move(next);
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

namespace {
// Pairs each node of `old` that is no child graph with the node of `fresh`
// at its position, child graphs recursively; false when the two differ in
// node count, kinds or edges.
bool pair_nodes(const Graph& old, const Graph& fresh, std::vector<std::pair<const Node*, const Node*>>* out) {
  const auto& a = old.nodes();
  const auto& b = fresh.nodes();
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i]->params.kind() != b[i]->params.kind() || a[i]->deps.size() != b[i]->deps.size()) return false;
    for (size_t k = 0; k < a[i]->deps.size(); ++k)
      if (a[i]->deps[k]->position != b[i]->deps[k]->position) return false;
    if (a[i]->params.kind() != NodeKind::kChildGraph) {
      out->emplace_back(a[i], b[i]);
    } else if (!pair_nodes(*a[i]->params.child(), *b[i]->params.child(), out)) {
      return false;
    }
  }
  return true;
}
}  // namespace

CUresult GraphExec::set_child_params(const Node* n, const Graph& fresh) {
  if (n->params.kind() != NodeKind::kChildGraph || !n->params.child()) return CUDA_ERROR_INVALID_VALUE;
  std::vector<std::pair<const Node*, const Node*>> pairs;
  if (!pair_nodes(*n->params.child(), fresh, &pairs)) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> g(mu_);
  auto next = std::make_shared<ExecPlan>(*plan_);  // launches in flight keep the old plan
  std::unordered_map<const Node*, uint32_t> made_from;
  for (uint32_t i = 0; i < next->nodes.size(); ++i) made_from.emplace(next->nodes[i].origin, i);
  bool resegment = false;
  for (const auto& [old, nw] : pairs) {
    auto it = made_from.find(old);
    if (it == made_from.end()) return CUDA_ERROR_INVALID_VALUE;  // n is no node of the graph instantiated
    ExecNode& e = next->nodes[it->second];
    ExecNode replaced;
    if (CUresult r = resolve(nw->params, &replaced)) return r;
    if (e.kind == NodeKind::kKernel && replaced.kernel().fn->module->ctx != e.kernel().fn->module->ctx)
      return CUDA_ERROR_INVALID_VALUE;
    replaced.origin = e.origin;
    replaced.dependents = std::move(e.dependents);
    resegment = resegment || replaced.parallel != e.parallel;
    e = std::move(replaced);
  }
  if (pairs.empty() && made_from.find(n) == made_from.end()) return CUDA_ERROR_INVALID_VALUE;  // an empty child
  if (resegment) next->segment();
  plan_ = std::move(next);
  return CUDA_SUCCESS;
}

namespace {
bool can_be_disabled(NodeKind k) { return k == NodeKind::kKernel || k == NodeKind::kMemcpy || k == NodeKind::kMemset; }
}  // namespace

CUresult GraphExec::set_enabled(const Node* n, bool enabled) {
  std::lock_guard<std::mutex> g(mu_);
  auto next = std::make_shared<ExecPlan>(*plan_);  // launches in flight keep the old plan
  for (ExecNode& e : next->nodes) {
    if (e.origin != n) continue;
    if (!can_be_disabled(e.kind)) return CUDA_ERROR_INVALID_VALUE;
    e.disabled = !enabled;
    plan_ = std::move(next);
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult GraphExec::get_enabled(const Node* n, bool* enabled) const {
  std::lock_guard<std::mutex> g(mu_);
  for (const ExecNode& e : plan_->nodes) {
    if (e.origin != n) continue;
    if (!can_be_disabled(e.kind)) return CUDA_ERROR_INVALID_VALUE;
    *enabled = !e.disabled;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult GraphExec::update_from(const Graph& g, const Node** err_node, CUgraphExecUpdateResult* result) {
  auto fresh = std::make_shared<ExecPlan>();
  CUresult r = add_graph(g, *fresh, nullptr, nullptr, err_node);
  std::lock_guard<std::mutex> lock(mu_);
  if (r != CUDA_SUCCESS) {
    *result = CU_GRAPH_EXEC_UPDATE_ERROR;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  const auto& old = plan_->nodes;
  if (fresh->nodes.size() != old.size()) {
    *result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  for (size_t i = 0; i < old.size(); ++i) {
    if (fresh->nodes[i].dependents != old[i].dependents) {
      *err_node = fresh->nodes[i].origin;
      *result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    if (fresh->nodes[i].kind != old[i].kind) {
      *err_node = fresh->nodes[i].origin;
      *result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    // A kernel node may change its function, but not the function's context.
    if (old[i].kind == NodeKind::kKernel && fresh->nodes[i].kernel().fn->module->ctx != old[i].kernel().fn->module->ctx) {
      *err_node = fresh->nodes[i].origin;
      *result = CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED;
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
  }
  // Same topology: keep the exec's node identities (setters name the nodes
  // of the graph it was instantiated from). The segments come out as
  // before, unless a kernel node now runs in parallel or no longer does.
  for (size_t i = 0; i < old.size(); ++i) fresh->nodes[i].origin = old[i].origin;
  fresh->user_objects = plan_->user_objects;  // the exec keeps what it took at instantiation
  fresh->segment();
  plan_ = std::move(fresh);
  *result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace cucpu
