// Call families: stream capture, graphs, nodes, executable graphs.
#include "harness.h"

namespace fz {

namespace {

bool ok(CUresult r) { return r == CUDA_SUCCESS; }

int graph_ctx(int gi) {
  std::lock_guard<std::mutex> lk(g_pool.mu);
  return gi >= 0 ? g_pool.of(T::kGraph)[gi].ctx : -1;
}

// A node, mostly one of graph `gi` when it has live ones.
CUgraphNode pick_node_of(Reader& r, int gi) {
  if (gi >= 0 && !r.one_in(4)) {
    uint8_t k = r.u8();
    std::lock_guard<std::mutex> lk(g_pool.mu);
    std::vector<void*> c;
    for (const Obj& o : g_pool.of(T::kNode))
      if (o.parent == gi && o.st == St::kLive && !o.aliased) c.push_back(o.h);
    if (!c.empty()) return static_cast<CUgraphNode>(c[k % c.size()]);
  }
  return static_cast<CUgraphNode>(g_pool.pick(r, T::kNode));
}

std::vector<CUgraphNode> pick_deps(Reader& r, int gi, size_t n) {
  std::vector<CUgraphNode> d(n);
  for (auto& x : d) x = pick_node_of(r, gi);
  return d;
}

std::vector<CUgraphEdgeData> gen_edges(Reader& r, size_t n) {
  std::vector<CUgraphEdgeData> e(n);
  for (auto& x : e) {
    std::memset(&x, 0, sizeof x);
    if (r.one_in(4)) {
      x.from_port = r.u8() % 4;
      x.to_port = r.u8() % 2;
      x.type = r.u8() % 4;
      if (r.one_in(8)) x.reserved[0] = r.u8();
    }
  }
  return e;
}

void learn_nodes(const CUgraphNode* nodes, size_t n, int gi, bool capture_owned) {
  for (size_t i = 0; i < n; ++i)
    if (nodes[i]) g_pool.learn(T::kNode, nodes[i], gi, capture_owned);
}

// A graph for a new node: mostly a live one of this thread.
CUgraph pick_graph(Reader& r, int* gi) {
  *gi = r.one_in(8) ? -1 : g_pool.pick_live(r, T::kGraph, false);
  if (*gi >= 0) return static_cast<CUgraph>(g_pool.h(T::kGraph, *gi));
  return static_cast<CUgraph>(g_pool.pick(r, T::kGraph, gi));
}

void gen_memset_params(Reader& r, CUDA_MEMSET_NODE_PARAMS* p) {
  MemRef m = pick_mem(r, Use::kValidated);
  p->dst = m.p;
  p->elementSize = static_cast<unsigned>(r.enum_of({1, 2, 4, 0, 3, 8}));
  p->width = r.one_in(4) ? r.size() : 1 + r.u16() % 1024;
  p->height = r.one_in(4) ? r.size() : 1 + r.u8() % 4;
  p->pitch = r.one_in(3) ? r.size() : p->width * p->elementSize + r.u8() % 64;
  p->value = r.u32();
  if (avoid("memset_wrap") &&
      (u128{p->width} * 8 >> 64 || (u128{p->height ? p->height - 1 : 0} * p->pitch + u128{p->width} * 8) >> 64)) {
    p->width %= 1024;
    p->height %= 8;
    p->pitch %= 8192;
  }
}

void gen_batch_params(Reader& r, CUDA_BATCH_MEM_OP_NODE_PARAMS* p, std::vector<CUstreamBatchMemOpParams>* ops) {
  unsigned n = r.count(8);
  ops->resize(n);
  for (auto& op : *ops) gen_memop(r, &op);
  p->ctx = r.one_in(2) ? nullptr : static_cast<CUcontext>(g_pool.pick(r, T::kCtx));
  p->count = n;
  p->paramArray = n ? ops->data() : nullptr;
  p->flags = r.one_in(8) ? r.u32() : 0u;
  if (r.one_in(16)) {  // a count the array does not have: only with no array
    p->paramArray = nullptr;
    p->count = r.one_in(2) ? 256 : r.u8();
  } else if (r.one_in(16)) {
    p->count = 256 + r.u8();  // refused before the array is read
  }
}

// Generic node parameters. `graph_ok`: child graph nodes may be made (add only).
// `moved` receives the graph index moved into a node (ownership MOVE), or -1.
struct NodeGen {
  CUgraphNodeParams p;
  std::vector<CUstreamBatchMemOpParams> ops;
  int rec = -1;
  int moved = -1;
};

void gen_node_params(Reader& r, NodeGen* g, int parent_gi) {
  std::memset(&g->p, 0, sizeof g->p);
  int type = r.enum_of({CU_GRAPH_NODE_TYPE_EMPTY, CU_GRAPH_NODE_TYPE_HOST, CU_GRAPH_NODE_TYPE_MEMCPY,
                        CU_GRAPH_NODE_TYPE_MEMSET, CU_GRAPH_NODE_TYPE_EVENT_RECORD, CU_GRAPH_NODE_TYPE_WAIT_EVENT,
                        CU_GRAPH_NODE_TYPE_GRAPH, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, CU_GRAPH_NODE_TYPE_KERNEL,
                        CU_GRAPH_NODE_TYPE_MEM_ALLOC, CU_GRAPH_NODE_TYPE_MEM_FREE, CU_GRAPH_NODE_TYPE_CONDITIONAL,
                        CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL});
  set_enum(&g->p.type, type);
  if (r.one_in(16)) g->p.reserved0[r.below(3)] = static_cast<int>(r.u32());
  switch (type) {
    case CU_GRAPH_NODE_TYPE_HOST:
      g->rec = hostrec_new();
      g->p.host.fn = r.one_in(16) ? nullptr : hostfn;
      g->p.host.userData = hostrec_data(g->rec);
      hostrec_in_graph(g->rec);
      break;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      gen_memcpy3d(r, &g->p.memcpy.copyParams);
      g->p.memcpy.flags = r.one_in(8) ? static_cast<int>(r.u32()) : 0;
      g->p.memcpy.reserved = r.one_in(8) ? static_cast<int>(r.u32()) : 0;
      g->p.memcpy.copyCtx = r.one_in(2) ? nullptr : static_cast<CUcontext>(g_pool.pick(r, T::kCtx));
      break;
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      CUDA_MEMSET_NODE_PARAMS m;
      gen_memset_params(r, &m);
      g->p.memset = {m.dst, m.pitch, m.value, m.elementSize, m.width, m.height,
                     r.one_in(2) ? nullptr : static_cast<CUcontext>(g_pool.pick(r, T::kCtx))};
      break;
    }
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      g->p.eventRecord.event = static_cast<CUevent>(g_pool.pick(r, T::kEvent));
      break;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      g->p.eventWait.event = static_cast<CUevent>(g_pool.pick(r, T::kEvent));
      break;
    case CU_GRAPH_NODE_TYPE_GRAPH: {
      int ci = -1;
      CUgraph c = static_cast<CUgraph>(g_pool.pick(r, T::kGraph, &ci));
      int own = r.enum_of({CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE, CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE});
      if (own == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE) {
        // Only a graph the user owns outright may be moved into a node (a
        // graph into one of its own nodes included: the library must refuse).
        std::lock_guard<std::mutex> lk(g_pool.mu);
        bool movable = ci >= 0 && g_pool.of(T::kGraph)[ci].st == St::kLive && g_pool.of(T::kGraph)[ci].parent < 0 &&
                       !g_pool.of(T::kGraph)[ci].capture_owned;
        if (movable && ci == parent_gi && avoid("graph_move_self")) movable = false;
        if (movable) g->moved = ci;
        else own = CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE;
      }
      g->p.graph.graph = c;
      set_enum(&g->p.graph.ownership, own);
      break;
    }
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
      CUDA_BATCH_MEM_OP_NODE_PARAMS b;
      gen_batch_params(r, &b, &g->ops);
      g->p.memOp = {b.ctx, b.count, b.paramArray, b.flags};
      break;
    }
    case CU_GRAPH_NODE_TYPE_KERNEL:
      g->p.kernel.func = r.one_in(2) ? nullptr : static_cast<CUfunction>(forged(r, nullptr));
      g->p.kernel.kern = r.one_in(2) ? nullptr : static_cast<CUkernel>(forged(r, nullptr));
      g->p.kernel.gridDimX = r.u8();
      g->p.kernel.blockDimX = r.u8();
      break;
    default:
      break;  // EMPTY, or types cucpu does not run (zeros)
  }
}

