// The API fuzzer's harness: an input is a sequence of call families, each
// reading its arguments from the input and drawing handles from a pool of
// live, destroyed and forged handles of every type.
//
// Layout of an input: per call, one byte picks a family (families.cpp's
// table), and the family reads what it needs. A reader that runs dry reads
// zeros, so every prefix of an input is an input.
//
// Rules the harness keeps so that a report is the library's fault:
//  - host memory the library cannot validate (CU_MEMORYTYPE_HOST sides,
//    untracked pointers in unified sides) is the harness's own host buffers,
//    and the bytes reached stay inside them, unless another side of the same
//    call is certainly invalid (then a correct library refuses the call);
//  - forged and freed pointers only go where the library looks them up;
//  - stream waits only wait on the harness's semaphore words, which it
//    releases before anything that may block (see Sem), so no input hangs
//    legitimately;
//  - a handle the library owns (a child graph's graph, a graph being
//    captured into) is never destroyed by the harness.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

namespace fz {

using u128 = unsigned __int128;

// ---------------------------------------------------------------- input

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  bool empty() const { return n_ == 0; }
  size_t left() const { return n_; }
  uint8_t u8() {
    if (!n_) return 0;
    --n_;
    return *p_++;
  }
  uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
  uint32_t u32() { return u16() | (static_cast<uint32_t>(u16()) << 16); }
  uint64_t u64() { return u32() | (static_cast<uint64_t>(u32()) << 32); }
  // 0 .. n-1 (n <= 256).
  unsigned below(unsigned n) { return n ? u8() % n : 0; }
  // True one time in n.
  bool one_in(unsigned n) { return below(n) == 0; }
  // A size: mostly small, sometimes a boundary (0, 2^k +- 1, 2^32, 2^63,
  // SIZE_MAX and their neighbours, SIZE_MAX / k) or anything.
  uint64_t size();
  // A small count 0 .. max with a bias to 0..4.
  unsigned count(unsigned max);
  // A 32-bit enum value: one of `valid` mostly, else out of range.
  int enum_of(std::initializer_list<int> valid);
  // An enum in [lo, hi] mostly, else out of range.
  int enum_range(int lo, int hi);
  // Flags: a subset of `known` mostly, else any 32 bits.
  uint32_t flags(uint32_t known);

 private:
  const uint8_t* p_;
  size_t n_;
};

// ------------------------------------------------------------ API calls

extern std::atomic<uint64_t> g_calls;  // every API call the harness makes
bool tracing();
int thread_index();  // 0 or 1 (the two-thread mode), for traces
void trace_line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Arguments in traces: numbers, pointers, enums read as their raw integer.
void trace_arg(std::string& out, const void* p);
void trace_arg(std::string& out, unsigned long long v);
void trace_arg(std::string& out, long long v);
template <class T>
__attribute__((no_sanitize("enum"))) void trace_one(std::string& out, const T& v) {
  if (!out.empty() && out.back() != '(') out += ", ";
  if constexpr (std::is_pointer_v<T> || std::is_null_pointer_v<T>) {
    trace_arg(out, reinterpret_cast<const void*>(v));
  } else if constexpr (std::is_enum_v<T>) {
    int raw;
    std::memcpy(&raw, &v, sizeof raw);
    trace_arg(out, static_cast<long long>(raw));
  } else if constexpr (std::is_floating_point_v<T>) {
    out += std::to_string(v);
  } else if constexpr (std::is_signed_v<T>) {
    trace_arg(out, static_cast<long long>(v));
  } else if constexpr (std::is_class_v<T>) {
    out += "{...}";  // a struct passed by value (an IPC handle): its bytes are not traced
  } else {
    trace_arg(out, static_cast<unsigned long long>(v));
  }
}
void trace_call(const char* name, std::string& args);
void trace_result(CUresult r);
void count_call();

