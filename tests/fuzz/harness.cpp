// The harness core: reader, tracing and the handle pool.
#include "harness.h"

#include <cstdarg>
#include <cstdlib>
#include <string_view>

namespace fz {

// ---------------------------------------------------------------- Reader

uint64_t Reader::size() {
  switch (u8() % 16) {
    case 0: return 0;
    case 1: case 2: case 3: case 4: return 1 + u8();
    case 5: case 6: return 1 + u16() % 4096;
    case 7: return (1 + u8() % 64) * 4096ull;
    case 8: {
      unsigned k = u8() % 64;
      int d = static_cast<int>(u8() % 5) - 2;
      return (1ull << k) + static_cast<uint64_t>(static_cast<int64_t>(d));
    }
    case 9: return UINT64_MAX - u8() % 16;
    case 10: return (1ull << 63) + u8() % 16 - 8;
    case 11: return (1ull << 32) + u8() % 16 - 8;
    case 12: return u64();
    case 13: return UINT64_MAX / (1 + u8() % 16) + u8() % 3;  // products of two of these wrap
    case 14: return u16();
    default: return u8() % 16;
  }
}

unsigned Reader::count(unsigned max) {
  unsigned v = u8();
  unsigned c = v < 200 ? v % 5 : v % (max + 1);
  return c > max ? max : c;
}

int Reader::enum_of(std::initializer_list<int> valid) {
  uint8_t b = u8();
  if (b < 224 && valid.size()) return valid.begin()[b % valid.size()];
  switch (b % 8) {
    case 0: return -1;
    case 1: return 0x7fffffff;
    case 2: return INT32_MIN;
    case 3: return 999;
    case 4: return valid.size() ? valid.end()[-1] + 1 : 1;
    case 5: return 0;
    case 6: return 256;
    default: return static_cast<int>(u32());
  }
}

int Reader::enum_range(int lo, int hi) {
  uint8_t b = u8();
  if (b < 224) return lo + static_cast<int>(u16() % static_cast<unsigned>(hi - lo + 1));
  switch (b % 6) {
    case 0: return lo - 1;
    case 1: return hi + 1;
    case 2: return 0x7fffffff;
    case 3: return INT32_MIN;
    case 4: return -1;
    default: return static_cast<int>(u32());
  }
}

uint32_t Reader::flags(uint32_t known) {
  uint8_t b = u8();
  if (b < 140) return u32() & known;
  if (b < 200) return 0;
  if (b < 240) return 1u << (u8() % 32);
  return u32();
}

// ---------------------------------------------------------------- tracing

std::atomic<uint64_t> g_calls{0};
thread_local int t_index = 0;
thread_local bool t_input_thread = false;  // one of the two-thread mode's input threads
int thread_index() { return t_index; }

bool tracing() {
  static const bool on = [] {
    const char* v = std::getenv("CUCPU_FUZZ_TRACE");
    return v && *v && *v != '0';
  }();
  return on;
}

bool avoid(const char* what) {
  static const std::string list = [] {
    const char* v = std::getenv("CUCPU_FUZZ_AVOID");
    return std::string(",") + (v ? v : "") + ",";
  }();
  return list.find(std::string(",") + what + ",") != std::string::npos;
}

void count_call() { g_calls.fetch_add(1, std::memory_order_relaxed); }

void trace_line(const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "cucpu-fuzz[t%d] %s\n", t_index, buf);
}

