#include "exec/graph_exec.h"

#include <algorithm>
#include <cstdint>

#include "copy/copy_plan.h"
#include "core/event.h"
#include "core/runtime.h"
#include "core/stream.h"
#include "exec/ops.h"

namespace cucpu {

CUresult validate_node_params(const NodeParams& p) {
  ExecNode scratch;
  return GraphExec::resolve_for_validation(p, &scratch);
}

CUresult GraphExec::resolve(const NodeParams& p, ExecNode* e) {
  e->kind = p.kind;
  switch (p.kind) {
    case NodeKind::kHost:
      if (!p.host.fn) return CUDA_ERROR_INVALID_VALUE;
      e->host = p.host;
      return CUDA_SUCCESS;
    case NodeKind::kMemcpy:
      return resolve_copy3d(p.copy, &e->copy, e->checks);
    case NodeKind::kMemset: {
      const CUDA_MEMSET_NODE_PARAMS& m = p.memset;
      unsigned es = m.elementSize;
      if (es != 1 && es != 2 && es != 4) return CUDA_ERROR_INVALID_VALUE;
      if (m.width == 0 || m.height == 0 || m.dst % es) return CUDA_ERROR_INVALID_VALUE;
      size_t pitch = m.height == 1 ? m.width * es : m.pitch;
      if (m.height > 1 && pitch < m.width * es) return CUDA_ERROR_INVALID_VALUE;
      if (CUresult r = check_device_range(m.dst, (m.height - 1) * pitch + m.width * es, &e->set_check)) return r;
      e->set = {reinterpret_cast<unsigned char*>(m.dst), pitch, es, m.value, m.width, m.height};
      return CUDA_SUCCESS;
    }
    case NodeKind::kEventRecord:
    case NodeKind::kEventWait:
      if (!rt().events.live(p.event)) return CUDA_ERROR_INVALID_VALUE;
      e->event = p.event;
      return CUDA_SUCCESS;
    default:
      return CUDA_SUCCESS;
  }
}

CUresult GraphExec::add_graph(const Graph& g, std::vector<uint32_t>* entries, std::vector<uint32_t>* exits,
                              const Node** err_node) {
  // Each node maps to the exec nodes where it starts and where it ends: one
  // index for a plain node; a child graph starts at its roots and ends at
  // its sinks. Lookups by node go through a sorted index (no per-node
  // allocation, no scratch state in the graph: it may be instantiated from
  // several threads at once).
  const auto& nodes = g.nodes();
  const size_t count = nodes.size();
  std::vector<std::pair<const Node*, uint32_t>> index(count);
  for (size_t i = 0; i < count; ++i) index[i] = {nodes[i], static_cast<uint32_t>(i)};
  std::sort(index.begin(), index.end());
  auto position = [&](const Node* n) {
    return std::lower_bound(index.begin(), index.end(), std::make_pair(n, uint32_t{0}))->second;
  };
  std::vector<uint32_t> single(count, UINT32_MAX);
  std::vector<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> child_span;
  std::vector<uint32_t> child_of(count, UINT32_MAX);
  nodes_.reserve(nodes_.size() + count);
  for (size_t i = 0; i < count; ++i) {
    const Node* n = nodes[i];
    if (n->params.kind == NodeKind::kChildGraph) {
      std::vector<uint32_t> in, out;
      if (CUresult r = add_graph(*n->params.child, &in, &out, err_node)) return r;
      if (!in.empty()) {
        child_of[i] = static_cast<uint32_t>(child_span.size());
        child_span.emplace_back(std::move(in), std::move(out));
        continue;
      }
    }
    ExecNode e;
    e.origin = n;
    if (CUresult r = resolve(n->params, &e)) {
      *err_node = n;
      return r;
    }
    if (n->params.kind == NodeKind::kChildGraph) e.kind = NodeKind::kEmpty;  // an empty child graph
    single[i] = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(std::move(e));
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
      size_t j = position(d);
      each(ends(j), single[j], [&](uint32_t from) {
        each(starts(i), single[i], [&](uint32_t to) { nodes_[from].dependents.push_back(to); });
      });
    }
  for (size_t i = 0; i < count; ++i) {
    if (nodes[i]->deps.empty()) each(starts(i), single[i], [&](uint32_t v) { entries->push_back(v); });
    if (nodes[i]->dependents.empty()) each(ends(i), single[i], [&](uint32_t v) { exits->push_back(v); });
  }
  return CUDA_SUCCESS;
}

CUresult GraphExec::build(const Graph& g, const Node** err_node) {
  std::vector<uint32_t> entries, exits;
  if (CUresult r = add_graph(g, &entries, &exits, err_node)) return r;
  roots_.assign(nodes_.size(), true);
  sinks_.assign(nodes_.size(), true);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i].dependents.empty()) sinks_[i] = false;
    for (uint32_t d : nodes_[i].dependents) roots_[d] = false;
  }
  return CUDA_SUCCESS;
}

