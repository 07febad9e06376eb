// The harness core: reader, tracing, the handle pool, memory picks,
// semaphore words, host-function records, copy legalization.
#include "harness.h"

#include <cstdarg>
#include <cstdlib>

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
    if (a.ctx == ctx && a.st == St::kLive && a.kind != Mem::kRegistered) a.st = St::kDead;  // freed with it
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

// ---------------------------------------------------------------- memory

size_t g_total_mem = 0;

uint64_t alloc_size(Reader& r) {
  uint64_t v = r.size();
  if (v > kMaxRealAlloc && v <= g_total_mem + (1u << 20)) v %= kMaxRealAlloc;
  return v;
}

MemRef host_buffer(Reader& r, size_t n) {
  MemRef m;
  m.src = MemRef::kHostBuf;
  unsigned k = r.below(kHostBufs);
  size_t room = kHostBufSize > n ? kHostBufSize - n : 0;
  size_t off = room ? (r.one_in(2) ? 0 : r.u32() % (room + 1)) : 0;
  m.p = reinterpret_cast<uintptr_t>(me().hostbuf[k]) + off;
  m.avail = kHostBufSize - off;
  return m;
}

static bool usable_by_me(Pool& p, const Alloc& a) {
  return !p.two_threads || a.thread == t_index;
}

MemRef pick_mem(Reader& r, Use use) {
  uint8_t b = r.u8() % 16;
  uint8_t k = r.u8();
  MemRef m;
  if (use == Use::kHost || (use == Use::kUnified && b >= 10) || (use == Use::kValidated && (b == 8 || b == 9))) {
    m = host_buffer(r, 1);
  } else if (use == Use::kValidated && b >= 10) {
    switch (b) {
      case 10: case 11: {  // freed
        std::lock_guard<std::mutex> g(g_pool.mu);
        std::vector<int> c;
        for (size_t i = 0; i < g_pool.allocs.size(); ++i)
          if (g_pool.allocs[i].st != St::kLive && g_pool.allocs[i].hostbuf != -2) c.push_back(static_cast<int>(i));
        if (!c.empty()) {
          int i = c[k % c.size()];
          m.src = MemRef::kFreed;
          m.alloc = i;
          m.p = g_pool.allocs[i].p;
          break;
        }
      }
        [[fallthrough]];
      case 12: case 13:
        m.src = MemRef::kForged;
        m.p = reinterpret_cast<uintptr_t>(forged(r, nullptr));
        break;
      case 14:
        m.src = MemRef::kNull;
        break;
      default:
        m.src = MemRef::kForged;
        m.p = r.u64();
        break;
    }
  }
  if (m.src == MemRef::kNull && b < 8) {
    // A live allocation (not the harness's private ones).
    std::lock_guard<std::mutex> g(g_pool.mu);
    std::vector<int> c;
    for (size_t i = 0; i < g_pool.allocs.size(); ++i) {
      const Alloc& a = g_pool.allocs[i];
      if (a.st == St::kLive && !a.priv && usable_by_me(g_pool, a)) c.push_back(static_cast<int>(i));
    }
    if (c.empty()) {
      if (use == Use::kValidated) {
        m.src = MemRef::kForged;
        m.p = reinterpret_cast<uintptr_t>(forged(r, nullptr));
        return m;
      }
      return host_buffer(r, 1);
    }
    int i = c[k % c.size()];
    const Alloc& a = g_pool.allocs[i];
    if (a.kind == Mem::kRegistered && use != Use::kValidated) {
      // Registered memory is the harness's host buffer: its bounds are the buffer's.
      m.src = MemRef::kHostBuf;
      m.p = a.p;
      auto base = reinterpret_cast<uintptr_t>(me().hostbuf[a.hostbuf >= 0 ? a.hostbuf : 0]);
      bool in_mine = a.hostbuf >= 0 && a.p >= base && a.p < base + kHostBufSize;
      if (!in_mine) return host_buffer(r, 1);
      m.avail = base + kHostBufSize - a.p;
    } else {
      m.src = MemRef::kAlloc;
      m.alloc = i;
      m.p = a.p;
      m.avail = a.size;
      m.tracked = true;
    }
  }
  if (m.src == MemRef::kNull) return m;
  // The offset.
  if (m.src == MemRef::kAlloc || m.src == MemRef::kHostBuf) {
    uint64_t off = 0;
    uint8_t o = r.u8() % 8;
    if (use == Use::kValidated) {
      switch (o) {
        case 0: case 1: case 2: case 3: off = 0; break;
        case 4: off = m.avail ? r.u16() % m.avail : 0; break;
        case 5: off = m.avail; break;
        case 6: off = m.avail - (r.u8() % 16 < m.avail ? r.u8() % 16 : 0); break;
        default: off = r.size(); break;
      }
    } else if (o >= 5 && m.avail > 1) {
      off = r.u32() % m.avail;  // stays inside
    }
    m.p += off;
    m.avail = off <= m.avail ? m.avail - off : 0;
  }
  return m;
}