// Names a pointer the pool knows: allocation, host buffer, semaphore word.
static std::string describe_ptr(uintptr_t p) {
  if (!p) return "";
  char b[64];
  for (size_t i = 0; i < g_pool.allocs.size(); ++i) {
    const Alloc& a = g_pool.allocs[i];
    if (p >= a.p && p - a.p < (a.size ? a.size : 1) + 64) {
      std::snprintf(b, sizeof b, " [a%zu%s+%llu]", i, a.st == St::kLive ? "" : " freed",
                    static_cast<unsigned long long>(p - a.p));
      return b;
    }
  }
  for (int t = 0; t < 2; ++t)
    for (size_t k = 0; k < kHostBufs; ++k) {
      auto base = reinterpret_cast<uintptr_t>(g_threads[t].hostbuf[k]);
      if (base && p >= base && p - base < kHostBufSize + 64) {
        std::snprintf(b, sizeof b, " [hb%d.%zu+%llu]", t, k, static_cast<unsigned long long>(p - base));
        return b;
      }
    }
  uintptr_t s = sem_base();
  if (s && p >= s && p - s < kSemWords * 8) {
    std::snprintf(b, sizeof b, " [sem+%llu]", static_cast<unsigned long long>(p - s));
    return b;
  }
  for (int t = 0; t < static_cast<int>(T::kCount); ++t) {
    const auto& v = g_pool.objs[t];
    for (size_t i = 0; i < v.size(); ++i)
      if (reinterpret_cast<uintptr_t>(v[i].h) == p) {
        std::snprintf(b, sizeof b, " [%s%zu%s]", type_name(static_cast<T>(t)), i,
                      v[i].st == St::kLive ? "" : v[i].st == St::kDead ? " dead" : " orphan");
        return b;
      }
  }
  return "";
}

void trace_arg(std::string& out, const void* p) {
  char b[32];
  std::snprintf(b, sizeof b, "%p", p);
  out += b;
  out += describe_ptr(reinterpret_cast<uintptr_t>(p));
}
void trace_arg(std::string& out, unsigned long long v) {
  char b[32];
  std::snprintf(b, sizeof b, v > 0xffff ? "0x%llx" : "%llu", v);
  out += b;
  if (v > 0xffff) out += describe_ptr(static_cast<uintptr_t>(v));
}
void trace_arg(std::string& out, long long v) {
  char b[32];
  std::snprintf(b, sizeof b, "%lld", v);
  out += b;
}

void trace_call(const char* name, std::string& args) {
  trace_line("#%llu %s%s)", static_cast<unsigned long long>(g_calls.load() + 1), name, args.c_str());
}

void trace_result(CUresult r) {
  const char* rn = nullptr;
  cuGetErrorName(r, &rn);  // not counted: the tracer's own
  trace_line("   = %s", rn ? rn : "?");
}

static std::string num(unsigned long long v) {
  char b[64];
  std::snprintf(b, sizeof b, v > 0xffff ? "%#llx" : "%llu", v);
  return b + (v > 0xffff ? describe_ptr(static_cast<uintptr_t>(v)) : std::string());
}

void trace_memcpy3d(const CUDA_MEMCPY3D& q) {
  if (!tracing()) return;
  trace_line("  copy: src type %d host %s dev %s array %p x %s y %s z %s pitch %s height %s", raw(q.srcMemoryType),
             num(reinterpret_cast<uintptr_t>(q.srcHost)).c_str(), num(q.srcDevice).c_str(), static_cast<void*>(q.srcArray),
             num(q.srcXInBytes).c_str(), num(q.srcY).c_str(), num(q.srcZ).c_str(), num(q.srcPitch).c_str(),
             num(q.srcHeight).c_str());
  trace_line("        dst type %d host %s dev %s array %p x %s y %s z %s pitch %s height %s", raw(q.dstMemoryType),
             num(reinterpret_cast<uintptr_t>(q.dstHost)).c_str(), num(q.dstDevice).c_str(), static_cast<void*>(q.dstArray),
             num(q.dstXInBytes).c_str(), num(q.dstY).c_str(), num(q.dstZ).c_str(), num(q.dstPitch).c_str(),
             num(q.dstHeight).c_str());
  trace_line("        extent %s x %s x %s", num(q.WidthInBytes).c_str(), num(q.Height).c_str(), num(q.Depth).c_str());
}

