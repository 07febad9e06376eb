// The harness's memory: picks of allocations and host buffers, the semaphore
// words stream waits target (and the memop legalization), host-function records.
#include "harness.h"

#include <cstdarg>
#include <cstdlib>
#include <cstring>

namespace fz {

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
  return !p.two_threads || a.thread == thread_index();
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