// CUDA's contract for destroys (cuCtxDestroy's says it in words): the caller
// ensures that no call uses an object while it is destroyed. In the
// two-thread mode the two input threads hold this guard across every call:
// shared, or exclusive for the calls that end an object's life (after
// releasing every semaphore word, before and after the wait, so that a
// destroy's drain cannot wait on a gate). Other threads (the library's
// workers running host functions) take nothing.
// A family holds it exclusively across a destroy and its bookkeeping
// (TeardownGuard::kExclusive), so that the other thread never sees freed
// memory still recorded live; the calls inside take nothing more.
class TeardownGuard {
 public:
  enum Exclusive { kExclusive };
  explicit TeardownGuard(const char* name);
  explicit TeardownGuard(Exclusive);
  ~TeardownGuard();
  TeardownGuard(const TeardownGuard&) = delete;
  TeardownGuard& operator=(const TeardownGuard&) = delete;

 private:
  void lock_exclusive();
  enum class Held { kNone, kShared, kExclusive } held_ = Held::kNone;
};

// Calls an entry point, counts it and traces it. Enum arguments may hold
// any bit pattern (as from a C caller): no enum check in here.
template <class F, class... A>
__attribute__((no_sanitize("enum"))) CUresult api(const char* name, F* fn, A... args) {
  if (tracing()) [[unlikely]] {
    // Before the call, so that a call that hangs or crashes is in the trace.
    std::string s = "(";
    (trace_one(s, args), ...);
    trace_call(name, s);
  }
  CUresult r;
  {
    TeardownGuard guard(name);
    r = fn(args...);
  }
  count_call();
  if (tracing()) [[unlikely]] trace_result(r);
  return r;
}
#define API(fn, ...) ::fz::api(#fn, &fn, ##__VA_ARGS__)

// Any 32-bit value as an enum (what a C caller can pass).
template <class E>
__attribute__((no_sanitize("enum"))) E as_enum(int v) {
  static_assert(sizeof(E) == sizeof(int));
  E e;
  std::memcpy(&e, &v, sizeof e);
  return e;
}
template <class E>
int raw(const E& field) {
  int v;
  std::memcpy(&v, &field, sizeof v);
  return v;
}
template <class E>
void set_enum(E* field, int v) {
  std::memcpy(field, &v, sizeof v);
}

// Known-bug switches: CUCPU_FUZZ_AVOID=a,b makes the harness stop
// generating the inputs that trigger those (to get past a known crash).
bool avoid(const char* what);

// An invariant of the library failed: say what, and abort.
[[noreturn]] void violated(const char* what, const char* fmt = nullptr, ...);

// Struct arguments, printed before the call when tracing.
void trace_memcpy3d(const CUDA_MEMCPY3D& q);
void trace_batch3d(const CUDA_MEMCPY3D_BATCH_OP* ops, size_t n);
void trace_memop(const CUstreamBatchMemOpParams* ops, size_t n);

// ------------------------------------------------------------ the pool

enum class St : uint8_t {
  kLive,    // created by the input, not destroyed
  kDead,    // destroyed by the input
  kOrphan,  // maybe destroyed (its context went away, its capture ended): used, never counted live
};

enum class T : uint8_t { kCtx, kStream, kEvent, kGraph, kNode, kExec, kArray, kMemPool, kCount };
const char* type_name(T t);

struct Obj {
  void* h = nullptr;
  St st = St::kLive;
  int ctx = -1;        // owning context (index into the ctx list), -1: none/unknown
  int thread = 0;      // creating thread (graph-family objects stay with it in the 2-thread mode)
  int parent = -1;     // nodes: their graph; graphs: the node that owns them (child graphs)
  bool primary = false;        // contexts: a primary context
  bool shared = false;         // contexts: the input's own, used by both threads
  int device = 0;              // contexts
  bool capture_owned = false;  // graphs being captured into, and their nodes: never destroyed by the harness
  bool aliased = false;        // a later object got this handle value: not used as a stale handle any more
  // Arrays: what the harness asked for (for exact bounds).
  size_t row_bytes = 0, rows = 0, layers = 0, elem = 0;
  bool is_default = false;  // memory pools: a device's default pool
  // Execs: host-function records per launch, keyed by graph node.
  std::vector<std::pair<void*, int>> hostfns;
  bool keys_valid = true;  // node keys still name the exec's nodes
  bool unknown = false;    // what a launch runs is no longer known
};