// ------------------------------------------------------------ semaphores

static uint64_t* g_sem = nullptr;
static std::atomic<unsigned> g_sem_next{0};

uintptr_t sem_base() { return reinterpret_cast<uintptr_t>(g_sem); }

void sem_init() {
  g_sem = static_cast<uint64_t*>(std::aligned_alloc(64, kSemWords * 8));
  std::memset(g_sem, 0, kSemWords * 8);
}
void sem_reset() {
  std::memset(g_sem, 0, kSemWords * 8);
  g_sem_next = 0;
}

uintptr_t sem_claim(bool wide, unsigned cond, uint64_t* value) {
  std::lock_guard<std::mutex> g(g_pool.mu);
  unsigned i = g_sem_next.load();
  const uint64_t ones = wide ? ~uint64_t{0} : 0xffffffffu;
  if (i >= kSemWords) {
    // Out of words: wait on word 0, which holds its release value by now.
    SemWord& w = g_pool.sem[0];
    __atomic_store_n(&g_sem[0], w.release_value, __ATOMIC_RELEASE);
    *value = w.release_value & ones;
    return reinterpret_cast<uintptr_t>(&g_sem[0]);
  }
  g_sem_next = i + 1;
  SemWord& w = g_pool.sem[i];
  w.claimed = true;
  w.wide = wide;
  *value &= ones;
  switch (cond) {
    case CU_STREAM_WAIT_VALUE_AND:
      if (*value == 0) *value = 1;
      w.release_value = *value;
      break;
    case CU_STREAM_WAIT_VALUE_NOR:
      if (*value == ones) *value ^= 1;
      // Start unsatisfied: all ones; released by 0.
      if (wide) __atomic_store_n(&g_sem[i], ones, __ATOMIC_RELEASE);
      else __atomic_store_n(reinterpret_cast<uint32_t*>(&g_sem[i]), 0xffffffffu, __ATOMIC_RELEASE);
      w.release_value = 0;
      break;
    default:  // GEQ, EQ (and any flags the library refuses)
      w.release_value = *value;
      break;
  }
  return reinterpret_cast<uintptr_t>(&g_sem[i]);
}

static void release_word(unsigned i) {
  SemWord& w = g_pool.sem[i];
  if (!w.claimed) return;
  if (w.wide) __atomic_store_n(&g_sem[i], w.release_value, __ATOMIC_RELEASE);
  else __atomic_store_n(reinterpret_cast<uint32_t*>(&g_sem[i]), static_cast<uint32_t>(w.release_value), __ATOMIC_RELEASE);
  w.released = true;
}

void sem_release_all() {
  std::lock_guard<std::mutex> g(g_pool.mu);
  unsigned n = std::min<unsigned>(g_sem_next.load(), kSemWords);
  for (unsigned i = 0; i < n; ++i) release_word(i);
}

void sem_release_one(Reader& r) {
  std::lock_guard<std::mutex> g(g_pool.mu);
  unsigned n = std::min<unsigned>(g_sem_next.load(), kSemWords);
  if (!n) return;
  unsigned i = r.u16() % n;
  if (tracing()) trace_line("  release sem word %u", i);
  release_word(i);
}

bool sem_release_value(uintptr_t addr, uint64_t* v) {
  uintptr_t b = sem_base();
  if (addr < b || addr >= b + kSemWords * 8 || (addr - b) % 8) return false;
  std::lock_guard<std::mutex> g(g_pool.mu);
  const SemWord& w = g_pool.sem[(addr - b) / 8];
  if (!w.claimed) return false;
  *v = w.release_value;
  return true;
}

// -------------------------------------------------------- host functions