void trace_node_params(const CUgraphNodeParams& p) {
  if (!tracing()) return;
  const int type = raw(p.type);
  if (type == CU_GRAPH_NODE_TYPE_GRAPH)
    trace_line("  node params: type GRAPH graph %p ownership %d", static_cast<void*>(p.graph.graph), raw(p.graph.ownership));
  else if (type == CU_GRAPH_NODE_TYPE_MEMCPY)
    trace_memcpy3d(p.memcpy.copyParams);
  else if (type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP)
    trace_memop(p.memOp.paramArray, p.memOp.count < 64 ? p.memOp.count : 0);
  else
    trace_line("  node params: type %d", type);
}

void node_added(CUresult res, CUgraphNode n, int gi, const NodeGen* g) {
  if (!ok(res)) return;
  int ni = g_pool.add(T::kNode, n, graph_ctx(gi), gi);
  if (g && g->moved >= 0) {
    std::lock_guard<std::mutex> lk(g_pool.mu);
    g_pool.of(T::kGraph)[g->moved].parent = ni;  // the node owns it now
  }
}

// A graph a capture returned: the harness owns it now.
void captured_graph(CUgraph g, int ctx) {
  if (!g) return;
  {
    std::lock_guard<std::mutex> lk(g_pool.mu);
    int i = g_pool.find(T::kGraph, g);
    if (i >= 0 && g_pool.of(T::kGraph)[i].capture_owned) {
      Obj& o = g_pool.of(T::kGraph)[i];
      o.capture_owned = false;
      o.st = St::kLive;
      for (Obj& n : g_pool.of(T::kNode))
        if (n.parent == i) n.capture_owned = false;
      return;
    }
    // A capture begun with cuStreamBeginCaptureToGraph ends with the
    // caller's own graph, which is in the pool already.
    if (i >= 0 && g_pool.of(T::kGraph)[i].st == St::kLive) return;
  }
  g_pool.add(T::kGraph, g, ctx);
}

