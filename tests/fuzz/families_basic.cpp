// Call families: devices, contexts, primary contexts, streams, events, host
// functions, stream memory operations, memory pools, synchronization.
#include "harness.h"

namespace fz {

namespace {

const char* kProcNames[] = {"cuMemAlloc", "cuStreamCreate", "cuGetProcAddress", "cuMemcpyAsync", "cuLaunchKernel",
                            "cuMemAlloc_v2", "cuStreamQuery_ptsz", "", "cuCtxCreate", "cuGraphLaunch",
                            "cuStreamBeginCapture", "cuMemcpy3DBatchAsync", "nonexistent", "cuInit"};

}  // namespace

void fam_device(Reader& r) {
  const int dev = dev_ordinal(r);
  switch (r.below(12)) {
    case 0: API(cuInit, r.one_in(4) ? r.u32() : 0u); break;
    case 1: { int v; API(cuDriverGetVersion, maybe(r, &v)); break; }
    case 2: { CUdevice d; API(cuDeviceGet, maybe(r, &d), dev); break; }
    case 3: { int n; API(cuDeviceGetCount, maybe(r, &n)); break; }
    case 4: {
      char name[256];
      static const int lens[] = {256, 1, 2, 16, 0, -1, 255, INT32_MIN};
      API(cuDeviceGetName, maybe(r, name), lens[r.below(8)], dev);
      break;
    }
    case 5: {
      CUuuid u;
      if (r.one_in(2)) API(cuDeviceGetUuid, maybe(r, &u), dev);
      else API(cuDeviceGetUuid_v2, maybe(r, &u), dev);
      break;
    }
    case 6: {
      size_t b;
      unsigned b32;
      if (r.one_in(2)) API(cuDeviceTotalMem_v2, maybe(r, &b), dev);
      else API(cuDeviceTotalMem, maybe(r, &b32), dev);
      break;
    }
    case 7: {
      int v;
      API(cuDeviceGetAttribute, maybe(r, &v), as_enum<CUdevice_attribute>(r.enum_range(0, CU_DEVICE_ATTRIBUTE_MAX + 1)),
          dev);
      break;
    }
    case 8: {
      int a, b;
      API(cuDeviceComputeCapability, maybe(r, &a), maybe(r, &b), dev);
      break;
    }
    case 9: {
      int v;
      API(cuDeviceCanAccessPeer, maybe(r, &v), dev, dev_ordinal(r));
      break;
    }
    case 10: {
      const char* s;
      int code = r.one_in(2) ? r.u8() : r.one_in(2) ? 700 + r.u8() % 300 : static_cast<int>(r.u32());
      if (r.one_in(2)) API(cuGetErrorName, as_enum<CUresult>(code), maybe(r, &s));
      else API(cuGetErrorString, as_enum<CUresult>(code), maybe(r, &s));
      break;
    }
    default: {
      char sym[17];
      const char* name;
      if (r.one_in(4)) {
        for (int i = 0; i < 16; ++i) sym[i] = static_cast<char>(r.u8());
        sym[16] = 0;
        name = sym;
      } else {
        name = kProcNames[r.below(sizeof kProcNames / sizeof kProcNames[0])];
      }
      static const int versions[] = {13000, 12000, 11020, 3020, 2000, 0, -1, 13010, INT32_MAX, 4000};
      int version = versions[r.below(10)];
      static const uint64_t fl[] = {0, 1, 2, 3, 4, ~0ull};
      uint64_t flags = fl[r.below(6)];
      void* fn;
      CUdriverProcAddressQueryResult st;
      if (r.one_in(2)) API(cuGetProcAddress, maybe(r, name), maybe(r, &fn), version, flags);
      else API(cuGetProcAddress_v2, maybe(r, name), maybe(r, &fn), version, flags, maybe(r, &st, 4));
      break;
    }
  }
}

// ---------------------------------------------------------------- contexts

static void created_ctx(CUresult res, CUcontext c, int dev) {
  if (res != CUDA_SUCCESS) return;
  int i = g_pool.add(T::kCtx, c, -1);
  std::lock_guard<std::mutex> g(g_pool.mu);
  g_pool.of(T::kCtx)[i].device = dev;
}

// Whether a stream of context `c` (pool index i) captures (the legacy
// stream sees blocking captures; the per-thread one and the pool's streams
// are asked).
static bool ctx_captures(int i, CUcontext c) {
  if (API(cuCtxPushCurrent_v2, c) != CUDA_SUCCESS) return false;
  bool any = capture_status(CU_STREAM_LEGACY, false) == 3 || capture_status(CU_STREAM_PER_THREAD, false) > 0;
  CUcontext popped;
  API(cuCtxPopCurrent_v2, &popped);
  std::vector<CUstream> mine;
  {
    std::lock_guard<std::mutex> g(g_pool.mu);
    for (const Obj& o : g_pool.of(T::kStream))
      if (o.ctx == i && o.st == St::kLive) mine.push_back(static_cast<CUstream>(o.h));
  }
  for (CUstream s : mine) any = any || capture_status(s, false) > 0;
  return any;
}

void fam_ctx(Reader& r) {
  switch (r.below(14)) {
    case 0: case 1: {
      CUcontext c = nullptr;
      unsigned flags = r.flags(0x3f);
      int dev = dev_ordinal(r);
      CUresult res = r.one_in(2) ? API(cuCtxCreate, maybe(r, &c), flags, dev) : API(cuCtxCreate_v2, maybe(r, &c), flags, dev);
      created_ctx(res, c, dev);
      break;
    }
    case 2: {
      CUcontext c = nullptr;
      CUexecAffinityParam params[2];
      std::memset(params, 0, sizeof params);
      int n = static_cast<int>(r.below(4)) - 1;  // -1 .. 2
      CUexecAffinityParam* p = n > 0 && r.one_in(8) ? nullptr : params;
      if (n > 2) n = 2;
      int dev = dev_ordinal(r);
      created_ctx(API(cuCtxCreate_v3, maybe(r, &c), p, n, r.flags(0x3f), dev), c, dev);
      break;
    }
    case 3: {
      CUcontext c = nullptr;
      CUctxCreateParams p{};
      p.numExecAffinityParams = r.one_in(4) ? static_cast<int>(r.u8() % 3) - 1 : 0;
      p.cigParams = r.one_in(4) ? reinterpret_cast<CUctxCigParam*>(&p) : nullptr;
      int dev = dev_ordinal(r);
      created_ctx(API(cuCtxCreate_v4, maybe(r, &c), maybe(r, &p, 2), r.flags(0x3f), dev), c, dev);
      break;
    }
    case 4: {  // destroy: synchronizes
      int i = g_pool.pick_live(r, T::kCtx, true);
      CUcontext c = i >= 0 && !r.one_in(8) ? static_cast<CUcontext>(g_pool.h(T::kCtx, i))
                                            : static_cast<CUcontext>(g_pool.pick(r, T::kCtx, &i));
      if (g_pool.two_threads && c == g_pool.h(T::kCtx, 1)) break;  // the input's context: both threads use it
      if (avoid("ctx_destroy_capture") && ctx_captures(i, c)) break;
      sem_release_all();
      TeardownGuard teardown(TeardownGuard::kExclusive);  // the destroy and its bookkeeping, as one
      bool marked = g_pool.dying(T::kCtx, i);
      CUresult res = r.one_in(2) ? API(cuCtxDestroy, c) : API(cuCtxDestroy_v2, c);
      if (res == CUDA_SUCCESS && i >= 0) {
        g_pool.ctx_torn_down(i, true);
      } else {
        g_pool.destroyed(T::kCtx, i, false, marked);
      }
      break;
    }
    case 5: {
      CUcontext c = static_cast<CUcontext>(g_pool.pick(r, T::kCtx));
      if (r.one_in(2)) API(cuCtxPushCurrent, c);
      else API(cuCtxPushCurrent_v2, c);
      break;
    }
    case 6: {
      CUcontext c;
      if (r.one_in(2)) API(cuCtxPopCurrent, maybe(r, &c, 4));
      else API(cuCtxPopCurrent_v2, maybe(r, &c, 4));
      break;
    }
    case 7: API(cuCtxSetCurrent, static_cast<CUcontext>(g_pool.pick(r, T::kCtx))); break;
    case 8: {
      CUcontext c;
      CUdevice d;
      unsigned f;
      unsigned long long id;
      unsigned v;
      switch (r.below(5)) {
        case 0: API(cuCtxGetCurrent, maybe(r, &c)); break;
        case 1: API(cuCtxGetDevice, maybe(r, &d)); break;
        case 2: API(cuCtxGetFlags, maybe(r, &f)); break;
        case 3: API(cuCtxGetId, static_cast<CUcontext>(g_pool.pick(r, T::kCtx)), maybe(r, &id)); break;
        default: API(cuCtxGetApiVersion, static_cast<CUcontext>(g_pool.pick(r, T::kCtx)), maybe(r, &v)); break;
      }
      break;
    }
    case 9: API(cuCtxSetFlags, r.flags(0x3f)); break;
    case 10:
      sem_release_all();
      API(cuCtxSynchronize);
      break;
    case 11: {
      int lo, hi;
      API(cuCtxGetStreamPriorityRange, maybe(r, &lo, 4), maybe(r, &hi, 4));
      break;
    }
    case 12: {
      size_t v;
      int lim = r.enum_range(0, CU_LIMIT_MAX);
      if (r.one_in(2)) API(cuCtxGetLimit, maybe(r, &v), as_enum<CUlimit>(lim));
      else API(cuCtxSetLimit, as_enum<CUlimit>(lim), r.one_in(2) ? r.u16() : r.size());
      break;
    }
    default: {
      CUfunc_cache cc;
      if (r.one_in(2)) API(cuCtxGetCacheConfig, maybe(r, &cc));
      else API(cuCtxSetCacheConfig, as_enum<CUfunc_cache>(r.enum_range(0, 3)));
      break;
    }
  }
}

// The primary contexts: device 0's has the harness's own reference.
static const int kBaseRefs[2] = {1, 0};

static int primary_index(CUcontext c, int dev) {
  std::lock_guard<std::mutex> g(g_pool.mu);
  auto& v = g_pool.of(T::kCtx);
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].h == c && v[i].primary) return static_cast<int>(i);
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].h == c && v[i].st == St::kLive && v[i].thread >= 0)
      violated("cuDevicePrimaryCtxRetain returned a live user context", "%p", static_cast<void*>(c));
  Obj o;
  o.h = c;
  o.primary = true;
  o.device = dev;
  o.thread = -1;
  v.push_back(o);
  return static_cast<int>(v.size() - 1);
}