constexpr int kMaxRecs = 1 << 16;
static HostRec g_recs[kMaxRecs];
static std::atomic<bool> g_rec_graph[kMaxRecs];  // used in a graph (node, capture or exec setter)
std::atomic<uint64_t> g_gen{1};

void* hostrec_data(int rec) {
  uint64_t v = (g_gen.load() << 20) | static_cast<uint64_t>(rec);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(v * 16 + 8));
}

static int decode(void* data, uint64_t* gen) {
  auto x = reinterpret_cast<uintptr_t>(data);
  if (x < 8 || (x - 8) % 16) return -1;
  uint64_t v = (x - 8) / 16;
  *gen = v >> 20;
  return static_cast<int>(v & ((1u << 20) - 1));
}

int hostrec_of(void* data) {
  uint64_t gen;
  int i = decode(data, &gen);
  if (i < 0 || gen != g_gen.load() || i >= g_pool.nrecs) return -1;
  return i;
}

int hostrec_new() {
  std::lock_guard<std::mutex> g(g_pool.mu);
  if (g_pool.nrecs >= kMaxRecs) return -1;
  int i = g_pool.nrecs++;
  g_recs[i].max_runs = 0;
  g_recs[i].min_runs = 0;
  g_recs[i].ran = 0;
  g_recs[i].lenient = false;
  g_rec_graph[i] = false;
  return i;
}

static void ran(void* data, const char* how) {
  uint64_t gen;
  int i = decode(data, &gen);
  if (i < 0) violated("a host function ran with userData the harness never passed", "%s data=%p", how, data);
  if (gen != g_gen.load())
    violated("a host function enqueued by an earlier input ran", "%s record %d of generation %llu (now %llu)", how,
             i, static_cast<unsigned long long>(gen), static_cast<unsigned long long>(g_gen.load()));
  HostRec& r = g_recs[i];
  int64_t n = r.ran.fetch_add(1) + 1;
  if (n > r.max_runs.load() && !r.lenient.load())
    violated("a host function ran more often than it was enqueued", "%s record %d ran %lld times, enqueued %lld",
             how, i, static_cast<long long>(n), static_cast<long long>(r.max_runs.load()));
}

void CUDA_CB hostfn(void* data) { ran(data, "host function"); }
void CUDA_CB callback(CUstream, CUresult, void* data) { ran(data, "stream callback"); }

void hostrec_expect(int rec, int n, bool certain) {
  if (rec < 0) return;
  g_recs[rec].max_runs += n;
  if (certain) g_recs[rec].min_runs += n;
}
void hostrec_unexpect(int rec, int n, bool certain) {
  if (rec < 0) return;
  g_recs[rec].max_runs -= n;
  if (certain) g_recs[rec].min_runs -= n;
}
void hostrec_make_lenient(int rec) {
  if (rec >= 0) g_recs[rec].lenient = true;
}
void hostrec_in_graph(int rec) {
  if (rec >= 0) g_rec_graph[rec] = true;
}
// An exec whose contents are unknown ran: any record ever in a graph may have run.
void hostrec_unknown_launch() {
  for (int i = 0; i < g_pool.nrecs; ++i)
    if (g_rec_graph[i]) g_recs[i].lenient = true;
}

void hostrec_check_all(const char* when) {
  for (int i = 0; i < g_pool.nrecs; ++i) {
    const HostRec& r = g_recs[i];
    if (r.lenient) continue;
    int64_t n = r.ran.load(), lo = r.min_runs.load(), hi = r.max_runs.load();
    if (n < lo || n > hi)
      violated("a host function that was enqueued did not run exactly once per enqueue",
               "record %d ran %lld times, enqueued %lld (%lld outside capture for certain), checked %s", i,
               static_cast<long long>(n), static_cast<long long>(hi), static_cast<long long>(lo), when);
  }
}

// --------------------------------------------------------------- helpers

bool sync_everything() {
  sem_release_all();
  std::vector<CUcontext> ctxs;
  {
    std::lock_guard<std::mutex> g(g_pool.mu);
    for (const Obj& o : g_pool.of(T::kCtx))
      if (o.st == St::kLive) ctxs.push_back(static_cast<CUcontext>(o.h));
  }
  bool ok = true;
  for (CUcontext c : ctxs) {
    if (API(cuCtxPushCurrent_v2, c) != CUDA_SUCCESS) {
      ok = false;
      continue;
    }
    CUresult r = API(cuCtxSynchronize);
    if (r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED || r == CUDA_ERROR_INVALID_CONTEXT ||
        r == CUDA_ERROR_CONTEXT_IS_DESTROYED || r == CUDA_ERROR_NOT_PERMITTED)
      ok = false;
    CUcontext popped;
    API(cuCtxPopCurrent_v2, &popped);
  }
  return ok;
}

