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
      case 5: API(cuStreamSynchronize, special_or(r, s)); break;
      case 6: API(cuEventRecord, e, special_or(r, s)); break;
      default: {
        CUstream more = nullptr;
        if (API(cuStreamCreate, &more, 0u) == CUDA_SUCCESS) API(cuStreamDestroy, more);
        break;
      }
    }
  }
  API(cuCtxSetCurrent, entry_ctx);
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