static void primary_gone(int dev) {
  // Torn down: its streams and memory went.
  std::vector<int> idx;
  {
    std::lock_guard<std::mutex> g(g_pool.mu);
    auto& v = g_pool.of(T::kCtx);
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i].primary && v[i].device == dev) idx.push_back(static_cast<int>(i));
  }
  for (int i : idx) g_pool.ctx_torn_down(i, false);
}

void fam_primary(Reader& r) {
  const int dev = dev_ordinal(r);
  const bool ok_dev = dev == 0 || dev == 1;
  switch (r.below(6)) {
    case 0: {
      CUcontext c = nullptr;
      if (API(cuDevicePrimaryCtxRetain, maybe(r, &c), dev) == CUDA_SUCCESS && ok_dev && c) {
        primary_index(c, dev);
        std::lock_guard<std::mutex> g(g_pool.mu);
        ++g_pool.primary_refs[dev];
      }
      break;
    }
    case 1: {
      // The two-thread mode never drops the harness's reference (the other
      // thread's memory would go with it).
      if (ok_dev && (g_pool.two_threads || avoid("primary_reset"))) {
        std::lock_guard<std::mutex> g(g_pool.mu);
        if (g_pool.primary_refs[dev] <= 0) break;
        --g_pool.primary_refs[dev];  // taken now, so the other thread cannot take it too
      }
      sem_release_all();
      CUresult res = r.one_in(2) ? API(cuDevicePrimaryCtxRelease, dev) : API(cuDevicePrimaryCtxRelease_v2, dev);
      if (!ok_dev) break;
      bool gone = false;
      {
        std::lock_guard<std::mutex> g(g_pool.mu);
        if (g_pool.two_threads || avoid("primary_reset")) {
          if (res != CUDA_SUCCESS) ++g_pool.primary_refs[dev];
        } else if (res == CUDA_SUCCESS) {
          --g_pool.primary_refs[dev];
        }
        gone = res == CUDA_SUCCESS && kBaseRefs[dev] + g_pool.primary_refs[dev] == 0;
      }
      if (gone) primary_gone(dev);
      break;
    }
    case 2: {
      if (g_pool.two_threads || avoid("primary_reset")) break;
      sem_release_all();
      CUresult res = r.one_in(2) ? API(cuDevicePrimaryCtxReset, dev) : API(cuDevicePrimaryCtxReset_v2, dev);
      if (res == CUDA_SUCCESS && ok_dev) {
        g_pool.primary_refs[dev] = -kBaseRefs[dev];
        primary_gone(dev);
      }
      break;
    }
    case 3: {
      unsigned f = r.flags(0x3f);
      if (r.one_in(2)) API(cuDevicePrimaryCtxSetFlags, dev, f);
      else API(cuDevicePrimaryCtxSetFlags_v2, dev, f);
      break;
    }
    default: {
      unsigned f;
      int active;
      API(cuDevicePrimaryCtxGetState, dev, maybe(r, &f), maybe(r, &active));
      break;
    }
  }
}

