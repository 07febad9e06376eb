// Call family: green contexts. One call is a whole life (resources, a
// split, a descriptor, a green context, streams and events in it, its
// converted context made current, destroy, then its stale handles) with any
// step's arguments perturbed, resources' bytes included. Streams are
// destroyed before the green context but rarely (a stream left behind
// answers CONTEXT_IS_DESTROYED for good: the driver's documented leak).
#include "harness.h"

#include <cstring>

namespace fz {

namespace {

// A resource the user might pass back: as written, or with bytes changed.
void perturb(Reader& r, CUdevResource& res) {
  if (!r.one_in(8)) return;
  auto* bytes = reinterpret_cast<unsigned char*>(&res);
  const unsigned n = 1 + r.below(4);
  for (unsigned i = 0; i < n; ++i) bytes[r.below(sizeof res > 255 ? 255 : sizeof res)] ^= static_cast<unsigned char>(1 + r.below(255));
}

CUstream special_or(Reader& r, CUstream s) {
  switch (r.below(8)) {
    case 0: return nullptr;
    case 1: return CU_STREAM_LEGACY;
    case 2: return CU_STREAM_PER_THREAD;
    default: return s;
  }
}

}  // namespace

void fam_green(Reader& r) {
  // A green context holds a reference to the primary context: made while
  // the harness holds none, its destroy would tear the primary context
  // down behind the harness's back (its allocations there freed).
  unsigned primary_flags = 0;
  int primary_active = 0;
  if (API(cuDevicePrimaryCtxGetState, 0, &primary_flags, &primary_active) != CUDA_SUCCESS || !primary_active) return;
  CUcontext entry_ctx = nullptr;
  API(cuCtxGetCurrent, &entry_ctx);
  CUdevResource dev{};
  API(cuDeviceGetDevResource, dev_ordinal(r), maybe(r, &dev), as_enum<CUdevResourceType>(r.enum_range(0, 2)));
  perturb(r, dev);
  CUdevResource groups[8], rest{};
  unsigned n = r.one_in(8) ? r.u32() % 9 : 8;
  API(cuDevSmResourceSplitByCount, r.one_in(8) ? nullptr : groups, maybe(r, &n), maybe(r, &dev), maybe(r, &rest, 4),
      r.one_in(4) ? r.u32() : r.below(3), r.one_in(4) ? r.u32() : r.below(3));
  if (n > 8) n = 8;
  CUdevResource chosen[3];
  unsigned k = 1 + r.below(3);
  for (unsigned i = 0; i < k; ++i) {
    const unsigned pick = r.below(n + 2);
    chosen[i] = pick < n ? groups[pick] : pick == n ? rest : dev;
    perturb(r, chosen[i]);
  }
  CUdevResourceDesc desc = nullptr;
  API(cuDevResourceGenerateDesc, maybe(r, &desc), maybe(r, chosen), r.one_in(8) ? 0u : k);
  if (r.one_in(16)) desc = reinterpret_cast<CUdevResourceDesc>(static_cast<uintptr_t>(r.u64()));
  CUgreenCtx g = nullptr;
  const CUresult made = API(cuGreenCtxCreate, maybe(r, &g, 32), desc, dev_ordinal(r),
                            r.one_in(8) ? r.u32() : static_cast<unsigned>(CU_GREEN_CTX_DEFAULT_STREAM));
  if (made != CUDA_SUCCESS) return;
  CUcontext c = nullptr;
  API(cuCtxFromGreenCtx, maybe(r, &c), g);
  unsigned long long id = 0;
  API(cuGreenCtxGetId, r.one_in(8) ? nullptr : g, maybe(r, &id));
  CUdevResource got{};
  API(cuGreenCtxGetDevResource, g, maybe(r, &got), as_enum<CUdevResourceType>(r.enum_range(0, 2)));
  CUstream s = nullptr;
  API(cuGreenCtxStreamCreate, maybe(r, &s), g, r.one_in(8) ? r.u32() : static_cast<unsigned>(CU_STREAM_NON_BLOCKING),
      static_cast<int>(r.u32() % 16) - 8);
  CUevent e = nullptr;
  API(cuEventCreate, &e, 0u);
  const unsigned steps = r.count(6);
  for (unsigned i = 0; i < steps; ++i) {
    switch (r.below(8)) {
      case 0: API(cuGreenCtxRecordEvent, g, e); break;
      case 1: API(cuGreenCtxWaitEvent, g, e); break;
      case 2: {
        CUcontext sc = nullptr;
        CUgreenCtx sg = nullptr;
        API(cuStreamGetCtx_v2, special_or(r, s), maybe(r, &sc, 4), maybe(r, &sg, 4));
        break;
      }
      case 3: {
        CUgreenCtx sg = nullptr;
        API(cuStreamGetGreenCtx, special_or(r, s), maybe(r, &sg));
        break;
      }
      case 4: API(cuCtxSetCurrent, r.one_in(4) ? entry_ctx : c); break;
      case 5:
        sem_release_all();  // a wait on held work must end
        API(cuStreamSynchronize, special_or(r, s));
        break;
      case 6: API(cuEventRecord, e, special_or(r, s)); break;
      default: {
        CUstream more = nullptr;
        if (API(cuStreamCreate, &more, 0u) == CUDA_SUCCESS) API(cuStreamDestroy, more);
        break;
      }
    }
  }
  API(cuCtxSetCurrent, entry_ctx);
  sem_release_all();  // destroying drains the green context (and may tear the primary one down)
  const bool leave_stream = r.one_in(64);
  if (s && !leave_stream) API(cuStreamDestroy, s);
  API(cuGreenCtxDestroy, g);
  // Stale handles: all refused, none crash.
  API(cuGreenCtxDestroy, g);
  API(cuCtxFromGreenCtx, &c, g);
  API(cuGreenCtxRecordEvent, g, e);
  if (s && leave_stream) API(cuStreamQuery, s);
  if (r.one_in(4)) {
    API(cuCtxSetCurrent, c);
    API(cuCtxSynchronize);
    API(cuCtxSetCurrent, entry_ctx);
  }
  API(cuEventDestroy, e);
}

}  // namespace fz