void trace_batch3d(const CUDA_MEMCPY3D_BATCH_OP* ops, size_t n) {
  if (!tracing() || !ops) return;
  for (size_t i = 0; i < n; ++i) {
    const auto& o = ops[i];
    for (int k = 0; k < 2; ++k) {
      const CUmemcpy3DOperand& x = k ? o.dst : o.src;
      if (raw(x.type) == CU_MEMCPY_OPERAND_TYPE_ARRAY)
        trace_line("  op %zu %s: array %p offset %s %s %s", i, k ? "dst" : "src", static_cast<void*>(x.op.array.array),
                   num(x.op.array.offset.x).c_str(), num(x.op.array.offset.y).c_str(), num(x.op.array.offset.z).c_str());
      else
        trace_line("  op %zu %s: type %d ptr %s rowLength %s layerHeight %s", i, k ? "dst" : "src", raw(x.type),
                   num(x.op.ptr.ptr).c_str(), num(x.op.ptr.rowLength).c_str(), num(x.op.ptr.layerHeight).c_str());
    }
    trace_line("  op %zu: extent %s x %s x %s order %d flags %u", i, num(o.extent.width).c_str(),
               num(o.extent.height).c_str(), num(o.extent.depth).c_str(), raw(o.srcAccessOrder), o.flags);
  }
}

void trace_memop(const CUstreamBatchMemOpParams* ops, size_t n) {
  if (!tracing() || !ops) return;
  for (size_t i = 0; i < n; ++i)
    trace_line("  memop %zu: op %d addr %s value %s flags %#x", i, raw(ops[i].operation),
               num(ops[i].waitValue.address).c_str(), num(ops[i].waitValue.value64).c_str(), ops[i].waitValue.flags);
}

void violated(const char* what, const char* fmt, ...) {
  char buf[1024] = "";
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
  }
  std::fprintf(stderr, "\n==cucpu-fuzz== INVARIANT VIOLATED: %s%s%s\n", what, *buf ? ": " : "", buf);
  std::fflush(stderr);
  std::abort();
}

// ---------------------------------------------------------------- pool

Pool g_pool;
Thread g_threads[2];
thread_local Thread* t_thread = &g_threads[0];
Thread& me() { return *t_thread; }
void set_thread(int i) {
  t_thread = &g_threads[i];
  t_index = i;
  t_input_thread = true;
}

namespace {
std::shared_mutex g_teardown;

// Calls that end an object's life (a context, a stream, an event, a graph,
// a module, memory...): CUDA's contract leaves it to the caller that no
// other call uses the object meanwhile, so the two input threads never
// overlap them with any other call.
bool ends_a_life(const char* name) {
  static const char* const kWords[] = {"Destroy", "Unload", "Free", "Release", "Unregister", "Unmap", "Reset"};
  // string_view's find, not strstr: libFuzzer hooks strstr, and its hook's
  // table is not for two threads.
  const std::string_view n(name);
  for (const char* w : kWords)
    if (n.find(w) != std::string_view::npos) return true;
  return false;
}

thread_local bool t_holds_teardown = false;  // this input thread holds g_teardown exclusively
}  // namespace

TeardownGuard::TeardownGuard(const char* name) {
  if (!g_pool.two_threads || !t_input_thread || t_holds_teardown) return;
  if (!ends_a_life(name)) {
    g_teardown.lock_shared();
    held_ = Held::kShared;
    return;
  }
  lock_exclusive();
}

TeardownGuard::TeardownGuard(Exclusive) {
  if (g_pool.two_threads && t_input_thread && !t_holds_teardown) lock_exclusive();
}

void TeardownGuard::lock_exclusive() {
  sem_release_all();  // the other thread's call may wait on this thread's gate
  g_teardown.lock();
  sem_release_all();  // gates the other thread set while this one waited
  held_ = Held::kExclusive;
  t_holds_teardown = true;
}

TeardownGuard::~TeardownGuard() {
  if (held_ == Held::kShared) g_teardown.unlock_shared();
  else if (held_ == Held::kExclusive) {
    t_holds_teardown = false;
    g_teardown.unlock();
  }
}

const char* type_name(T t) {
  static const char* n[] = {"ctx", "stream", "event", "graph", "node", "exec", "array", "mempool"};
  return n[static_cast<int>(t)];
}