// Capture graphs whose capture may have ended: maybe destroyed.
void captures_changed() {
  std::lock_guard<std::mutex> lk(g_pool.mu);
  for (size_t i = 0; i < g_pool.of(T::kGraph).size(); ++i) {
    Obj& o = g_pool.of(T::kGraph)[i];
    if (o.capture_owned && o.st == St::kLive) {
      o.st = St::kOrphan;
      for (Obj& n : g_pool.of(T::kNode))
        if (n.parent == static_cast<int>(i) && n.st == St::kLive) n.st = St::kOrphan;
    }
  }
  for (Obj& n : g_pool.of(T::kNode))
    if (n.capture_owned && n.parent < 0 && n.st == St::kLive) n.st = St::kOrphan;
}

}  // namespace

// ---------------------------------------------------------------- capture

void fam_capture(Reader& r) {
  const bool pt = r.one_in(2);
  int si = -1;
  CUstream s = g_pool.pick_stream(r, &si);
  const int mode_raw = r.enum_range(CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_RELAXED);
#define mode as_enum<CUstreamCaptureMode>(mode_raw)
  switch (r.below(9)) {
    case 0: pt ? API(cuStreamBeginCapture_ptsz, s) : API(cuStreamBeginCapture, s); break;
    case 1: case 2: pt ? API(cuStreamBeginCapture_v2_ptsz, s, mode) : API(cuStreamBeginCapture_v2, s, mode); break;
    case 3: {
      int gi;
      CUgraph g = pick_graph(r, &gi);
      size_t n = r.count(3);
      auto deps = pick_deps(r, gi, n);
      auto edges = gen_edges(r, n);
      const CUgraphNode* dp = n ? deps.data() : nullptr;
      const CUgraphEdgeData* ep = n && r.one_in(2) ? edges.data() : nullptr;
      if (r.one_in(16)) dp = nullptr;
      pt ? API(cuStreamBeginCaptureToGraph_ptsz, s, g, dp, ep, n, mode)
         : API(cuStreamBeginCaptureToGraph, s, g, dp, ep, n, mode);
      break;
    }
    case 4: case 5: {
      CUgraph g = nullptr;
      CUresult res = pt ? API(cuStreamEndCapture_ptsz, s, maybe(r, &g)) : API(cuStreamEndCapture, s, maybe(r, &g));
      if (ok(res)) captured_graph(g, ctx_of_stream(si));
      captures_changed();
      break;
    }
    case 6: {
      CUstreamCaptureStatus st;
      pt ? API(cuStreamIsCapturing_ptsz, s, maybe(r, &st)) : API(cuStreamIsCapturing, s, maybe(r, &st));
      break;
    }
    case 7: {
      CUstreamCaptureMode m;
      set_enum(&m, mode_raw);
      API(cuThreadExchangeStreamCaptureMode, maybe(r, &m));
      break;
    }
    default: {
      size_t n = r.count(3);
      auto deps = pick_deps(r, -1, n);
      auto edges = gen_edges(r, n);
      CUgraphNode* dp = n && !r.one_in(16) ? deps.data() : nullptr;
      unsigned flags = static_cast<unsigned>(r.enum_of({CU_STREAM_ADD_CAPTURE_DEPENDENCIES, CU_STREAM_SET_CAPTURE_DEPENDENCIES}));
      if (r.one_in(2)) {
        pt ? API(cuStreamUpdateCaptureDependencies_ptsz, s, dp, n, flags)
           : API(cuStreamUpdateCaptureDependencies, s, dp, n, flags);
      } else {
        const CUgraphEdgeData* ep = n && r.one_in(2) ? edges.data() : nullptr;
        pt ? API(cuStreamUpdateCaptureDependencies_v2_ptsz, s, dp, ep, n, flags)
           : API(cuStreamUpdateCaptureDependencies_v2, s, dp, ep, n, flags);
      }
      break;
    }
  }
}

#undef mode