enum class Mem : uint8_t { kDevice, kPitch, kAsync, kHost, kManaged, kRegistered };

struct Alloc {
  uintptr_t p = 0;
  size_t size = 0;
  Mem kind = Mem::kDevice;
  St st = St::kLive;
  int ctx = -1;
  bool priv = false;  // the harness's own (copy checks): random families never pick it
  int hostbuf = -1;   // registered ranges: the host buffer they lie in; -2: its range was reused
  int thread = 0;     // the creating thread (the 2-thread mode frees and reads only its own)
  size_t elem = 0;    // unused
};

// Host-function records: each enqueue gets one (its userData encodes index
// and input generation); the function counts its runs.
struct HostRec {
  std::atomic<int64_t> max_runs{0};  // enqueued successfully (an upper bound while unknown captures race)
  std::atomic<int64_t> min_runs{0};  // certainly enqueued outside capture
  std::atomic<int64_t> ran{0};
  std::atomic<bool> lenient{false};  // reachable from an exec whose contents are unknown
};

// The harness's host memory: buffers per thread (never freed), and the
// semaphore words stream waits wait on.
constexpr size_t kHostBufs = 4;
constexpr size_t kHostBufSize = 64 * 1024;
constexpr size_t kSemWords = 2048;

struct SemWord {
  bool claimed = false;
  bool wide = false;
  bool released = false;
  uint64_t release_value = 0;  // satisfies the one wait on this word
};

struct Thread {
  int index = 0;
  uint8_t* hostbuf[kHostBufs] = {};
  // Private buffers for copy checks (allocations in the pool with priv set).
  int chk_dev = -1, chk_pinned = -1, chk_managed = -1;
  uint8_t* chk_host = nullptr;    // private pageable buffer (copy checks)
  CUstream chk_stream = nullptr;  // private stream (copy checks)
  int chk_stream_ctx = -1;
};

class Pool {
 public:
  std::mutex mu;  // guards everything below (bookkeeping only; API calls run outside it)
  std::vector<Obj> objs[static_cast<int>(T::kCount)];
  std::vector<Alloc> allocs;
  std::vector<SemWord> sem;
  std::atomic<int> nrecs{0};
  bool two_threads = false;
  int primary_refs[2] = {0, 0};  // retains by this input beyond the harness's own (device 0: baseline 1)

  std::vector<Obj>& of(T t) { return objs[static_cast<int>(t)]; }
  void* h(T t, int i) {
    std::lock_guard<std::mutex> g(mu);
    return i >= 0 && static_cast<size_t>(i) < of(t).size() ? of(t)[i].h : nullptr;
  }
  void reset();

  // A new handle from a create call: checks it is not a live one of its
  // type (abort otherwise), retires stale entries with the same value.
  int add(T t, void* h, int ctx, int parent = -1);
  // A handle the library reported (node lists, capture graphs): added
  // unless known; returns its index.
  int learn(T t, void* h, int parent, bool capture_owned);
  int find(T t, const void* h);  // -1: unknown
  void kill(T t, int i);         // destroyed by the input (and what it owned)
  void orphan(T t, int i);
  // Around a destroy call: marked dead before it (a concurrent create may
  // return the handle at once), revived if the call failed.
  bool dying(T t, int i);  // true when it marked a live entry
  void destroyed(T t, int i, bool ok, bool marked);
  // A context's objects after it is destroyed or torn down (primary reset).
  void ctx_torn_down(int ctx, bool destroyed);
  int add_alloc(const Alloc& a);  // checks it overlaps no live allocation
  int find_alloc(uintptr_t p);    // the live allocation containing p, or -1