// ---------------------------------------------------------------- streams

int ctx_of_stream(int stream_idx) {
  if (stream_idx >= 0) {
    std::lock_guard<std::mutex> g(g_pool.mu);
    return g_pool.of(T::kStream)[stream_idx].ctx;
  }
  return g_pool.current_ctx_index();
}

void fam_stream(Reader& r) {
  const bool pt = r.one_in(2);  // the _ptsz variant
  switch (r.below(10)) {
    case 0: case 1: {
      CUstream s = nullptr;
      unsigned flags = r.flags(CU_STREAM_NON_BLOCKING);
      CUresult res;
      if (r.one_in(2)) {
        res = API(cuStreamCreate, maybe(r, &s, 32), flags);
      } else {
        static const int prios[] = {0, -1, -5, -6, 1, INT32_MIN, INT32_MAX, -3};
        res = API(cuStreamCreateWithPriority, maybe(r, &s, 32), flags, prios[r.below(8)]);
      }
      if (res == CUDA_SUCCESS) g_pool.add(T::kStream, s, g_pool.current_ctx_index());
      break;
    }
    case 2: {
      int i = g_pool.pick_live(r, T::kStream, true);
      CUstream s = i >= 0 && !r.one_in(8) ? static_cast<CUstream>(g_pool.h(T::kStream, i)) : g_pool.pick_stream(r, &i);
      bool marked = g_pool.dying(T::kStream, i);
      CUresult res = r.one_in(2) ? API(cuStreamDestroy, s) : API(cuStreamDestroy_v2, s);
      g_pool.destroyed(T::kStream, i, res == CUDA_SUCCESS, marked);
      if (res == CUDA_SUCCESS) {
        // Its capture (if it was the origin) is over: the capture graph may be gone.
        std::lock_guard<std::mutex> g(g_pool.mu);
        for (auto& o : g_pool.of(T::kGraph))
          if (o.capture_owned && o.st == St::kLive) o.st = St::kOrphan;
      }
      break;
    }
    case 3: {
      CUstream s = g_pool.pick_stream(r);
      if (pt) API(cuStreamQuery_ptsz, s);
      else API(cuStreamQuery, s);
      break;
    }
    case 4: {
      CUstream s = g_pool.pick_stream(r);
      sem_release_all();
      if (pt) API(cuStreamSynchronize_ptsz, s);
      else API(cuStreamSynchronize, s);
      break;
    }
    case 5: {
      CUstream s = g_pool.pick_stream(r);
      unsigned f;
      int p;
      unsigned long long id;
      CUdevice d;
      CUcontext c;
      CUgreenCtx gc;
      switch (r.below(6)) {
        case 0: pt ? API(cuStreamGetFlags_ptsz, s, maybe(r, &f)) : API(cuStreamGetFlags, s, maybe(r, &f)); break;
        case 1: pt ? API(cuStreamGetPriority_ptsz, s, maybe(r, &p)) : API(cuStreamGetPriority, s, maybe(r, &p)); break;
        case 2: pt ? API(cuStreamGetId_ptsz, s, maybe(r, &id)) : API(cuStreamGetId, s, maybe(r, &id)); break;
        case 3: pt ? API(cuStreamGetDevice_ptsz, s, maybe(r, &d)) : API(cuStreamGetDevice, s, maybe(r, &d)); break;
        case 4: pt ? API(cuStreamGetCtx_ptsz, s, maybe(r, &c)) : API(cuStreamGetCtx, s, maybe(r, &c)); break;
        default:
          pt ? API(cuStreamGetCtx_v2_ptsz, s, maybe(r, &c), maybe(r, &gc))
             : API(cuStreamGetCtx_v2, s, maybe(r, &c), maybe(r, &gc));
          break;
      }
      break;
    }
    case 6: case 7: {
      CUstream s = g_pool.pick_stream(r);
      CUevent e = static_cast<CUevent>(g_pool.pick(r, T::kEvent));
      unsigned f = r.flags(CU_EVENT_WAIT_EXTERNAL);
      if (pt) API(cuStreamWaitEvent_ptsz, s, e, f);
      else API(cuStreamWaitEvent, s, e, f);
      break;
    }
    default: {
      CUstream s = g_pool.pick_stream(r);
      MemRef m = pick_mem(r, Use::kValidated);
      size_t len = r.one_in(2) ? 0 : r.one_in(2) && m.src == MemRef::kAlloc ? m.avail : r.size();
      unsigned f = static_cast<unsigned>(r.enum_of({CU_MEM_ATTACH_GLOBAL, CU_MEM_ATTACH_HOST, CU_MEM_ATTACH_SINGLE}));
      if (pt) API(cuStreamAttachMemAsync_ptsz, s, static_cast<CUdeviceptr>(m.p), len, f);
      else API(cuStreamAttachMemAsync, s, static_cast<CUdeviceptr>(m.p), len, f);
      break;
    }
  }
}