void fam_capture_info(Reader& r) {
  const bool pt = r.one_in(2);
  CUstream s = g_pool.pick_stream(r);
  CUstreamCaptureStatus st;
  cuuint64_t id;
  CUgraph g = nullptr;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  size_t n = 0;
  CUresult res;
  switch (r.below(3)) {
    case 0:
      pt ? API(cuStreamGetCaptureInfo_ptsz, s, maybe(r, &st), maybe(r, &id)) : API(cuStreamGetCaptureInfo, s, maybe(r, &st), maybe(r, &id));
      return;
    case 1:
      res = pt ? API(cuStreamGetCaptureInfo_v2_ptsz, s, maybe(r, &st), maybe(r, &id), maybe(r, &g, 4), maybe(r, &deps, 4),
                     maybe(r, &n, 4))
               : API(cuStreamGetCaptureInfo_v2, s, maybe(r, &st), maybe(r, &id), maybe(r, &g, 4), maybe(r, &deps, 4),
                     maybe(r, &n, 4));
      break;
    default:
      res = pt ? API(cuStreamGetCaptureInfo_v3_ptsz, s, maybe(r, &st), maybe(r, &id), maybe(r, &g, 4), maybe(r, &deps, 4),
                     maybe(r, &edges, 4), maybe(r, &n, 4))
               : API(cuStreamGetCaptureInfo_v3, s, maybe(r, &st), maybe(r, &id), maybe(r, &g, 4), maybe(r, &deps, 4),
                     maybe(r, &edges, 4), maybe(r, &n, 4));
      break;
  }
  // With two threads the capture may be the other thread's (a shared
  // stream's), and a graph is not for two threads at once (CUDA's rule): its
  // graph is not learned then.
  if (!ok(res) || !g || g_pool.two_threads) return;
  int gi = g_pool.learn(T::kGraph, g, -1, true);
  {
    std::lock_guard<std::mutex> lk(g_pool.mu);
    if (gi >= 0 && g_pool.of(T::kGraph)[gi].thread < 0) g_pool.of(T::kGraph)[gi].capture_owned = true;
  }
  if (deps && n < 4096) learn_nodes(deps, n, gi, true);
}

// ------------------------------------------------------------ graph building

void fam_graph_build(Reader& r) {
  switch (r.below(7)) {
    case 0: case 1: {
      CUgraph g = nullptr;
      if (ok(API(cuGraphCreate, maybe(r, &g, 32), r.one_in(8) ? r.u32() : 0u)))
        g_pool.add(T::kGraph, g, g_pool.current_ctx_index());
      break;
    }
    case 2: {
      int i = g_pool.pick_live(r, T::kGraph, true);
      CUgraph g;
      if (i >= 0 && !r.one_in(8)) {
        g = static_cast<CUgraph>(g_pool.h(T::kGraph, i));
      } else {
        g = static_cast<CUgraph>(g_pool.pick(r, T::kGraph, &i));
        std::lock_guard<std::mutex> lk(g_pool.mu);
        if (i >= 0 && (g_pool.of(T::kGraph)[i].capture_owned || g_pool.of(T::kGraph)[i].parent >= 0)) return;
      }
      bool marked = g_pool.dying(T::kGraph, i);
      g_pool.destroyed(T::kGraph, i, ok(API(cuGraphDestroy, g)), marked);
      break;
    }
    case 3: {
      int gi;
      CUgraph g = pick_graph(r, &gi);
      CUgraph c = nullptr;
      if (ok(API(cuGraphClone, maybe(r, &c, 32), g))) g_pool.add(T::kGraph, c, graph_ctx(gi));
      break;
    }
    case 4: {
      int gi;
      CUgraph clone = pick_graph(r, &gi);
      CUgraphNode n = nullptr;
      if (ok(API(cuGraphNodeFindInClone, maybe(r, &n), pick_node_of(r, -1), clone)))
        g_pool.learn(T::kNode, n, gi, false);
      break;
    }
    case 5: {
      int i = g_pool.pick_live(r, T::kNode, true);
      CUgraphNode n;
      if (i >= 0 && !r.one_in(8)) {
        n = static_cast<CUgraphNode>(g_pool.h(T::kNode, i));
      } else {
        n = static_cast<CUgraphNode>(g_pool.pick(r, T::kNode, &i));
        std::lock_guard<std::mutex> lk(g_pool.mu);
        if (i >= 0) {
          const Obj& o = g_pool.of(T::kNode)[i];
          if (o.capture_owned || o.parent < 0 || g_pool.of(T::kGraph)[o.parent].capture_owned) return;
        }
      }
      bool marked = g_pool.dying(T::kNode, i);
      g_pool.destroyed(T::kNode, i, ok(API(cuGraphDestroyNode, n)), marked);
      break;
    }
    default: {
      int gi;
      CUgraph g = pick_graph(r, &gi);
      API(cuGraphDebugDotPrint, g, r.one_in(8) ? static_cast<const char*>(nullptr) : "/dev/null",
          r.one_in(2) ? 0u : r.u32());
      break;
    }
  }
}