void Pool::reset() {
  for (auto& v : objs) v.clear();
  allocs.clear();
  sem.assign(kSemWords, SemWord{});
  nrecs = 0;
  primary_refs[0] = primary_refs[1] = 0;
}

int Pool::find(T t, const void* h) {
  auto& v = of(t);
  for (size_t i = v.size(); i-- > 0;)
    if (v[i].h == h && !v[i].aliased) return static_cast<int>(i);
  return -1;
}

int Pool::add(T t, void* h, int ctx, int parent) {
  std::lock_guard<std::mutex> g(mu);
  auto& v = of(t);
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].h != h || v[i].aliased) continue;
    if (v[i].st == St::kLive && !v[i].capture_owned && v[i].thread >= 0)
      violated("a new handle equals a live one", "%s %p (pool entry %zu, created live and not destroyed)",
               type_name(t), h, i);
    v[i].aliased = true;  // a stale handle got reused: no longer a stale handle
  }
  Obj o;
  o.h = h;
  o.ctx = ctx;
  o.parent = parent;
  o.thread = t_index;
  v.push_back(o);
  if (tracing()) trace_line("  => %s%zu = %p", type_name(t), v.size() - 1, h);
  return static_cast<int>(v.size() - 1);
}

int Pool::learn(T t, void* h, int parent, bool capture_owned) {
  if (!h) return -1;
  std::lock_guard<std::mutex> g(mu);
  auto& v = of(t);
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].h == h && !v[i].aliased) {
      if (v[i].st == St::kLive) return static_cast<int>(i);
      v[i].aliased = true;
    }
  Obj o;
  o.h = h;
  o.parent = parent;
  o.thread = -1 - t_index;  // learned, not created: no part of the new-handle check
  o.capture_owned = capture_owned;
  if (parent >= 0 && t == T::kNode && static_cast<size_t>(parent) < of(T::kGraph).size()) {
    o.ctx = of(T::kGraph)[parent].ctx;
    o.capture_owned = o.capture_owned || of(T::kGraph)[parent].capture_owned;
  }
  v.push_back(o);
  if (tracing()) trace_line("  => learned %s%zu = %p", type_name(t), v.size() - 1, h);
  return static_cast<int>(v.size() - 1);
}

static int owner_thread(const Obj& o) { return o.thread >= 0 ? o.thread : -1 - o.thread; }

static void mark(Pool& p, T t, int i, St st) {
  auto& v = p.of(t);
  if (i < 0 || static_cast<size_t>(i) >= v.size()) return;
  if (v[i].st == St::kDead || v[i].st == st) return;
  v[i].st = st;
  if (t == T::kGraph) {
    auto& nodes = p.of(T::kNode);
    for (size_t k = 0; k < nodes.size(); ++k)
      if (nodes[k].parent == i) mark(p, T::kNode, static_cast<int>(k), st);
  } else if (t == T::kNode) {
    auto& graphs = p.of(T::kGraph);
    for (size_t k = 0; k < graphs.size(); ++k)
      if (graphs[k].parent == i) mark(p, T::kGraph, static_cast<int>(k), st);
  }
}

void Pool::kill(T t, int i) {
  std::lock_guard<std::mutex> g(mu);
  mark(*this, t, i, St::kDead);
}

bool Pool::dying(T t, int i) {
  if (i < 0) return false;
  std::lock_guard<std::mutex> g(mu);
  if (of(t)[i].st != St::kLive) return false;
  of(t)[i].st = St::kDead;
  return true;
}

void Pool::destroyed(T t, int i, bool ok, bool marked) {
  if (i < 0) return;
  std::lock_guard<std::mutex> g(mu);
  Obj& o = of(t)[i];
  if (!ok) {
    if (marked && !o.aliased && o.st == St::kDead) o.st = St::kLive;
    return;
  }
  o.st = St::kLive;  // so that mark() cascades
  mark(*this, t, i, St::kDead);
}