int capture_status(CUstream s, bool per_thread) {
  CUstreamCaptureStatus st;
  CUresult r = per_thread ? API(cuStreamIsCapturing_ptsz, s, &st) : API(cuStreamIsCapturing, s, &st);
  if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) return 3;
  if (r != CUDA_SUCCESS) return -1;
  int v;
  std::memcpy(&v, &st, sizeof v);
  return v;
}

static bool snapshot_graph(CUgraph g, std::vector<std::pair<void*, int>>* out, int depth) {
  if (depth > 8) return false;
  size_t n = 0;
  if (API(cuGraphGetNodes, g, static_cast<CUgraphNode*>(nullptr), &n) != CUDA_SUCCESS) return false;
  if (n > 100000) return false;
  std::vector<CUgraphNode> nodes(n);
  if (n && API(cuGraphGetNodes, g, nodes.data(), &n) != CUDA_SUCCESS) return false;
  for (CUgraphNode node : nodes) {
    CUgraphNodeType t;
    if (API(cuGraphNodeGetType, node, &t) != CUDA_SUCCESS) return false;
    int type;
    std::memcpy(&type, &t, sizeof type);
    if (type == CU_GRAPH_NODE_TYPE_HOST) {
      CUDA_HOST_NODE_PARAMS p{};
      if (API(cuGraphHostNodeGetParams, node, &p) != CUDA_SUCCESS) return false;
      int rec = hostrec_of(p.userData);
      if (p.fn != hostfn || rec < 0) return false;
      out->emplace_back(node, rec);
    } else if (type == CU_GRAPH_NODE_TYPE_GRAPH) {
      CUgraph child = nullptr;
      if (API(cuGraphChildGraphNodeGetGraph, node, &child) != CUDA_SUCCESS) return false;
      if (!snapshot_graph(child, out, depth + 1)) return false;
    }
  }
  return true;
}

void snapshot_exec(int exec, CUgraph g) {
  std::vector<std::pair<void*, int>> snap;
  bool ok = snapshot_graph(g, &snap, 0);
  std::lock_guard<std::mutex> lk(g_pool.mu);
  Obj& e = g_pool.of(T::kExec)[exec];
  e.hostfns = std::move(snap);
  e.unknown = !ok;
  for (auto& [n, rec] : e.hostfns) hostrec_in_graph(rec);
}

// ------------------------------------------------------------ copies

static u128 mul(u128 a, u128 b) {
  const u128 max = ~u128{0};
  if (a && b > max / a) return max;
  return a * b;
}
static u128 add(u128 a, u128 b) {
  const u128 max = ~u128{0};
  return a > max - b ? max : a + b;
}

void gen_side(Reader& r, CopySide* s, bool allow_host) {
  uint8_t b = r.u8() % 16;
  Use use = Use::kValidated;
  if (b < 4 || b >= 14) {
    s->mtype = CU_MEMORYTYPE_DEVICE;
  } else if (b < 7) {
    s->mtype = CU_MEMORYTYPE_UNIFIED;
    use = Use::kUnified;
  } else if (b < 10) {
    s->mtype = allow_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    use = allow_host ? Use::kHost : Use::kValidated;
  } else if (b < 13) {
    s->mtype = CU_MEMORYTYPE_ARRAY;
  } else {
    static const int bad[] = {0, 5, 7, 8, -1, 0x7fffffff, 0x100};
    s->mtype = bad[r.below(7)];
  }
  if (s->mtype == CU_MEMORYTYPE_ARRAY) {
    s->arr = static_cast<CUarray>(g_pool.pick(r, T::kArray, &s->array));
  } else {
    s->m = pick_mem(r, use);
  }
  auto coord = [&] {
    switch (r.u8() % 8) {
      case 0: case 1: case 2: case 3: case 4: return uint64_t{0};
      case 5: case 6: return static_cast<uint64_t>(r.u8() % 64);
      default: return r.size();
    }
  };
  s->x = coord();
  s->y = coord();
  s->z = coord();
  switch (r.u8() % 8) {
    case 0: case 1: case 2: s->pitch = 0; break;
    case 3: case 4: s->pitch = 64u << (r.u8() % 6); break;
    case 5: s->pitch = r.u16(); break;
    default: s->pitch = r.size(); break;
  }
  switch (r.u8() % 8) {
    case 0: case 1: case 2: case 3: s->height = 0; break;
    case 4: case 5: s->height = r.u8() % 64; break;
    default: s->height = r.size(); break;
  }
}