void fam_stream_attr(Reader& r) {
  const bool pt = r.one_in(2);
  CUstream s = g_pool.pick_stream(r);
  int attr = r.enum_of({CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY,
                        CU_LAUNCH_ATTRIBUTE_PRIORITY, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP,
                        CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
                        CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION});
  CUstreamAttrValue v;
  switch (r.below(3)) {
    case 0:
      pt ? API(cuStreamGetAttribute_ptsz, s, as_enum<CUstreamAttrID>(attr), maybe(r, &v))
         : API(cuStreamGetAttribute, s, as_enum<CUstreamAttrID>(attr), maybe(r, &v));
      break;
    case 1: {
      auto* b = reinterpret_cast<uint8_t*>(&v);
      for (size_t i = 0; i < sizeof v; ++i) b[i] = r.one_in(2) ? 0 : r.u8();
      if (r.one_in(2)) v.accessPolicyWindow.hitRatio = static_cast<float>(r.u8()) / 200.0f;
      pt ? API(cuStreamSetAttribute_ptsz, s, as_enum<CUstreamAttrID>(attr), maybe(r, &v))
         : API(cuStreamSetAttribute, s, as_enum<CUstreamAttrID>(attr), maybe(r, &v));
      break;
    }
    default: {
      CUstream src = g_pool.pick_stream(r);
      pt ? API(cuStreamCopyAttributes_ptsz, s, src) : API(cuStreamCopyAttributes, s, src);
      break;
    }
  }
}