void Pool::orphan(T t, int i) {
  std::lock_guard<std::mutex> g(mu);
  mark(*this, t, i, St::kOrphan);
}

void Pool::ctx_torn_down(int ctx, bool destroyed) {
  if (ctx < 0) return;
  std::lock_guard<std::mutex> g(mu);
  for (auto& s : of(T::kStream))
    if (s.ctx == ctx && s.st == St::kLive) s.st = St::kDead;  // the context kills its streams
  for (T t : {T::kEvent, T::kGraph, T::kExec, T::kArray})
    for (size_t i = 0; i < of(t).size(); ++i)
      if (of(t)[i].ctx == ctx) mark(*this, t, static_cast<int>(i), St::kOrphan);
  // Captures of the context's streams ended (or should have): their graphs may be gone.
  for (size_t i = 0; i < of(T::kGraph).size(); ++i)
    if (of(T::kGraph)[i].capture_owned) mark(*this, T::kGraph, static_cast<int>(i), St::kOrphan);
  for (auto& n : of(T::kNode))
    if (n.capture_owned && n.st == St::kLive) n.st = St::kOrphan;
  for (auto& a : allocs)
    if (a.ctx == ctx && a.st == St::kLive) a.st = St::kDead;  // freed (registrations: ended) with it
  if (destroyed) of(T::kCtx)[ctx].st = St::kDead;
  Thread& t = me();  // (the other thread's private stream is in a context of its own or a shared one)
  if (t.chk_stream && t.chk_stream_ctx == ctx) t.chk_stream = nullptr;
}

int Pool::add_alloc(const Alloc& a) {
  std::lock_guard<std::mutex> g(mu);
  for (size_t i = 0; i < allocs.size(); ++i) {
    Alloc& o = allocs[i];
    bool overlap = a.p < o.p + (o.size ? o.size : 1) && o.p < a.p + (a.size ? a.size : 1);
    if (!overlap) continue;
    if (o.st == St::kLive) {
      if (a.kind == Mem::kRegistered && o.kind == Mem::kRegistered)
        violated("cuMemHostRegister accepted a range that overlaps a registered one",
                 "new [%#llx, +%zu) overlaps a%zu [%#llx, +%zu)", static_cast<unsigned long long>(a.p), a.size, i,
                 static_cast<unsigned long long>(o.p), o.size);
      violated("a new allocation overlaps a live one", "new [%#llx, +%zu) overlaps a%zu [%#llx, +%zu)",
               static_cast<unsigned long long>(a.p), a.size, i, static_cast<unsigned long long>(o.p), o.size);
    }
    o.st = St::kDead;
    o.hostbuf = -2;  // its range is someone else's now: not a freed pointer any more
  }
  allocs.push_back(a);
  allocs.back().thread = t_index;
  if (tracing())
    trace_line("  => a%zu = [%#llx, +%zu)", allocs.size() - 1, static_cast<unsigned long long>(a.p), a.size);
  return static_cast<int>(allocs.size() - 1);
}

int Pool::find_alloc(uintptr_t p) {
  for (size_t i = 0; i < allocs.size(); ++i) {
    const Alloc& a = allocs[i];
    if (a.st == St::kLive && p >= a.p && p - a.p < a.size) return static_cast<int>(i);
  }
  return -1;
}

void* forged(Reader& r, void* near) {
  auto n = reinterpret_cast<uintptr_t>(near);
  switch (r.u8() % 8) {
    case 0: return reinterpret_cast<void*>(uintptr_t{0x1234560});
    case 1: if (n) return reinterpret_cast<void*>(n + 1); break;
    case 2: if (n) return reinterpret_cast<void*>(n + 8); break;
    case 3: return reinterpret_cast<void*>(uintptr_t{3} + r.u8() % 13);
    case 4: return &g_pool;  // memory the library does not own
    case 5: return reinterpret_cast<void*>(~uintptr_t{0});
    case 6: return reinterpret_cast<void*>(uintptr_t{1} << 63);
    default: if (n) return reinterpret_cast<void*>(n + 24); break;
  }
  return reinterpret_cast<void*>(uintptr_t{0xdead0000} + (r.u8() << 4));
}