void fam_graph_node(Reader& r) {
  int gi;
  CUgraph g = pick_graph(r, &gi);
  size_t n = r.count(4);
  auto deps = pick_deps(r, gi, n);
  const CUgraphNode* dp = n && !r.one_in(16) ? deps.data() : nullptr;
  CUgraphNode node = nullptr;
  CUgraphNode* out = maybe(r, &node, 32);
  switch (r.below(11)) {
    case 0: node_added(API(cuGraphAddEmptyNode, out, g, dp, n), node, gi, nullptr); break;
    case 1: case 2: {
      int rec = hostrec_new();
      hostrec_in_graph(rec);
      CUDA_HOST_NODE_PARAMS p{r.one_in(16) ? nullptr : hostfn, hostrec_data(rec)};
      node_added(API(cuGraphAddHostNode, out, g, dp, n, maybe(r, static_cast<const CUDA_HOST_NODE_PARAMS*>(&p), 32)), node, gi,
                 nullptr);
      break;
    }
    case 3: {
      CUDA_MEMCPY3D q;
      gen_memcpy3d(r, &q);
      trace_memcpy3d(q);
      CUcontext c = static_cast<CUcontext>(g_pool.pick(r, T::kCtx));
      node_added(API(cuGraphAddMemcpyNode, out, g, dp, n, maybe(r, static_cast<const CUDA_MEMCPY3D*>(&q), 32), c), node, gi,
                 nullptr);
      break;
    }
    case 4: {
      CUDA_MEMSET_NODE_PARAMS m;
      gen_memset_params(r, &m);
      CUcontext c = static_cast<CUcontext>(g_pool.pick(r, T::kCtx));
      node_added(API(cuGraphAddMemsetNode, out, g, dp, n, maybe(r, static_cast<const CUDA_MEMSET_NODE_PARAMS*>(&m), 32), c),
                 node, gi, nullptr);
      break;
    }
    case 5: {
      CUevent e = static_cast<CUevent>(g_pool.pick(r, T::kEvent));
      node_added(r.one_in(2) ? API(cuGraphAddEventRecordNode, out, g, dp, n, e) : API(cuGraphAddEventWaitNode, out, g, dp, n, e),
                 node, gi, nullptr);
      break;
    }
    case 6: {
      CUgraph child = static_cast<CUgraph>(g_pool.pick(r, T::kGraph));
      if (r.one_in(8)) child = g;
      node_added(API(cuGraphAddChildGraphNode, out, g, dp, n, child), node, gi, nullptr);
      break;
    }
    case 7: {
      CUDA_BATCH_MEM_OP_NODE_PARAMS b;
      std::vector<CUstreamBatchMemOpParams> ops;
      gen_batch_params(r, &b, &ops);
      node_added(API(cuGraphAddBatchMemOpNode, out, g, dp, n, maybe(r, static_cast<const CUDA_BATCH_MEM_OP_NODE_PARAMS*>(&b), 32)),
                 node, gi, nullptr);
      break;
    }
    default: {
      NodeGen ng;
      gen_node_params(r, &ng, gi);
      trace_node_params(ng.p);
      if (r.one_in(2)) {
        node_added(API(cuGraphAddNode, out, g, dp, n, maybe(r, &ng.p, 32)), node, gi, &ng);
      } else {
        auto edges = gen_edges(r, n);
        const CUgraphEdgeData* ep = n && r.one_in(2) ? edges.data() : nullptr;
        node_added(API(cuGraphAddNode_v2, out, g, dp, ep, n, maybe(r, &ng.p, 32)), node, gi, &ng);
      }
      break;
    }
  }
}