// ---------------------------------------------------------------- events

void fam_event(Reader& r) {
  const bool pt = r.one_in(2);
  switch (r.below(8)) {
    case 0: {
      CUevent e = nullptr;
      if (API(cuEventCreate, maybe(r, &e, 32), r.flags(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
                                                       CU_EVENT_INTERPROCESS)) == CUDA_SUCCESS)
        g_pool.add(T::kEvent, e, g_pool.current_ctx_index());
      break;
    }
    case 1: {
      int i = g_pool.pick_live(r, T::kEvent, true);
      CUevent e = i >= 0 && !r.one_in(8) ? static_cast<CUevent>(g_pool.h(T::kEvent, i))
                                          : static_cast<CUevent>(g_pool.pick(r, T::kEvent, &i));
      bool marked = g_pool.dying(T::kEvent, i);
      CUresult res = r.one_in(2) ? API(cuEventDestroy, e) : API(cuEventDestroy_v2, e);
      g_pool.destroyed(T::kEvent, i, res == CUDA_SUCCESS, marked);
      break;
    }
    case 2: case 3: {
      CUevent e = static_cast<CUevent>(g_pool.pick(r, T::kEvent));
      CUstream s = g_pool.pick_stream(r);
      if (r.one_in(2)) {
        pt ? API(cuEventRecord_ptsz, e, s) : API(cuEventRecord, e, s);
      } else {
        unsigned f = r.flags(CU_EVENT_RECORD_EXTERNAL);
        pt ? API(cuEventRecordWithFlags_ptsz, e, s, f) : API(cuEventRecordWithFlags, e, s, f);
      }
      break;
    }
    case 4: API(cuEventQuery, static_cast<CUevent>(g_pool.pick(r, T::kEvent))); break;
    case 5: {
      CUevent e = static_cast<CUevent>(g_pool.pick(r, T::kEvent));
      sem_release_all();
      API(cuEventSynchronize, e);
      break;
    }
    default: {
      float ms;
      CUevent a = static_cast<CUevent>(g_pool.pick(r, T::kEvent));
      CUevent b = static_cast<CUevent>(g_pool.pick(r, T::kEvent));
      if (r.one_in(2)) API(cuEventElapsedTime, maybe(r, &ms), a, b);
      else API(cuEventElapsedTime_v2, maybe(r, &ms), a, b);
      break;
    }
  }
}

