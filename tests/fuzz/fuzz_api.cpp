// cucpu's API fuzzer (libFuzzer). Each input is a sequence of call families
// (harness.h) over one pool of handles; at the end of an input every
// capture is ended, everything is synchronized and checked, and everything
// the input made is destroyed, so inputs do not leak into each other.
//
// Environment:
//   CUCPU_FUZZ_TRACE=1          print every API call (decoding reproducers)
//   CUCPU_FUZZ_THREADS=2        two threads drive the pool, one half of the input each
//   CUCPU_FUZZ_MAX_CALLS=N      families per input (default 128)
//   CUCPU_FUZZ_DISABLE=a,b      skip these families (by name) to get past a known crash
//   CUCPU_FUZZ_LIST=1           print the family table and exit
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <string>
#include <thread>

#include "harness.h"

namespace fz {

// The table of call families. An input byte picks one (modulo the size), so
// appending a family (a kernel-launch family, a PTX-compiler family) keeps
// every family's index and does not shift the existing corpus much.
const Family kFamilies[] = {
    {"device", fam_device},
    {"ctx", fam_ctx},
    {"primary", fam_primary},
    {"alloc", fam_alloc},
    {"free", fam_free},
    {"memquery", fam_memquery},
    {"array", fam_array},
    {"copy1d", fam_copy1d},
    {"copy3d", fam_copy3d},
    {"copybatch", fam_copybatch},
    {"memset", fam_memset},
    {"checked_copy", fam_checked_copy},
    {"checked_memset", fam_checked_memset},
    {"stream", fam_stream},
    {"stream_attr", fam_stream_attr},
    {"event", fam_event},
    {"hostfn", fam_hostfn},
    {"memop", fam_memop},
    {"release", fam_release},
    {"capture", fam_capture},
    {"capture_info", fam_capture_info},
    {"graph_build", fam_graph_build},
    {"graph_node", fam_graph_node},
    {"graph_query", fam_graph_query},
    {"graph_params", fam_graph_params},
    {"graph_exec", fam_graph_exec},
    {"graph_exec_set", fam_graph_exec_set},
    {"mempool", fam_mempool},
    {"sync", fam_sync},
    {"misc", fam_misc},
    {"vmm", fam_vmm},
    {"user_object", fam_user_object},
    {"prefetch_batch", fam_prefetch_batch},
    {"green", fam_green},
    {"outlive", fam_outlive},
    {"ipc", fam_ipc},
};
const size_t kFamilyCount = sizeof kFamilies / sizeof kFamilies[0];

namespace {

CUcontext g_primary = nullptr;
CUcontext g_input_ctx = nullptr;  // the context each input starts in
unsigned g_max_calls = 128;
bool g_disabled[64] = {};
std::atomic<uint64_t> g_inputs{0};
std::chrono::steady_clock::time_point g_start;

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* n = "?";
    cuGetErrorName(r, &n);
    std::fprintf(stderr, "cucpu-fuzz: setup failed: %s: %s\n", what, n);
    std::abort();
  }
}

void print_stats() {
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
  unsigned long long n = g_calls.load();
  std::fprintf(stderr, "cucpu-fuzz: %llu API calls in %.1f s (%.0f calls/s), %llu inputs\n", n, s, s > 0 ? n / s : 0.0,
               static_cast<unsigned long long>(g_inputs.load()));
}