void fam_graph_query(Reader& r) {
  int gi;
  CUgraph g = pick_graph(r, &gi);
  const size_t cap = r.count(8);
  std::vector<CUgraphNode> a(cap), b(cap);
  std::vector<CUgraphEdgeData> e(cap);
  size_t count = cap;
  size_t* pc = r.one_in(16) ? nullptr : &count;
  CUgraphNode* pa = cap && !r.one_in(4) ? a.data() : nullptr;
  if (!pa) count = r.one_in(4) ? r.size() : cap;  // the count alone is asked for: any capacity
  switch (r.below(9)) {
    case 0:
      if (ok(API(cuGraphGetNodes, g, pa, pc)) && pa) learn_nodes(a.data(), std::min(cap, count), gi, false);
      break;
    case 1:
      if (ok(API(cuGraphGetRootNodes, g, pa, pc)) && pa) learn_nodes(a.data(), std::min(cap, count), gi, false);
      break;
    case 2: {
      CUgraphNode* pb = pa && !r.one_in(8) ? b.data() : nullptr;
      if (r.one_in(2)) API(cuGraphGetEdges, g, pa, pb, pc);
      else API(cuGraphGetEdges_v2, g, pa, pb, pa && r.one_in(2) ? e.data() : nullptr, pc);
      break;
    }
    case 3: case 4: {
      CUgraphNode n = pick_node_of(r, gi);
      CUgraphEdgeData* pe = pa && r.one_in(2) ? e.data() : nullptr;
      const bool deps = r.one_in(2);
      CUresult res;
      switch (r.below(4)) {
        case 0: res = deps ? API(cuGraphNodeGetDependencies, n, pa, pc) : API(cuGraphNodeGetDependentNodes, n, pa, pc); break;
        default:
          res = deps ? API(cuGraphNodeGetDependencies_v2, n, pa, pe, pc) : API(cuGraphNodeGetDependentNodes_v2, n, pa, pe, pc);
          break;
      }
      if (ok(res) && pa && pc) learn_nodes(a.data(), std::min(cap, count), -1, false);
      break;
    }
    case 5: {
      CUgraphNodeType t;
      API(cuGraphNodeGetType, pick_node_of(r, gi), maybe(r, &t));
      break;
    }
    case 6: {
      int ni = -1;
      CUgraphNode n = static_cast<CUgraphNode>(g_pool.pick(r, T::kNode, &ni));
      CUgraph c = nullptr;
      if (ok(API(cuGraphChildGraphNodeGetGraph, n, maybe(r, &c))) && c) {
        int ci = g_pool.learn(T::kGraph, c, ni, false);
        std::lock_guard<std::mutex> lk(g_pool.mu);
        if (ci >= 0 && g_pool.of(T::kGraph)[ci].parent < 0) g_pool.of(T::kGraph)[ci].parent = ni >= 0 ? ni : -2;
      }
      break;
    }
    default: {
      const size_t n = r.count(4);
      auto from = pick_deps(r, gi, n), to = pick_deps(r, gi, n);
      auto edges = gen_edges(r, n);
      const CUgraphNode* pf = n && !r.one_in(16) ? from.data() : nullptr;
      const CUgraphNode* pt = n && !r.one_in(16) ? to.data() : nullptr;
      const CUgraphEdgeData* pe = n && r.one_in(2) ? edges.data() : nullptr;
      const bool add = r.one_in(2);
      if (r.one_in(2)) {
        add ? API(cuGraphAddDependencies, g, pf, pt, n) : API(cuGraphRemoveDependencies, g, pf, pt, n);
      } else {
        add ? API(cuGraphAddDependencies_v2, g, pf, pt, pe, n) : API(cuGraphRemoveDependencies_v2, g, pf, pt, pe, n);
      }
      break;
    }
  }
}

void fam_graph_params(Reader& r) {
  int gi;
  pick_graph(r, &gi);
  CUgraphNode n = pick_node_of(r, gi);
  const bool get = r.one_in(2);
  switch (r.below(7)) {
    case 0: {
      CUDA_HOST_NODE_PARAMS p{};
      if (get) {
        API(cuGraphHostNodeGetParams, n, maybe(r, &p));
      } else {
        int rec = hostrec_new();
        hostrec_in_graph(rec);
        p = {r.one_in(16) ? nullptr : hostfn, hostrec_data(rec)};
        API(cuGraphHostNodeSetParams, n, maybe(r, static_cast<const CUDA_HOST_NODE_PARAMS*>(&p)));
      }
      break;
    }
    case 1: {
      CUDA_MEMCPY3D q;
      if (get) {
        API(cuGraphMemcpyNodeGetParams, n, maybe(r, &q));
      } else {
        gen_memcpy3d(r, &q);
        API(cuGraphMemcpyNodeSetParams, n, maybe(r, static_cast<const CUDA_MEMCPY3D*>(&q)));
      }
      break;
    }
    case 2: {
      CUDA_MEMSET_NODE_PARAMS m;
      if (get) {
        API(cuGraphMemsetNodeGetParams, n, maybe(r, &m));
      } else {
        gen_memset_params(r, &m);
        API(cuGraphMemsetNodeSetParams, n, maybe(r, static_cast<const CUDA_MEMSET_NODE_PARAMS*>(&m)));
      }
      break;
    }
    case 3: {
      CUevent e = static_cast<CUevent>(g_pool.pick(r, T::kEvent));
      get ? API(cuGraphEventRecordNodeGetEvent, n, maybe(r, &e)) : API(cuGraphEventRecordNodeSetEvent, n, e);
      break;
    }
    case 4: {
      CUevent e = static_cast<CUevent>(g_pool.pick(r, T::kEvent));
      get ? API(cuGraphEventWaitNodeGetEvent, n, maybe(r, &e)) : API(cuGraphEventWaitNodeSetEvent, n, e);
      break;
    }
    case 5: {
      CUDA_BATCH_MEM_OP_NODE_PARAMS b{};
      std::vector<CUstreamBatchMemOpParams> ops;
      if (get) {
        if (ok(API(cuGraphBatchMemOpNodeGetParams, n, maybe(r, &b))) && b.count < 256 && b.paramArray) {
          volatile uint8_t sink = 0;  // the array must be readable
          for (unsigned i = 0; i < b.count; ++i) sink = sink ^ reinterpret_cast<const uint8_t*>(&b.paramArray[i])[0];
          (void)sink;
        }
      } else {
        gen_batch_params(r, &b, &ops);
        API(cuGraphBatchMemOpNodeSetParams, n, maybe(r, static_cast<const CUDA_BATCH_MEM_OP_NODE_PARAMS*>(&b)));
      }
      break;
    }
    default: {
      NodeGen ng;
      gen_node_params(r, &ng, gi);
      ng.moved = -1;
      if (raw(ng.p.type) == CU_GRAPH_NODE_TYPE_GRAPH) set_enum(&ng.p.graph.ownership, CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE);
      API(cuGraphNodeSetParams, n, maybe(r, &ng.p));
      break;
    }
  }
}