  // Picks: an index of a live/dead/orphan/forged/NULL choice. The returned
  // handle may be anything; `idx` gets the pool index or -1.
  void* pick(Reader& r, T t, int* idx = nullptr, bool allow_null = true);
  // A live object of type t for destruction or mutation by this thread;
  // -1 when there is none (then the caller uses pick()).
  int pick_live(Reader& r, T t, bool destroyable);
  CUstream pick_stream(Reader& r, int* idx = nullptr);
  int current_ctx_index();  // the calling thread's current context in the list, or -1
};

extern Pool g_pool;
extern Thread g_threads[2];
Thread& me();
void set_thread(int i);

// Forged handles: never a slot of the library's handle pools.
void* forged(Reader& r, void* near);

// ------------------------------------------------------- memory picks

// A pointer for an argument, and what lies behind it.
struct MemRef {
  enum Src : uint8_t { kNull, kAlloc, kHostBuf, kFreed, kForged, kSem } src = kNull;
  uintptr_t p = 0;
  int alloc = -1;       // kAlloc, kFreed: pool index
  size_t avail = 0;     // kAlloc, kHostBuf: bytes from p to the end of the memory
  bool tracked = false; // kAlloc: a library allocation (device, pinned, managed, registered)
};

// Where a pointer may come from.
enum class Use {
  kValidated,  // the library looks it up (device sides, memsets, memops): anything
  kUnified,    // unified sides: a library allocation with p inside it, or a host buffer
  kHost,       // host sides: a host buffer
};
MemRef pick_mem(Reader& r, Use use);
// True when a call failed.
inline bool fail(CUresult r) { return r != CUDA_SUCCESS; }
// Records an allocation the library returned (index into g_pool.allocs).
int new_alloc(uintptr_t p, size_t size, Mem kind, int ctx, bool priv = false, int hostbuf = -1);
// The base of allocation `i`.
uintptr_t alloc_ptr(int i);
// An offset into a reference: small, inside it, at its end, or anything (validated only).
uint64_t pick_offset(Reader& r, const MemRef& m, Use use);
// A host buffer of this thread with `n` bytes available (n <= kHostBufSize).
MemRef host_buffer(Reader& r, size_t n);

// ------------------------------------------------------ semaphore words

// Claims a word for one wait and returns its address; `cond` and `value`
// may be adjusted so the wait can be satisfied.
uintptr_t sem_claim(bool wide, unsigned cond, uint64_t* value);
// Writes the satisfying value of every claimed word (or of one), so that no
// wait can block for ever. Called before anything that may block.
void sem_release_all();
void sem_release_one(Reader& r);
uintptr_t sem_base();
// A value that satisfies the wait on word `addr`, if it is a claimed word.
bool sem_release_value(uintptr_t addr, uint64_t* v);

// ------------------------------------------------------- host functions

void CUDA_CB hostfn(void* data);
void CUDA_CB callback(CUstream s, CUresult status, void* data);
// A new record; its userData.
int hostrec_new();
void* hostrec_data(int rec);
int hostrec_of(void* data);  // -1: not a record of this input
// Before an enqueue that runs it `n` times when it succeeds; `certain`:
// known not captured. Undo with the same arguments when the call fails.
void hostrec_expect(int rec, int n, bool certain);
void hostrec_unexpect(int rec, int n, bool certain);
void hostrec_make_lenient(int rec);
void hostrec_in_graph(int rec);     // it may be in a graph: an unknown exec may run it
void hostrec_unknown_launch();      // an exec with unknown contents is launched
// After everything is synchronized: each record ran as often as enqueued.
void hostrec_check_all(const char* when);

// ---------------------------------------------------------- helpers