enum class Cls { kOk, kBad, kUnknown, kHostOOB };

// Whether [lo, hi) lies in one of the harness's host buffers.
static bool in_host_buffer(u128 lo, u128 hi) {
  for (const Thread& t : g_threads)
    for (uint8_t* b : t.hostbuf) {
      auto base = reinterpret_cast<uintptr_t>(b);
      if (b && lo >= base && hi <= u128{base} + kHostBufSize) return true;
    }
  return false;
}

// Classifies one side by the bytes it reaches, [first, end), wherever they
// are (the library looks up `first`, not the pointer it was given).
static Cls classify(const CopySide& s, size_t W, size_t H, size_t D) {
  if (s.mtype == CU_MEMORYTYPE_ARRAY) {
    std::lock_guard<std::mutex> g(g_pool.mu);
    if (s.array < 0) return Cls::kBad;  // forged or NULL
    const Obj& a = g_pool.of(T::kArray)[s.array];
    if (a.st == St::kDead) return Cls::kBad;
    if (a.st == St::kOrphan) return Cls::kUnknown;
    bool in = add(s.x, W) <= a.row_bytes && add(s.y, H) <= a.rows && add(s.z, D) <= a.layers;
    return in ? Cls::kOk : Cls::kBad;
  }
  if (s.mtype != CU_MEMORYTYPE_HOST && s.mtype != CU_MEMORYTYPE_DEVICE && s.mtype != CU_MEMORYTYPE_UNIFIED)
    return Cls::kBad;
  if (s.m.src == MemRef::kNull) return Cls::kBad;  // every kind refuses a NULL pointer
  const u128 P = s.pitch ? u128{s.pitch} : add(s.x, W);
  const u128 Hh = s.height ? u128{s.height} : add(s.y, H);
  const u128 slice = mul(P, Hh);
  const u128 first = add(s.m.p, add(add(mul(s.z, slice), mul(s.y, P)), s.x));
  const u128 end = add(add(add(first, mul(D - 1, slice)), mul(H - 1, P)), W);
  if (s.mtype == CU_MEMORYTYPE_HOST) return in_host_buffer(first, end) ? Cls::kOk : Cls::kHostOOB;
  // Device and unified sides: the allocation that holds `first`, if any.
  int a = -1;
  uintptr_t ab = 0;
  size_t as = 0;
  if (!(first >> 64)) {
    std::lock_guard<std::mutex> g(g_pool.mu);
    a = g_pool.find_alloc(static_cast<uintptr_t>(first));
    if (a >= 0) {
      ab = g_pool.allocs[a].p;
      as = g_pool.allocs[a].size;
    }
  }
  const uintptr_t sem = sem_base();
  const bool in_sem = !(first >> 64) && first >= sem && first < u128{sem} + kSemWords * 8;
  if (a >= 0) return end <= u128{ab} + as ? Cls::kOk : Cls::kBad;
  if (s.mtype == CU_MEMORYTYPE_DEVICE) return first >> 64 ? Cls::kBad : in_sem ? Cls::kUnknown : Cls::kBad;
  // Unified, untracked: host memory that the library does not check.
  return in_host_buffer(first, end) ? Cls::kOk : Cls::kHostOOB;
}

// Whether any side's exact extent (or the copy's size) needs more than 64 bits.
static bool side_wraps(const CopySide& s, u128 W, u128 H, u128 D) {
  if (s.mtype == CU_MEMORYTYPE_ARRAY) return add(s.x, W) >> 64 || add(s.y, H) >> 64 || add(s.z, D) >> 64;
  const u128 P = s.pitch ? u128{s.pitch} : add(s.x, W);
  const u128 Hh = s.height ? u128{s.height} : add(s.y, H);
  const u128 slice = mul(P, Hh);
  const u128 start = add(add(mul(s.z, slice), mul(s.y, P)), s.x);
  return add(add(add(start, mul(D - 1, slice)), mul(H - 1, P)), W) >> 64 || mul(mul(W, H), D) >> 64;
}