// Fills the library's handle free lists, which hand slots back first in,
// first out: a handle destroyed by an input is then reused only after many
// creations, so stale handles stay stale within an input.
void warm_up() {
  std::vector<CUstream> s(512);
  for (auto& x : s) check(cuStreamCreate(&x, 0), "warm-up stream");
  for (auto& x : s) check(cuStreamDestroy(x), "warm-up stream destroy");
  std::vector<CUevent> e(512);
  for (auto& x : e) check(cuEventCreate(&x, 0), "warm-up event");
  for (auto& x : e) check(cuEventDestroy(x), "warm-up event destroy");
  std::vector<CUgraph> g(256);
  std::vector<CUgraphExec> x(256);
  for (size_t i = 0; i < g.size(); ++i) {
    check(cuGraphCreate(&g[i], 0), "warm-up graph");
    CUgraphNode n;
    for (int k = 0; k < 8; ++k) check(cuGraphAddEmptyNode(&n, g[i], nullptr, 0), "warm-up node");
    check(cuGraphInstantiateWithFlags(&x[i], g[i], 0), "warm-up exec");
  }
  for (size_t i = 0; i < g.size(); ++i) {
    check(cuGraphExecDestroy(x[i]), "warm-up exec destroy");
    check(cuGraphDestroy(g[i]), "warm-up graph destroy");
  }
  std::vector<CUarray> a(256);
  CUDA_ARRAY_DESCRIPTOR d{1, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1};
  for (auto& y : a) check(cuArrayCreate_v2(&y, &d), "warm-up array");
  for (auto& y : a) check(cuArrayDestroy(y), "warm-up array destroy");
  std::vector<CUcontext> c(64);
  for (auto& y : c) {
    check(cuCtxCreate_v2(&y, 0, 0), "warm-up context");
    CUcontext popped;
    check(cuCtxPopCurrent_v2(&popped), "warm-up pop");
  }
  for (auto& y : c) check(cuCtxDestroy_v2(y), "warm-up context destroy");
  check(cuCtxSetCurrent(g_primary), "set current");
}

void run_calls(Reader& r) {
  for (unsigned n = 0; n < g_max_calls && !r.empty(); ++n) {
    unsigned f = r.u8() % kFamilyCount;
    if (g_disabled[f]) continue;
    if (tracing()) trace_line("== %s", kFamilies[f].name);
    kFamilies[f].run(r);
  }
}

// Every stream the pool knows, plus the default streams of each context.
void end_captures() {
  CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_GLOBAL;
  API(cuThreadExchangeStreamCaptureMode, &m);
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<CUstream> streams;
    std::vector<CUcontext> ctxs;
    {
      std::lock_guard<std::mutex> g(g_pool.mu);
      for (const Obj& o : g_pool.of(T::kStream))
        if (o.st != St::kDead && !o.aliased) streams.push_back(static_cast<CUstream>(o.h));
      for (const Obj& o : g_pool.of(T::kCtx))
        if (o.st == St::kLive) ctxs.push_back(static_cast<CUcontext>(o.h));
      for (const Thread& t : g_threads)
        if (t.chk_stream) streams.push_back(t.chk_stream);
    }
    bool again = false;
    auto end = [&](CUstream s) {
      int st = capture_status(s, false);
      if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE && st != CU_STREAM_CAPTURE_STATUS_INVALIDATED) return;
      CUgraph g = nullptr;
      CUresult r = API(cuStreamEndCapture, s, &g);
      if (r == CUDA_SUCCESS && g) API(cuGraphDestroy, g);
      again = true;
    };
    for (CUstream s : streams) end(s);
    for (CUcontext c : ctxs) {
      if (API(cuCtxPushCurrent_v2, c) != CUDA_SUCCESS) continue;
      end(CU_STREAM_PER_THREAD);
      CUcontext popped;
      API(cuCtxPopCurrent_v2, &popped);
    }
    if (!again) break;
  }
}

void reset_stack() {
  CUcontext c;
  for (int i = 0; i < 256 && API(cuCtxPopCurrent_v2, &c) == CUDA_SUCCESS; ++i) {
  }
  check(API(cuCtxSetCurrent, g_primary), "set current");
}

// A thread starts an input with the input's context on top of the primary one.
void start_stack() {
  reset_stack();
  if (API(cuCtxPushCurrent_v2, g_input_ctx) != CUDA_SUCCESS) return;  // destroyed by the other thread already
}

// A capture still alive once every stream's capture was ended: it outlived
// its streams.
// Set when a free met a faulted context: the leak check cannot then tell
// which context still holds the memory (the harness's record of an
// allocation's context is not always the library's), so it is skipped.
bool g_free_refused_by_fault = false;