// Synchronizes every live context (releasing waits first); false if some
// synchronize failed (then not everything is known to have run).
bool sync_everything();
// The capture status of `s` as seen through the entry point variant
// (per_thread: the _ptsz one); -1 on error.
int capture_status(CUstream s, bool per_thread);
// Snapshot of the host functions an exec of `g` runs.
void snapshot_exec(int exec, CUgraph g);
// Exact footprint checks for copies (copy families and graph nodes).
struct CopySide {
  int mtype = CU_MEMORYTYPE_DEVICE;
  MemRef m;
  int array = -1;  // pool index (arrays)
  CUarray arr = nullptr;
  size_t x = 0, y = 0, z = 0, pitch = 0, height = 0;
};
// Generates one side of a copy.
void gen_side(Reader& r, CopySide* s, bool allow_host);
// Makes a copy of W x H x D bytes between sides legal for the harness to
// issue (see the file comment); may turn sides into device sides.
void legalize_copy(CopySide* src, CopySide* dst, size_t W, size_t H, size_t D);
// Copies whose exact extent needs more than 64 bits, and making them small
// (CUCPU_FUZZ_AVOID=copy_wrap).
bool copy_wraps(const CopySide& s, const CopySide& d, size_t W, size_t H, size_t D);
void tame_copy(CopySide* s, CopySide* d, size_t* W, size_t* H, size_t* D);
// Whether the harness may issue this copy as is.
bool copy_legal(const CopySide& src, const CopySide& dst, size_t W, size_t H, size_t D);
void fill_memcpy3d(const CopySide& src, const CopySide& dst, size_t W, size_t H, size_t D, CUDA_MEMCPY3D* q);
void gen_memcpy3d(Reader& r, CUDA_MEMCPY3D* q);
// Stream memory operations: one well-formed-or-not op, with waits only on semaphore words.
void gen_memop(Reader& r, CUstreamBatchMemOpParams* op);
void gen_wait_args(Reader& r, bool wide, CUdeviceptr* addr, uint64_t* value, unsigned* flags);
void gen_write_args(Reader& r, bool wide, CUdeviceptr* addr, uint64_t* value, unsigned* flags);
void sem_init();
void sem_reset();
extern std::atomic<uint64_t> g_gen;  // input generation (host-function records)

// Allocation sizes the harness lets the library really allocate.
constexpr size_t kMaxRealAlloc = 1 << 20;
extern size_t g_total_mem;
uint64_t alloc_size(Reader& r);

// ------------------------------------------------------- call families

struct Family {
  const char* name;
  void (*run)(Reader& r);
};
extern const Family kFamilies[];
extern const size_t kFamilyCount;

// Families (families_*.cpp).
void fam_device(Reader& r);
void fam_ctx(Reader& r);
void fam_primary(Reader& r);
void fam_alloc(Reader& r);
void fam_free(Reader& r);
void fam_memquery(Reader& r);
void fam_array(Reader& r);
void fam_copy1d(Reader& r);
void fam_copy3d(Reader& r);
void fam_copybatch(Reader& r);
void fam_memset(Reader& r);
void fam_checked_copy(Reader& r);
void fam_checked_memset(Reader& r);
void fam_stream(Reader& r);
void fam_stream_attr(Reader& r);
void fam_event(Reader& r);
void fam_hostfn(Reader& r);
void fam_memop(Reader& r);
void fam_release(Reader& r);
void fam_capture(Reader& r);
void fam_capture_info(Reader& r);
void fam_graph_build(Reader& r);
void fam_graph_node(Reader& r);
void fam_graph_query(Reader& r);
void fam_graph_params(Reader& r);
void fam_graph_exec(Reader& r);
void fam_graph_exec_set(Reader& r);
void fam_mempool(Reader& r);
void fam_sync(Reader& r);
void fam_misc(Reader& r);
void fam_vmm(Reader& r);
void fam_user_object(Reader& r);
void fam_prefetch_batch(Reader& r);
void fam_green(Reader& r);
void fam_outlive(Reader& r);
void fam_ipc(Reader& r);

}  // namespace fz

namespace fz {
// Small helpers for the families.
template <class P>
P* maybe(Reader& r, P* p, unsigned one_in = 16) {
  return r.one_in(one_in) ? nullptr : p;
}
inline int dev_ordinal(Reader& r) {
  switch (r.u8() % 8) {
    case 5: return 1;
    case 6: return -1;
    case 7: return static_cast<int>(r.u32());
    default: return 0;
  }
}
// The context an object made now by this thread belongs to: the stream's
// for stream-ordered allocations, else the current one.
int ctx_of_stream(int stream_idx);
}  // namespace fz