// ---------------------------------------------------------- host functions

void fam_hostfn(Reader& r) {
  const bool pt = r.one_in(2);
  const bool is_cb = r.one_in(3);
  int si = -1;
  CUstream s = g_pool.pick_stream(r, &si);
  int rec = hostrec_new();
  if (rec < 0) return;
  void* data = hostrec_data(rec);
  // Whether the enqueue is captured instead of run: known exactly with one
  // thread; with two, another thread may begin a capture on a shared stream.
  const int st = capture_status(s, pt);
  const bool shared = g_pool.two_threads && si >= 0;
  const bool captured = st == CU_STREAM_CAPTURE_STATUS_ACTIVE;
  const bool certain = st == CU_STREAM_CAPTURE_STATUS_NONE && !shared;
  const int n = captured && !shared ? 0 : 1;
  hostrec_expect(rec, n, certain);
  CUresult res;
  if (is_cb) {
    CUstreamCallback cb = r.one_in(16) ? nullptr : callback;
    unsigned flags = r.one_in(8) ? r.u32() : 0u;
    res = pt ? API(cuStreamAddCallback_ptsz, s, cb, data, flags) : API(cuStreamAddCallback, s, cb, data, flags);
  } else {
    CUhostFn fn = r.one_in(16) ? nullptr : hostfn;
    res = pt ? API(cuLaunchHostFunc_ptsz, s, fn, data) : API(cuLaunchHostFunc, s, fn, data);
  }
  if (res != CUDA_SUCCESS) hostrec_unexpect(rec, n, certain);
  if (captured || shared) hostrec_in_graph(rec);
}

// ------------------------------------------------- stream memory operations