void verify_no_capture(const char* when) {
  std::vector<CUcontext> ctxs;
  {
    std::lock_guard<std::mutex> g(g_pool.mu);
    for (const Obj& o : g_pool.of(T::kCtx))
      if (o.st == St::kLive) ctxs.push_back(static_cast<CUcontext>(o.h));
  }
  for (CUcontext c : ctxs) {
    if (API(cuCtxPushCurrent_v2, c) != CUDA_SUCCESS) continue;
    CUstreamCaptureStatus st;
    CUresult r = API(cuStreamIsCapturing, CU_STREAM_LEGACY, &st);
    CUcontext popped;
    API(cuCtxPopCurrent_v2, &popped);
    if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
      violated("a capture outlived its streams", "%s: the legacy stream of context %p still sees a capturing blocking stream",
               when, static_cast<void*>(c));
  }
  CUdeviceptr p;
  CUresult r = API(cuMemAlloc_v2, &p, size_t{64});
  if (r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    violated("a capture outlived its streams", "%s: cuMemAlloc is refused as if a capture were active", when);
  // A context faulted meanwhile (a kernel still running) refuses the free.
  if (r == CUDA_SUCCESS && API(cuMemFree_v2, p) == CUDA_ERROR_ILLEGAL_ADDRESS) g_free_refused_by_fault = true;
}

template <class F>
void each(T t, F&& f) {
  std::vector<std::pair<void*, Obj>> v;
  {
    std::lock_guard<std::mutex> g(g_pool.mu);
    for (const Obj& o : g_pool.of(t))
      if (o.st != St::kDead && !o.aliased && o.h) v.emplace_back(o.h, o);
  }
  for (auto& [h, o] : v) f(h, o);
}

void destroy_everything() {
  g_free_refused_by_fault = false;
  each(T::kExec, [](void* h, const Obj&) { API(cuGraphExecDestroy, static_cast<CUgraphExec>(h)); });
  each(T::kGraph, [](void* h, const Obj& o) {
    if (o.parent == -1 && !o.capture_owned) API(cuGraphDestroy, static_cast<CUgraph>(h));
  });
  each(T::kEvent, [](void* h, const Obj& o) {
    if (!avoid("dead_ctx_objects") || o.st == St::kLive) API(cuEventDestroy_v2, static_cast<CUevent>(h));
  });
  each(T::kStream, [](void* h, const Obj&) { API(cuStreamDestroy_v2, static_cast<CUstream>(h)); });
  for (Thread& t : g_threads) {
    if (t.chk_stream) API(cuStreamDestroy_v2, t.chk_stream);
    t.chk_stream = nullptr;
    t.chk_dev = t.chk_pinned = t.chk_managed = -1;
  }
  static const bool keep_orphans = avoid("dead_ctx_objects");  // they may hold their dead context
  each(T::kArray, [](void* h, const Obj& o) {
    if (!keep_orphans || o.st == St::kLive) API(cuArrayDestroy, static_cast<CUarray>(h));
  });
  std::vector<Alloc> allocs;
  {
    std::lock_guard<std::mutex> g(g_pool.mu);
    allocs = g_pool.allocs;
  }
  for (const Alloc& a : allocs) {
    if (a.st != St::kLive) continue;
    // Free with the allocation's own context current: a free answers the
    // current context's sticky error (as the driver's does), and another
    // context may have faulted.
    void* own = nullptr;
    {
      std::lock_guard<std::mutex> g(g_pool.mu);
      const auto& ctxs = g_pool.of(T::kCtx);
      if (a.ctx >= 0 && static_cast<size_t>(a.ctx) < ctxs.size() && ctxs[a.ctx].st == St::kLive) own = ctxs[a.ctx].h;
    }
    if (own) API(cuCtxSetCurrent, static_cast<CUcontext>(own));
    CUresult res;
    switch (a.kind) {
      case Mem::kHost: res = API(cuMemFreeHost, reinterpret_cast<void*>(a.p)); break;
      case Mem::kRegistered: res = API(cuMemHostUnregister, reinterpret_cast<void*>(a.p)); break;
      default: res = API(cuMemFree_v2, static_cast<CUdeviceptr>(a.p)); break;
    }
    // A faulted context answers every call with its sticky error, frees
    // included (as the driver does); its memory goes when the context does.
    if (res == CUDA_ERROR_ILLEGAL_ADDRESS) g_free_refused_by_fault = true;
  }
  each(T::kMemPool, [](void* h, const Obj& o) {
    if (!o.is_default && o.thread >= 0) API(cuMemPoolDestroy, static_cast<CUmemoryPool>(h));
  });
  each(T::kCtx, [](void* h, const Obj& o) {
    if (!o.primary) API(cuCtxDestroy_v2, static_cast<CUcontext>(h));
  });
}

void restore_primaries() {
  static const int base[2] = {1, 0};
  for (int dev = 0; dev < 2; ++dev) {
    int refs = base[dev] + g_pool.primary_refs[dev];
    CUcontext c;
    for (; refs > base[dev]; --refs) API(cuDevicePrimaryCtxRelease_v2, dev);
    for (; refs < base[dev]; ++refs) check(API(cuDevicePrimaryCtxRetain, &c, dev), "retain primary");
    API(cuDevicePrimaryCtxSetFlags_v2, dev, 0u);
    CUmemoryPool p;
    if (API(cuDeviceGetDefaultMemPool, &p, dev) == CUDA_SUCCESS) API(cuDeviceSetMemPool, dev, p);
  }
  API(cuCtxSetCacheConfig, CU_FUNC_CACHE_PREFER_NONE);
  API(cuCtxSetFlags, 0u);
  for (int l = 0; l < CU_LIMIT_MAX; ++l) API(cuCtxSetLimit, as_enum<CUlimit>(l), size_t{0});
}

void begin_input() {
  g_pool.reset();
  g_gen.fetch_add(1);
  sem_reset();
  Obj p;
  p.h = g_primary;
  p.primary = true;
  p.thread = -1;
  g_pool.of(T::kCtx).push_back(p);
  check(API(cuMemHostRegister_v2, reinterpret_cast<void*>(sem_base()), kSemWords * 8, 0u), "register semaphores");
  // The input works in a context of its own (current on top of the
  // primary one), destroyed at its end with whatever state it got.
  CUcontext c;
  check(API(cuCtxCreate_v2, &c, 0u, 0), "input context");
  int i = g_pool.add(T::kCtx, c, -1);
  g_pool.of(T::kCtx)[i].shared = true;
  g_input_ctx = c;
}

void end_input() {
  set_thread(0);
  reset_stack();
  sem_release_all();
  end_captures();
  verify_no_capture("after ending every capture");
  if (sync_everything()) hostrec_check_all("at the end of the input");
  destroy_everything();
  reset_stack();
  restore_primaries();
  verify_no_capture("after destroying everything");
  // A fault may have left a primary context (of either device) with a
  // sticky error; its memory stays allocated until a reset, as on the
  // driver: start that device afresh.
  for (int dev = 0; dev < 2 && !avoid("primary_reset"); ++dev) {
    CUcontext c;
    if (API(cuDevicePrimaryCtxRetain, &c, dev) != CUDA_SUCCESS) continue;
    API(cuCtxSetCurrent, c);
    const bool faulted = API(cuCtxSynchronize) != CUDA_SUCCESS;
    API(cuDevicePrimaryCtxRelease_v2, dev);
    if (!faulted) continue;
    check(API(cuDevicePrimaryCtxReset_v2, dev), "reset primary");
    if (dev == 0) check(API(cuDevicePrimaryCtxRetain, &c, 0), "retain primary");
  }
  reset_stack();
  size_t free_b = 0, total = 0;
  if (API(cuMemGetInfo_v2, &free_b, &total) == CUDA_SUCCESS && free_b != total && !g_free_refused_by_fault)
    violated("device memory leaked across the input", "%zu bytes still allocated after everything was freed",
             total - free_b);
  API(cuMemHostUnregister, reinterpret_cast<void*>(sem_base()));
}

// ------------------------------------------------------------ two threads

struct Worker {
  std::mutex mu;
  std::condition_variable cv;
  const uint8_t* data = nullptr;
  size_t size = 0;
  bool go = false, done = false;
  std::thread th;
};
// Leaked: the workers wait for inputs until exit, and a condition variable
// destroyed under a waiter blocks the exit.
Worker* const g_workers = new Worker[2];

void worker_main(int i) {
  set_thread(i);
  Worker& w = g_workers[i];
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(w.mu);
      w.cv.wait(lk, [&] { return w.go; });
      w.go = false;
    }
    start_stack();
    Reader r(w.data, w.size);
    run_calls(r);
    // This thread's captures (its per-thread streams) end here.
    reset_stack();
    sem_release_all();
    end_captures();
    reset_stack();
    {
      std::lock_guard<std::mutex> lk(w.mu);
      w.done = true;
    }
    w.cv.notify_all();
  }
}

}  // namespace
}  // namespace fz