// ------------------------------------------------------------ executable graphs

namespace {

void instantiated(CUresult res, CUgraphExec e, CUgraph g, int gi) {
  if (!ok(res) || !e) return;
  int ei = g_pool.add(T::kExec, e, graph_ctx(gi));
  snapshot_exec(ei, g);
}

CUgraphExec pick_exec(Reader& r, int* ei) {
  *ei = r.one_in(8) ? -1 : g_pool.pick_live(r, T::kExec, false);
  if (*ei >= 0) return static_cast<CUgraphExec>(g_pool.h(T::kExec, *ei));
  return static_cast<CUgraphExec>(g_pool.pick(r, T::kExec, ei));
}

// After an exec setter succeeded for a host node: its record changes.
void exec_host_set(int ei, CUgraphNode n, int rec) {
  if (ei < 0) return;
  std::lock_guard<std::mutex> lk(g_pool.mu);
  Obj& e = g_pool.of(T::kExec)[ei];
  if (!e.keys_valid) {
    e.unknown = true;
    return;
  }
  for (auto& [node, r] : e.hostfns)
    if (node == n) {
      r = rec;
      return;
    }
  e.unknown = true;
}

}  // namespace

void fam_graph_exec(Reader& r) {
  const bool pt = r.one_in(2);
  switch (r.below(10)) {
    case 0: case 1: {
      int gi;
      CUgraph g = pick_graph(r, &gi);
      CUgraphExec e = nullptr;
      CUgraphNode err;
      char log[64];
      size_t size = r.one_in(2) ? sizeof log : r.below(4);
      char* lp = maybe(r, log, 4);
      CUresult res = r.one_in(2) ? API(cuGraphInstantiate, maybe(r, &e, 32), g, maybe(r, &err, 4), lp, size)
                                 : API(cuGraphInstantiate_v2, maybe(r, &e, 32), g, maybe(r, &err, 4), lp, size);
      instantiated(res, e, g, gi);
      break;
    }
    case 2: {
      int gi;
      CUgraph g = pick_graph(r, &gi);
      CUgraphExec e = nullptr;
      unsigned long long flags = r.one_in(2) ? 0 : r.flags(0xf);
      instantiated(API(cuGraphInstantiateWithFlags, maybe(r, &e, 32), g, flags), e, g, gi);
      break;
    }
    case 3: {
      int gi;
      CUgraph g = pick_graph(r, &gi);
      CUgraphExec e = nullptr;
      CUDA_GRAPH_INSTANTIATE_PARAMS p{};
      p.flags = r.one_in(2) ? 0 : r.flags(0xf);
      p.hUploadStream = g_pool.pick_stream(r);
      instantiated(pt ? API(cuGraphInstantiateWithParams_ptsz, maybe(r, &e, 32), g, maybe(r, &p, 32))
                      : API(cuGraphInstantiateWithParams, maybe(r, &e, 32), g, maybe(r, &p, 32)),
                   e, g, gi);
      break;
    }
    case 4: {
      int ei = g_pool.pick_live(r, T::kExec, true);
      CUgraphExec e = ei >= 0 && !r.one_in(8) ? static_cast<CUgraphExec>(g_pool.h(T::kExec, ei))
                                               : static_cast<CUgraphExec>(g_pool.pick(r, T::kExec, &ei));
      bool marked = g_pool.dying(T::kExec, ei);
      g_pool.destroyed(T::kExec, ei, ok(API(cuGraphExecDestroy, e)), marked);
      break;
    }
    case 5: {
      int ei;
      CUgraphExec e = pick_exec(r, &ei);
      cuuint64_t f;
      API(cuGraphExecGetFlags, e, maybe(r, &f));
      break;
    }
    case 6: case 7: {
      int ei;
      CUgraphExec e = pick_exec(r, &ei);
      CUstream s = g_pool.pick_stream(r);
      // What the launch will run: the exec's host functions, once each.
      std::vector<int> recs;
      bool unknown = false;
      if (ei >= 0) {
        std::lock_guard<std::mutex> lk(g_pool.mu);
        const Obj& o = g_pool.of(T::kExec)[ei];
        if (o.st == St::kLive) {
          for (auto& [n, rec] : o.hostfns) recs.push_back(rec);
          unknown = o.unknown;
        } else {
          unknown = true;  // an orphan may still be launchable
        }
      } else {
        unknown = true;  // a dead or forged handle that may have been reused
      }
      if (unknown) hostrec_unknown_launch();
      for (int rec : recs) hostrec_expect(rec, 1, true);
      CUresult res = pt ? API(cuGraphLaunch_ptsz, e, s) : API(cuGraphLaunch, e, s);
      if (!ok(res))
        for (int rec : recs) hostrec_unexpect(rec, 1, true);
      break;
    }
    case 8: {
      int ei;
      CUgraphExec e = pick_exec(r, &ei);
      CUstream s = g_pool.pick_stream(r);
      pt ? API(cuGraphUpload_ptsz, e, s) : API(cuGraphUpload, e, s);
      break;
    }
    default: {
      int ei, gi;
      CUgraphExec e = pick_exec(r, &ei);
      CUgraph g = pick_graph(r, &gi);
      CUresult res;
      if (r.one_in(2)) {
        CUgraphExecUpdateResultInfo info;
        res = API(cuGraphExecUpdate_v2, e, g, maybe(r, &info));
      } else {
        CUgraphNode err;
        CUgraphExecUpdateResult ur;
        res = API(cuGraphExecUpdate, e, g, maybe(r, &err), maybe(r, &ur));
      }
      if (ok(res) && ei >= 0) {
        snapshot_exec(ei, g);
        std::lock_guard<std::mutex> lk(g_pool.mu);
        g_pool.of(T::kExec)[ei].keys_valid = false;  // setters still name the first graph's nodes
      }
      break;
    }
  }
}