void fam_memop(Reader& r) {
  const bool pt = r.one_in(2);
  CUstream s = g_pool.pick_stream(r);
  CUdeviceptr addr;
  uint64_t value;
  unsigned flags;
  switch (r.below(6)) {
    case 0:
      gen_wait_args(r, false, &addr, &value, &flags);
      pt ? API(cuStreamWaitValue32_v2_ptsz, s, addr, static_cast<cuuint32_t>(value), flags)
         : API(cuStreamWaitValue32_v2, s, addr, static_cast<cuuint32_t>(value), flags);
      break;
    case 1:
      gen_wait_args(r, true, &addr, &value, &flags);
      pt ? API(cuStreamWaitValue64_v2_ptsz, s, addr, value, flags) : API(cuStreamWaitValue64_v2, s, addr, value, flags);
      break;
    case 2:
      gen_write_args(r, false, &addr, &value, &flags);
      pt ? API(cuStreamWriteValue32_v2_ptsz, s, addr, static_cast<cuuint32_t>(value), flags)
         : API(cuStreamWriteValue32_v2, s, addr, static_cast<cuuint32_t>(value), flags);
      break;
    case 3:
      gen_write_args(r, true, &addr, &value, &flags);
      pt ? API(cuStreamWriteValue64_v2_ptsz, s, addr, value, flags) : API(cuStreamWriteValue64_v2, s, addr, value, flags);
      break;
    default: {
      unsigned n = r.count(12);
      std::vector<CUstreamBatchMemOpParams> ops(n);
      for (auto& op : ops) gen_memop(r, &op);
      // The count either matches the array or is refused before it is read.
      unsigned count = n;
      CUstreamBatchMemOpParams* p = ops.data();
      switch (r.below(10)) {
        case 0: count = 256 + r.u8(); break;
        case 1: count = 0xffffffffu; break;
        case 2: p = nullptr; count = r.u8(); break;
        default: break;
      }
      if (n == 0 && p == ops.data()) p = nullptr;
      unsigned f = r.one_in(8) ? r.u32() : 0u;
      trace_memop(p, std::min(count, n));
      pt ? API(cuStreamBatchMemOp_v2_ptsz, s, count, p, f) : API(cuStreamBatchMemOp_v2, s, count, p, f);
      break;
    }
  }
}

void fam_release(Reader& r) {
  if (r.one_in(4)) sem_release_all();
  else sem_release_one(r);
}

// ---------------------------------------------------------- memory pools

static void learn_pool(CUmemoryPool p, bool is_default) {
  if (!p) return;
  int i = g_pool.learn(T::kMemPool, p, -1, false);
  std::lock_guard<std::mutex> g(g_pool.mu);
  if (i >= 0) g_pool.of(T::kMemPool)[i].is_default = g_pool.of(T::kMemPool)[i].is_default || is_default;
}

static CUmemLocation gen_location(Reader& r) {
  CUmemLocation l;
  set_enum(&l.type, r.enum_of({CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA,
                               CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, CU_MEM_LOCATION_TYPE_INVALID}));
  l.id = dev_ordinal(r);
  return l;
}