namespace fz {

// Call family: objects that outlive their context. A context is made and
// given an event, a graph with a memset node over its memory, an executable
// graph of it and, sometimes, an open capture; then it is destroyed, a
// second context is made (which may take its slot) and given memory, and
// the stale objects are used against it. The second context's memory must
// come through untouched. Also: a child graph added to a destroyed graph.
void fam_outlive(Reader& r) {
  CUcontext entry_ctx = nullptr;
  API(cuCtxGetCurrent, &entry_ctx);
  CUcontext old = nullptr;
  if (API(cuCtxCreate_v4, &old, static_cast<CUctxCreateParams*>(nullptr), 0u, 0) != CUDA_SUCCESS) return;
  constexpr size_t kBytes = 4096;
  CUdeviceptr p = 0;
  API(cuMemAlloc_v2, &p, kBytes);
  CUevent e = nullptr;
  API(cuEventCreate, &e, r.one_in(2) ? 0u : static_cast<unsigned>(CU_EVENT_DISABLE_TIMING));
  if (r.one_in(2)) API(cuEventRecord, e, static_cast<CUstream>(nullptr));
  CUgraph g = nullptr;
  API(cuGraphCreate, &g, 0u);
  CUDA_MEMSET_NODE_PARAMS m{};
  m.dst = p;
  m.value = 0x5a;
  m.elementSize = 1;
  m.width = kBytes;
  m.height = 1;
  CUgraphNode node = nullptr;
  API(cuGraphAddMemsetNode, &node, g, static_cast<const CUgraphNode*>(nullptr), size_t{0}, &m, old);
  CUgraphExec exec = nullptr;
  API(cuGraphInstantiateWithFlags, &exec, g, 0ull);
  CUstream capturing = nullptr;
  if (r.one_in(4) && API(cuStreamCreate, &capturing, 0u) == CUDA_SUCCESS)
    API(cuStreamBeginCapture_v2, capturing, CU_STREAM_CAPTURE_MODE_RELAXED);
  sem_release_all();  // the destroy drains the context's work
  API(cuCtxDestroy_v2, old);
  CUcontext next = nullptr;
  if (API(cuCtxCreate_v4, &next, static_cast<CUctxCreateParams*>(nullptr), 0u, 0) != CUDA_SUCCESS) {
    API(cuCtxSetCurrent, entry_ctx);
    return;
  }
  CUdeviceptr mine = 0;
  // Checked only when it was made and filled (a device fault from an
  // earlier family fails every call).
  const bool filled = API(cuMemAlloc_v2, &mine, kBytes) == CUDA_SUCCESS &&
                      API(cuMemsetD8_v2, mine, static_cast<unsigned char>(0x11), kBytes) == CUDA_SUCCESS;
  CUstream s = nullptr;
  API(cuStreamCreate, &s, 0u);
  const unsigned steps = 1 + r.count(6);
  for (unsigned i = 0; i < steps; ++i) {
    switch (r.below(9)) {
      case 0: API(cuEventQuery, e); break;
      case 1: API(cuEventSynchronize, e); break;
      case 2: API(cuEventRecord, e, r.one_in(2) ? s : static_cast<CUstream>(nullptr)); break;
      case 3: API(cuStreamWaitEvent, s, e, 0u); break;
      case 4: {
        float ms = 0;
        API(cuEventElapsedTime_v2, &ms, e, e);
        break;
      }
      case 5: API(cuGraphLaunch, exec, r.one_in(2) ? s : static_cast<CUstream>(nullptr)); break;
      case 6: {
        CUgraphExec again = nullptr;
        if (API(cuGraphInstantiateWithFlags, &again, g, 0ull) == CUDA_SUCCESS) API(cuGraphExecDestroy, again);
        break;
      }
      case 7: {
        CUgraph parent = nullptr;
        CUgraphNode child = nullptr;
        API(cuGraphCreate, &parent, 0u);
        API(cuGraphDestroy, parent);
        API(cuGraphAddChildGraphNode, &child, parent, static_cast<const CUgraphNode*>(nullptr), size_t{0}, g);
        break;
      }
      default: API(cuEventDestroy_v2, e); break;
    }
  }
  sem_release_all();
  API(cuCtxSynchronize);
  unsigned char bytes[2] = {};
  const bool read = filled && API(cuMemcpyDtoH_v2, bytes, mine, size_t{1}) == CUDA_SUCCESS &&
                    API(cuMemcpyDtoH_v2, bytes + 1, mine + kBytes - 1, size_t{1}) == CUDA_SUCCESS;
  // Checked with one input thread only: in the two-thread mode the other
  // thread may write through a pointer it picked before this thread
  // destroyed that pointer's context, into memory `mine` now has (a use
  // after free of the input program's own, as in a CUDA program).
  if (read && !g_pool.two_threads && (bytes[0] != 0x11 || bytes[1] != 0x11))
    violated("a destroyed context's graph wrote a later context's memory", "bytes %02x %02x", bytes[0], bytes[1]);
  API(cuGraphExecDestroy, exec);
  API(cuGraphDestroy, g);
  API(cuCtxDestroy_v2, next);
  API(cuCtxSetCurrent, entry_ctx);
}

}  // namespace fz