void fam_graph_exec_set(Reader& r) {
  int ei, gi;
  CUgraphExec e = pick_exec(r, &ei);
  pick_graph(r, &gi);
  CUgraphNode n = pick_node_of(r, gi);
  switch (r.below(7)) {
    case 0: {
      int rec = hostrec_new();
      hostrec_in_graph(rec);
      CUDA_HOST_NODE_PARAMS p{r.one_in(16) ? nullptr : hostfn, hostrec_data(rec)};
      if (ok(API(cuGraphExecHostNodeSetParams, e, n, maybe(r, static_cast<const CUDA_HOST_NODE_PARAMS*>(&p)))))
        exec_host_set(ei, n, rec);
      break;
    }
    case 1: {
      CUDA_MEMCPY3D q;
      gen_memcpy3d(r, &q);
      API(cuGraphExecMemcpyNodeSetParams, e, n, maybe(r, static_cast<const CUDA_MEMCPY3D*>(&q)),
          static_cast<CUcontext>(g_pool.pick(r, T::kCtx)));
      break;
    }
    case 2: {
      CUDA_MEMSET_NODE_PARAMS m;
      gen_memset_params(r, &m);
      API(cuGraphExecMemsetNodeSetParams, e, n, maybe(r, static_cast<const CUDA_MEMSET_NODE_PARAMS*>(&m)),
          static_cast<CUcontext>(g_pool.pick(r, T::kCtx)));
      break;
    }
    case 3: {
      CUevent ev = static_cast<CUevent>(g_pool.pick(r, T::kEvent));
      r.one_in(2) ? API(cuGraphExecEventRecordNodeSetEvent, e, n, ev) : API(cuGraphExecEventWaitNodeSetEvent, e, n, ev);
      break;
    }
    case 4: {
      CUDA_BATCH_MEM_OP_NODE_PARAMS b;
      std::vector<CUstreamBatchMemOpParams> ops;
      gen_batch_params(r, &b, &ops);
      API(cuGraphExecBatchMemOpNodeSetParams, e, n, maybe(r, static_cast<const CUDA_BATCH_MEM_OP_NODE_PARAMS*>(&b)));
      break;
    }
    default: {
      NodeGen ng;
      gen_node_params(r, &ng, gi);
      if (raw(ng.p.type) == CU_GRAPH_NODE_TYPE_GRAPH) set_enum(&ng.p.graph.ownership, CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE);
      if (ok(API(cuGraphExecNodeSetParams, e, n, maybe(r, &ng.p))) && ng.rec >= 0) exec_host_set(ei, n, ng.rec);
      break;
    }
  }
}

}  // namespace fz