void fam_mempool(Reader& r) {
  switch (r.below(12)) {
    case 0: case 1: {
      CUmemPoolProps props;
      auto* b = reinterpret_cast<uint8_t*>(&props);
      for (size_t i = 0; i < sizeof props; ++i) b[i] = r.one_in(4) ? r.u8() : 0;
      set_enum(&props.allocType, r.enum_of({CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_ALLOCATION_TYPE_INVALID,
                                            CU_MEM_ALLOCATION_TYPE_MANAGED}));
      int ht = r.one_in(4) ? static_cast<int>(r.flags(0xf)) : 0;
      set_enum(&props.handleTypes, ht);
      props.location = gen_location(r);
      props.maxSize = r.one_in(2) ? 0 : r.size();
      props.win32SecurityAttributes = nullptr;
      CUmemoryPool p = nullptr;
      if (API(cuMemPoolCreate, maybe(r, &p), maybe(r, &props)) == CUDA_SUCCESS) g_pool.add(T::kMemPool, p, -1);
      break;
    }
    case 2: {
      int i = g_pool.pick_live(r, T::kMemPool, true);
      CUmemoryPool p = i >= 0 && !r.one_in(4) ? static_cast<CUmemoryPool>(g_pool.h(T::kMemPool, i))
                                               : static_cast<CUmemoryPool>(g_pool.pick(r, T::kMemPool, &i));
      bool marked = g_pool.dying(T::kMemPool, i);
      CUresult res = API(cuMemPoolDestroy, p);
      g_pool.destroyed(T::kMemPool, i, res == CUDA_SUCCESS, marked);
      break;
    }
    case 3: case 4: {
      CUmemoryPool p = static_cast<CUmemoryPool>(g_pool.pick(r, T::kMemPool));
      int attr = r.enum_range(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, CU_MEMPOOL_ATTR_USED_MEM_HIGH + 1);
      uint64_t v[2] = {r.one_in(2) ? 0 : r.u64(), 0};
      if (r.one_in(2)) API(cuMemPoolGetAttribute, p, as_enum<CUmemPool_attribute>(attr), maybe(r, static_cast<void*>(v)));
      else API(cuMemPoolSetAttribute, p, as_enum<CUmemPool_attribute>(attr), maybe(r, static_cast<void*>(v)));
      break;
    }
    case 5: API(cuMemPoolTrimTo, static_cast<CUmemoryPool>(g_pool.pick(r, T::kMemPool)), r.size()); break;
    case 6: {
      CUmemoryPool p = static_cast<CUmemoryPool>(g_pool.pick(r, T::kMemPool));
      unsigned n = r.count(4);
      std::vector<CUmemAccessDesc> map(n);
      for (auto& d : map) {
        d.location = gen_location(r);
        set_enum(&d.flags, r.enum_of({CU_MEM_ACCESS_FLAGS_PROT_NONE, CU_MEM_ACCESS_FLAGS_PROT_READ,
                                      CU_MEM_ACCESS_FLAGS_PROT_READWRITE}));
      }
      size_t count = n;
      const CUmemAccessDesc* mp = n ? map.data() : nullptr;
      if (r.one_in(8)) {
        mp = nullptr;
        count = r.size();
      }
      API(cuMemPoolSetAccess, p, mp, count);
      break;
    }
    case 7: {
      CUmemAccess_flags f;
      CUmemLocation l = gen_location(r);
      API(cuMemPoolGetAccess, maybe(r, &f), static_cast<CUmemoryPool>(g_pool.pick(r, T::kMemPool)), maybe(r, &l));
      break;
    }
    case 8: {
      CUmemoryPool p = nullptr;
      int dev = dev_ordinal(r);
      if (r.one_in(2)) {
        if (API(cuDeviceGetDefaultMemPool, maybe(r, &p), dev) == CUDA_SUCCESS) learn_pool(p, true);
      } else if (API(cuDeviceGetMemPool, maybe(r, &p), dev) == CUDA_SUCCESS) {
        learn_pool(p, false);
      }
      break;
    }
    case 9: API(cuDeviceSetMemPool, dev_ordinal(r), static_cast<CUmemoryPool>(g_pool.pick(r, T::kMemPool))); break;
    default: {
      CUmemoryPool p = nullptr;
      CUmemLocation l = gen_location(r);
      int type = r.enum_of({CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_ALLOCATION_TYPE_INVALID, CU_MEM_ALLOCATION_TYPE_MANAGED});
      switch (r.below(3)) {
        case 0:
          if (API(cuMemGetDefaultMemPool, maybe(r, &p), maybe(r, &l), as_enum<CUmemAllocationType>(type)) == CUDA_SUCCESS)
            learn_pool(p, true);
          break;
        case 1:
          if (API(cuMemGetMemPool, maybe(r, &p), maybe(r, &l), as_enum<CUmemAllocationType>(type)) == CUDA_SUCCESS)
            learn_pool(p, false);
          break;
        default:
          API(cuMemSetMemPool, maybe(r, &l), as_enum<CUmemAllocationType>(type),
              static_cast<CUmemoryPool>(g_pool.pick(r, T::kMemPool)));
          break;
      }
      break;
    }
  }
}

// -------------------------------------------------------- synchronization

void fam_sync(Reader& r) {
  bool ok = sync_everything();
  if (ok && !g_pool.two_threads) hostrec_check_all("after synchronizing every context");
}

// Entry points cucpu does not implement: they say so and return NOT_SUPPORTED.
// Called directly (not through API()): the stubs are defined without
// parameters, which an indirect call's function-type check would report.
void fam_misc(Reader& r) {
  CUresult res;
  switch (r.below(4)) {
    case 0: { CUmodule m; res = cuModuleLoad(&m, "/nonexistent.cubin"); break; }
    case 1: res = cuStreamWaitValue32(nullptr, 0, 0, 0); break;
    case 2: res = cuGraphNodeSetEnabled(nullptr, nullptr, 1); break;
    default: { CUmemGenericAllocationHandle h; res = cuMemCreate(&h, 0, nullptr, 0); break; }
  }
  count_call();
  if (tracing()) trace_line("#%llu (an unimplemented entry point) = %d", static_cast<unsigned long long>(g_calls.load()), res);
}

}  // namespace fz