bool copy_wraps(const CopySide& s, const CopySide& d, size_t W, size_t H, size_t D) {
  if (W == 0 || H == 0 || D == 0) return false;
  return side_wraps(s, W, H, D) || side_wraps(d, W, H, D);
}

void tame_copy(CopySide* s, CopySide* d, size_t* W, size_t* H, size_t* D) {
  *W = 1 + *W % 2048;
  *H = 1 + *H % 8;
  *D = 1 + *D % 4;
  for (CopySide* x : {s, d}) {
    x->x %= 64;
    x->y %= 64;
    x->z %= 64;
    x->pitch %= 8192;
    x->height %= 64;
  }
}

bool copy_legal(const CopySide& s, const CopySide& d, size_t W, size_t H, size_t D) {
  if (W == 0 || H == 0 || D == 0) return true;
  Cls cs = classify(s, W, H, D), cd = classify(d, W, H, D);
  if (cs != Cls::kHostOOB && cd != Cls::kHostOOB) return true;
  return cs == Cls::kBad || cd == Cls::kBad;
}

void legalize_copy(CopySide* src, CopySide* dst, size_t W, size_t H, size_t D) {
  if (W == 0 || H == 0 || D == 0) return;  // a no-op for the library
  Cls cs = classify(*src, W, H, D), cd = classify(*dst, W, H, D);
  if (tracing()) trace_line("  legalize: src %d (src kind %d avail %zu) dst %d (kind %d avail %zu)", static_cast<int>(cs),
                            src->m.src, src->m.avail, static_cast<int>(cd), dst->m.src, dst->m.avail);
  if (cs != Cls::kHostOOB && cd != Cls::kHostOOB) return;
  if (cs == Cls::kBad || cd == Cls::kBad) return;  // a correct library refuses it
  if (cs == Cls::kHostOOB) src->mtype = CU_MEMORYTYPE_DEVICE;
  if (cd == Cls::kHostOOB) dst->mtype = CU_MEMORYTYPE_DEVICE;
}

void fill_memcpy3d(const CopySide& s, const CopySide& d, size_t W, size_t H, size_t D, CUDA_MEMCPY3D* q) {
  std::memset(q, 0, sizeof *q);
  q->srcXInBytes = s.x;
  q->srcY = s.y;
  q->srcZ = s.z;
  set_enum(&q->srcMemoryType, s.mtype);
  q->srcHost = reinterpret_cast<const void*>(s.m.p);
  q->srcDevice = s.m.p;
  q->srcArray = s.arr;
  q->srcPitch = s.pitch;
  q->srcHeight = s.height;
  q->dstXInBytes = d.x;
  q->dstY = d.y;
  q->dstZ = d.z;
  set_enum(&q->dstMemoryType, d.mtype);
  q->dstHost = reinterpret_cast<void*>(d.m.p);
  q->dstDevice = d.m.p;
  q->dstArray = d.arr;
  q->dstPitch = d.pitch;
  q->dstHeight = d.height;
  q->WidthInBytes = W;
  q->Height = H;
  q->Depth = D;
}

static size_t extent(Reader& r) {
  switch (r.u8() % 8) {
    case 0: case 1: case 2: case 3: return 1;
    case 4: case 5: return 1 + r.u8() % 16;
    case 6: return 0;
    default: return r.size();
  }
}

void gen_memcpy3d(Reader& r, CUDA_MEMCPY3D* q) {
  size_t W = r.one_in(4) ? r.size() : 1 + r.u16() % 2048;
  size_t H = extent(r), D = extent(r);
  CopySide s, d;
  gen_side(r, &s, true);
  gen_side(r, &d, true);
  if (avoid("copy_wrap") && copy_wraps(s, d, W, H, D)) tame_copy(&s, &d, &W, &H, &D);
  legalize_copy(&s, &d, W, H, D);
  fill_memcpy3d(s, d, W, H, D, q);
  if (r.one_in(16)) q->srcLOD = r.u8();
  if (r.one_in(16)) q->dstLOD = r.u8();
  if (r.one_in(16)) q->reserved0 = reinterpret_cast<void*>(uintptr_t{r.u8()});
}

// ------------------------------------------------------- stream memops