static bool graph_family(T t) { return t == T::kGraph || t == T::kNode || t == T::kExec; }

// Whether this thread may use entry o (the 2-thread mode keeps graph
// objects with the thread that made them: graphs are not thread-safe).
// User contexts and what lives in them stay with their thread too (using a
// context while another thread destroys it is the application's race).
static bool mine(Pool& p, T t, const Obj& o) {
  if (!p.two_threads) return true;
  if (graph_family(t) || (t == T::kCtx && !o.primary && !o.shared)) return owner_thread(o) == t_index;
  if (o.ctx >= 0 && static_cast<size_t>(o.ctx) < p.of(T::kCtx).size()) {
    const Obj& c = p.of(T::kCtx)[o.ctx];
    if (!c.primary && !c.shared) return owner_thread(c) == t_index;
  }
  return true;
}

void* Pool::pick(Reader& r, T t, int* idx, bool allow_null) {
  uint8_t b = r.u8() % 16;
  uint8_t k = r.u8();
  static const bool no_orphans = avoid("dead_ctx_objects");
  if (b == 12 && no_orphans) b = 10;
  std::lock_guard<std::mutex> g(mu);
  auto& v = of(t);
  int cats[4] = {b < 10 ? 0 : b < 12 ? 1 : b < 13 ? 2 : 3, 0, 1, 3};
  if (b == 15 && allow_null) {
    if (idx) *idx = -1;
    return nullptr;
  }
  for (int c : cats) {
    if (c == 3) break;
    St want = c == 0 ? St::kLive : c == 1 ? St::kDead : St::kOrphan;
    int n = 0;
    for (const Obj& o : v) n += o.st == want && !o.aliased && mine(*this, t, o);
    if (!n) continue;
    int pick_n = k % n;
    for (size_t i = 0; i < v.size(); ++i) {
      const Obj& o = v[i];
      if (o.st != want || o.aliased || !mine(*this, t, o)) continue;
      if (pick_n-- == 0) {
        if (idx) *idx = static_cast<int>(i);
        return o.h;
      }
    }
  }
  if (idx) *idx = -1;
  void* near = nullptr;
  for (const Obj& o : v)
    if (o.h) near = o.h;
  return forged(r, near);
}

int Pool::pick_live(Reader& r, T t, bool destroyable) {
  uint8_t k = r.u8();
  std::lock_guard<std::mutex> g(mu);
  auto& v = of(t);
  std::vector<int> c;
  for (size_t i = 0; i < v.size(); ++i) {
    const Obj& o = v[i];
    if (o.st != St::kLive || o.aliased || !mine(*this, t, o)) continue;
    if (destroyable) {
      if (o.capture_owned || o.primary || (o.shared && two_threads)) continue;
      if (t == T::kGraph && o.parent >= 0) continue;  // a child graph node's graph
      if (t == T::kNode && o.parent >= 0 && of(T::kGraph)[o.parent].capture_owned) continue;
      if (t == T::kNode && o.parent < 0) continue;  // graph unknown: maybe a capture's
    }
    c.push_back(static_cast<int>(i));
  }
  return c.empty() ? -1 : c[k % c.size()];
}

CUstream Pool::pick_stream(Reader& r, int* idx) {
  if (idx) *idx = -1;
  switch (r.u8() % 16) {
    case 0: return nullptr;
    case 1: return CU_STREAM_LEGACY;
    case 2: return CU_STREAM_PER_THREAD;
    default: return static_cast<CUstream>(pick(r, T::kStream, idx, false));
  }
}

int Pool::current_ctx_index() {
  CUcontext c = nullptr;
  if (API(cuCtxGetCurrent, &c) != CUDA_SUCCESS || !c) return -1;
  std::lock_guard<std::mutex> g(mu);
  return find(T::kCtx, c);
}

}  // namespace fz