CUresult GraphExec::launch(Stream* s) {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<Op*> ops(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const ExecNode& e = nodes_[i];
    switch (e.kind) {
      case NodeKind::kHost: ops[i] = new HostFuncOp(e.host.fn, e.host.userData); break;
      case NodeKind::kMemcpy: {
        CopyTask t;
        t.copy = e.copy;
        t.checks[0] = e.checks[0];
        t.checks[1] = e.checks[1];
        ops[i] = new_copy_op(std::move(t));
        break;
      }
      case NodeKind::kMemset: ops[i] = new MemsetOp(e.set, e.set_check); break;
      default: ops[i] = new MarkerOp(); break;
    }
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (uint32_t d : nodes_[i].dependents) ops[i]->add_successor(ops[d]);
    const ExecNode& e = nodes_[i];
    if (Event* ev = rt().events.live(e.event)) {
      if (e.kind == NodeKind::kEventWait) {
        OpRef dep = ev->snapshot();
        if (dep) dep->add_successor(ops[i]);
      } else {
        ev->set_snapshot(OpRef::share(ops[i]));
      }
    }
  }
  Op* join = new MarkerOp();
  OpRef prev_launch = std::move(last_launch_);
  last_launch_ = OpRef::share(join);
  s->enqueue_group(ops.data(), ops.size(), join, prev_launch.get(), &roots_, &sinks_);
  return CUDA_SUCCESS;
}

CUresult GraphExec::set_params(const Node* n, const NodeParams& p) {
  std::lock_guard<std::mutex> g(mu_);
  for (ExecNode& e : nodes_) {
    if (e.origin != n) continue;
    if (e.kind != p.kind) return CUDA_ERROR_INVALID_VALUE;
    ExecNode fresh;
    if (CUresult r = resolve(p, &fresh)) return r;
    fresh.origin = e.origin;
    fresh.dependents = std::move(e.dependents);
    e = std::move(fresh);
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult GraphExec::update_from(const Graph& g, const Node** err_node, CUgraphExecUpdateResult* result) {
  GraphExec fresh(ctx, flags);
  CUresult r = fresh.build(g, err_node);
  std::lock_guard<std::mutex> lock(mu_);
  if (r != CUDA_SUCCESS) {
    *result = CU_GRAPH_EXEC_UPDATE_ERROR;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  if (fresh.nodes_.size() != nodes_.size()) {
    *result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (fresh.nodes_[i].dependents != nodes_[i].dependents) {
      *err_node = fresh.nodes_[i].origin;
      *result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    if (fresh.nodes_[i].kind != nodes_[i].kind) {
      *err_node = fresh.nodes_[i].origin;
      *result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node* keep = nodes_[i].origin;
    nodes_[i] = std::move(fresh.nodes_[i]);
    nodes_[i].origin = keep;
  }  // same topology: roots_ and sinks_ stay valid
  *result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace cucpu