// A wait on a semaphore word, or on an address the library must refuse.
static void gen_wait(Reader& r, bool wide, CUdeviceptr* addr, uint64_t* value, unsigned* flags) {
  *flags = r.u8() % 8 < 7 ? r.u8() % 4 : r.flags(0xffffffffu);
  *value = r.one_in(2) ? r.u8() : r.u64();
  uint8_t b = r.u8() % 16;
  if (b < 12) {
    *addr = sem_claim(wide, *flags, value);
    return;
  }
  // Addresses to refuse: misaligned words, NULL, forged, freed, managed memory.
  switch (b) {
    case 12: *addr = sem_claim(wide, *flags, value) + (wide ? 4 : 2); return;
    case 13: *addr = 0; return;
    default: {
      MemRef m = pick_mem(r, Use::kValidated);
      bool refused = m.src == MemRef::kFreed || m.src == MemRef::kForged || m.src == MemRef::kNull;
      if (m.src == MemRef::kAlloc) {
        std::lock_guard<std::mutex> g(g_pool.mu);
        refused = g_pool.allocs[m.alloc].kind == Mem::kManaged || m.avail < (wide ? 8u : 4u) || m.p % (wide ? 8 : 4);
      }
      if (refused) {
        std::lock_guard<std::mutex> g(g_pool.mu);
        refused = g_pool.find_alloc(m.p) < 0 || (m.src == MemRef::kAlloc && g_pool.allocs[m.alloc].kind == Mem::kManaged);
      }
      *addr = refused ? m.p : sem_claim(wide, *flags, value);
      return;
    }
  }
}

static void gen_write(Reader& r, bool wide, CUdeviceptr* addr, uint64_t* value, unsigned* flags) {
  *flags = r.one_in(8) ? r.flags(0xffffffffu) : 0;
  *value = r.one_in(2) ? r.u8() : r.u64();
  uint8_t b = r.u8() % 8;
  if (b < 3) {
    // A semaphore word: with the value that releases its wait.
    uintptr_t base = sem_base();
    unsigned n = std::min<unsigned>(g_sem_next.load(), kSemWords);
    if (n) {
      uintptr_t a = base + 8 * (r.u16() % n);
      uint64_t v;
      if (sem_release_value(a, &v)) {
        *addr = a;
        *value = v;
        return;
      }
    }
  }
  MemRef m = pick_mem(r, Use::kValidated);
  *addr = m.p;
}

void gen_memop(Reader& r, CUstreamBatchMemOpParams* op) {
  std::memset(op, 0, sizeof *op);
  int type = r.enum_of({CU_STREAM_MEM_OP_WAIT_VALUE_32, CU_STREAM_MEM_OP_WRITE_VALUE_32, CU_STREAM_MEM_OP_WAIT_VALUE_64,
                        CU_STREAM_MEM_OP_WRITE_VALUE_64, CU_STREAM_MEM_OP_BARRIER,
                        CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES});
  CUdeviceptr addr = 0;
  uint64_t value = 0;
  unsigned flags = 0;
  switch (type) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      gen_wait(r, type == CU_STREAM_MEM_OP_WAIT_VALUE_64, &addr, &value, &flags);
      set_enum(&op->waitValue.operation, type);
      op->waitValue.address = addr;
      if (type == CU_STREAM_MEM_OP_WAIT_VALUE_64) op->waitValue.value64 = value;
      else op->waitValue.value = static_cast<cuuint32_t>(value);
      op->waitValue.flags = flags;
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      gen_write(r, type == CU_STREAM_MEM_OP_WRITE_VALUE_64, &addr, &value, &flags);
      set_enum(&op->writeValue.operation, type);
      op->writeValue.address = addr;
      if (type == CU_STREAM_MEM_OP_WRITE_VALUE_64) op->writeValue.value64 = value;
      else op->writeValue.value = static_cast<cuuint32_t>(value);
      op->writeValue.flags = flags;
      break;
    default:
      // Barriers, flushes and unknown operations: no address to honour.
      set_enum(&op->memoryBarrier.operation, type);
      op->memoryBarrier.flags = r.flags(0xffffffffu);
      break;
  }
}

void gen_wait_args(Reader& r, bool wide, CUdeviceptr* addr, uint64_t* value, unsigned* flags) {
  gen_wait(r, wide, addr, value, flags);
}
void gen_write_args(Reader& r, bool wide, CUdeviceptr* addr, uint64_t* value, unsigned* flags) {
  gen_write(r, wide, addr, value, flags);
}

}  // namespace fz