using namespace fz;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("CUCPU_DEVICES", "2", 0);
  if (const char* v = std::getenv("CUCPU_FUZZ_LIST")) {
    for (size_t i = 0; i < kFamilyCount; ++i) std::printf("%zu %s\n", i, kFamilies[i].name);
    std::exit(0);
  }
  if (const char* v = std::getenv("CUCPU_FUZZ_MAX_CALLS")) g_max_calls = static_cast<unsigned>(std::atoi(v));
  if (const char* v = std::getenv("CUCPU_FUZZ_DISABLE")) {
    std::string s = v;
    for (size_t i = 0; i < kFamilyCount; ++i) {
      std::string n = kFamilies[i].name;
      size_t pos = 0;
      while ((pos = s.find(n, pos)) != std::string::npos) {
        bool start = pos == 0 || s[pos - 1] == ',';
        bool end = pos + n.size() == s.size() || s[pos + n.size()] == ',';
        if (start && end) g_disabled[i] = true;
        pos += n.size();
      }
    }
  }
  const char* th = std::getenv("CUCPU_FUZZ_THREADS");
  g_pool.two_threads = th && std::atoi(th) == 2;
  for (Thread& t : g_threads) {
    for (auto& b : t.hostbuf) {
      b = static_cast<uint8_t*>(std::malloc(kHostBufSize));
      std::memset(b, 0, kHostBufSize);
    }
    t.chk_host = static_cast<uint8_t*>(std::malloc(8192));
    t.index = static_cast<int>(&t - g_threads);
  }
  sem_init();
  check(cuInit(0), "cuInit");
  check(cuDevicePrimaryCtxRetain(&g_primary, 0), "retain primary");
  check(cuCtxSetCurrent(g_primary), "set current");
  check(cuDeviceTotalMem_v2(&g_total_mem, 0), "total memory");
  warm_up();
  g_start = std::chrono::steady_clock::now();
  std::atexit(print_stats);
  if (g_pool.two_threads)
    for (int i = 0; i < 2; ++i) {
      g_workers[i].th = std::thread(worker_main, i);
      g_workers[i].th.detach();  // they wait for inputs until the process exits
    }
  std::fprintf(stderr, "cucpu-fuzz: %zu call families, %d thread(s), %u families per input at most\n", kFamilyCount,
               g_pool.two_threads ? 2 : 1, g_max_calls);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  g_inputs.fetch_add(1, std::memory_order_relaxed);
  begin_input();
  if (!g_pool.two_threads) {
    Reader r(data, size);
    run_calls(r);  // begin_input left the input's context current
  } else {
    const size_t half = size / 2;
    const uint8_t* parts[2] = {data, data + half};
    const size_t sizes[2] = {half, size - half};
    for (int i = 0; i < 2; ++i) {
      Worker& w = g_workers[i];
      std::lock_guard<std::mutex> lk(w.mu);
      w.data = parts[i];
      w.size = sizes[i];
      w.done = false;
      w.go = true;
      w.cv.notify_all();
    }
    for (int i = 0; i < 2; ++i) {
      Worker& w = g_workers[i];
      std::unique_lock<std::mutex> lk(w.mu);
      w.cv.wait(lk, [&] { return w.done; });
    }
  }
  end_input();
  return 0;
}
