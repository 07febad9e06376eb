#include "core/check.h"

#include <dlfcn.h>
#include <execinfo.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#include "base/thread_heap.h"
#include "core/allocation.h"
#include "core/context.h"
#include "core/event.h"
#include "core/stream.h"
#include "ptx/check_rt.h"

namespace cucpu::check {

std::atomic<bool> g_on{false};

namespace {

using Clock = std::vector<uint32_t>;

void join(Clock& into, const Clock& from) {
  if (from.size() > into.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

constexpr int kFrames = 24;
constexpr size_t kBucketRecords = 512;  // accesses kept per allocation; older ones are forgotten
constexpr uint64_t kPrintedReports = 50;

// One enqueued op (or group): its clock, and where the program enqueued it.
struct Record {
  uint64_t id = 0;
  uint32_t actor = 0, epoch = 0;
  Clock clock;
  std::string what;    // the op's trace name
  std::string where;   // "stream 0x... (ctx N)"
  const Stream* stream = nullptr;
  void* frames[kFrames];
  int depth = 0;
};
using RecordRef = std::shared_ptr<const Record>;

// a happens before b.
bool before(const Record& a, const Record& b) { return a.actor < b.clock.size() && b.clock[a.actor] >= a.epoch; }

struct Access {
  MemAccess range;
  RecordRef rec;
};

struct StreamState {
  uint32_t actor = 0;
  Clock clock;
  const Context* ctx = nullptr;
  bool legacy = false, blocking = false;
};

std::atomic<uint64_t> g_invalid_accesses{0};
std::atomic<uint64_t> g_shared_races{0};
std::atomic<uint64_t> g_barrier_errors{0};

struct Checker {
  std::mutex mu;
  std::unordered_map<const Stream*, StreamState> streams;
  std::unordered_map<const Event*, Clock> events;
  std::unordered_map<const void*, Clock> execs;
  std::unordered_map<uintptr_t, Clock> flags;            // stream memory operation words
  std::unordered_map<const Op*, RecordRef> pending_run;  // kernels not run yet
  std::unordered_map<const Op*, Clock> host_functions;   // host functions not begun yet
  std::unordered_map<uintptr_t, std::vector<Access>> shadow;  // by allocation base (or MiB of host memory)
  std::unordered_map<uintptr_t, const Stream*> attached;      // managed memory attached to one stream
  std::set<std::pair<uintptr_t, const Stream*>> attach_reported;
  std::set<std::pair<uint64_t, uint64_t>> reported;
  uint32_t next_actor = 0;
  uint64_t next_record = 1;
  std::atomic<uint64_t> reports{0};
};

Checker& checker() {
  static Checker* c = new Checker();  // never destroyed: worker threads may report during exit
  return *c;
}

// What the program's threads have seen complete. One clock for all of
// them: the checker does not see the program's own synchronization
// between threads (thread creation, joins, mutexes), so it takes every
// host synchronization as known to every thread, never reporting a race
// that such synchronization orders.
Clock g_host_clock;  // guarded by Checker::mu
// A worker running a host function: what that function is ordered after.
struct WorkerClock {
  bool in_host_function = false;
  Clock clock;
};
thread_local WorkerClock t_worker;
Clock& host_clock() { return t_worker.in_host_function ? t_worker.clock : g_host_clock; }

StreamState& state_of(Checker& c, Stream* s) {
  auto [it, fresh] = c.streams.try_emplace(s);
  if (fresh) {
    it->second.actor = c.next_actor++;
    it->second.ctx = s->ctx;
    it->second.legacy = s->kind == StreamKind::kLegacy;
    it->second.blocking = s->kind != StreamKind::kLegacy && s->blocking();
  }
  return it->second;
}

// The shadow bucket of an address: its allocation, or the MiB of host memory it lies in.
uintptr_t bucket_of(uintptr_t p, std::optional<Allocation>* alloc) {
  *alloc = Registry::instance().find(p);
  if (*alloc) return (*alloc)->base;
  return (p >> 20) | (uintptr_t{1} << 63);
}

// Prints the program's frames of a record: from the entry point the
// program called (the outermost frame of this library before a frame of
// the program's) outwards.
void print_frames(const Record& r) {
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(&print_frames), &self);
  int first = -1;
  for (int i = 0; i + 1 < r.depth; ++i) {
    Dl_info a{}, b{};
    if (!dladdr(r.frames[i], &a) || !dladdr(r.frames[i + 1], &b)) continue;
    if (a.dli_fbase == self.dli_fbase && b.dli_fbase != self.dli_fbase) {
      first = i;
      break;
    }
  }
  if (first < 0) first = 0;
  for (int i = first, k = 0; i < r.depth && k < 12; ++i, ++k) {
    Dl_info d{};
    const uintptr_t pc = reinterpret_cast<uintptr_t>(r.frames[i]);
    if (dladdr(r.frames[i], &d) && d.dli_fname) {
      const char* file = std::strrchr(d.dli_fname, '/');
      file = file ? file + 1 : d.dli_fname;
      if (d.dli_sname)
        std::fprintf(stderr, "      #%d %s+0x%" PRIxPTR " (%s)\n", k, d.dli_sname, pc - reinterpret_cast<uintptr_t>(d.dli_saddr), file);
      else
        std::fprintf(stderr, "      #%d %s+0x%" PRIxPTR "\n", k, file, pc - reinterpret_cast<uintptr_t>(d.dli_fbase));
    } else {
      std::fprintf(stderr, "      #%d 0x%" PRIxPTR "\n", k, pc);
    }
  }
}

void print_side(const char* verb, const Access& a) {
  const Record& r = *a.rec;
  std::fprintf(stderr, "  %s by %s on %s, enqueued at\n", verb, r.what.c_str(), r.where.c_str());
  print_frames(r);
}

void report(Checker& c, const Access& old, const Access& now) {
  const auto key = std::minmax(old.rec->id, now.rec->id);
  if (!c.reported.insert({key.first, key.second}).second) return;
  const uint64_t n = c.reports.fetch_add(1) + 1;
  if (n > kPrintedReports) {
    if (n == kPrintedReports + 1) std::fprintf(stderr, "cucpu check: more races; only the first %" PRIu64 " are shown\n", kPrintedReports);
    return;
  }
  const uintptr_t lo = std::max(old.range.lo, now.range.lo), hi = std::min(old.range.hi, now.range.hi);
  std::optional<Allocation> alloc;
  bucket_of(lo, &alloc);
  std::fprintf(stderr, "cucpu check: race on [0x%" PRIxPTR ", 0x%" PRIxPTR ") (%zu bytes", lo, hi, static_cast<size_t>(hi - lo));
  if (alloc)
    std::fprintf(stderr, " of %s at 0x%" PRIxPTR " + %zu", memory_kind_name(alloc->kind), alloc->base,
                 static_cast<size_t>(lo - alloc->base));
  std::fprintf(stderr, ")\n");
  // The earlier-enqueued side first.
  const bool old_first = old.rec->id < now.rec->id;
  const Access& a = old_first ? old : now;
  const Access& b = old_first ? now : old;
  print_side(a.range.write ? "written" : "read", a);
  print_side(b.range.write ? "written" : "read", b);
  std::fprintf(stderr,
               "  nothing orders the two: no stream order, event wait, legacy-stream rule, graph launch or host "
               "synchronization lies between them\n");
}

// The spec's undefined behaviour: two copies of one batch that depend on
// each other, or managed memory attached to one stream touched by another.
void report_undefined(Checker& c, const char* text, const Access& a, const Access* b) {
  const uint64_t n = c.reports.fetch_add(1) + 1;
  if (n > kPrintedReports) return;
  std::fprintf(stderr, "cucpu check: %s [0x%" PRIxPTR ", 0x%" PRIxPTR ")", text, a.range.lo, a.range.hi);
  if (b) std::fprintf(stderr, " (copy %u) and [0x%" PRIxPTR ", 0x%" PRIxPTR ") (copy %u)", a.range.part - 1, b->range.lo,
                      b->range.hi, b->range.part - 1);
  std::fprintf(stderr, "\n");
  print_side(a.range.write ? "written" : "read", a);
}

// Checks one access against what is known of its memory, then records it.
void add_access(Checker& c, const MemAccess& m, const RecordRef& rec) {
  if (m.hi <= m.lo) return;
  std::optional<Allocation> alloc;
  const uintptr_t bucket = bucket_of(m.lo, &alloc);
  std::vector<Access>& list = c.shadow[bucket];
  const Access now{m, rec};
  if (auto at = c.attached.find(bucket); at != c.attached.end() && at->second != rec->stream &&
                                          c.attach_reported.insert({bucket, rec->stream}).second)
    report_undefined(c, "managed memory attached to another stream (CU_MEM_ATTACH_SINGLE) is touched at", now, nullptr);
  size_t kept = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const Access& old = list[i];
    const bool overlap = old.range.lo < m.hi && m.lo < old.range.hi;
    if (overlap && old.rec == rec && old.range.part != m.part && old.range.part && m.part &&
        (old.range.write || m.write) && c.reported.insert({rec->id, rec->id}).second)
      report_undefined(c, "copies of one batch depend on each other (undefined: they run in no set order; here in list order):",
                       old, &now);
    // A race needs a plain write: atomics among themselves, and a plain
    // read of what atomics change, are not reported.
    const bool plain_write = (old.range.write && !old.range.atomic) || (m.write && !m.atomic);
    if (overlap && old.rec != rec && plain_write && !before(*old.rec, *rec) && !before(*rec, *old.rec))
      report(c, old, now);
    // An access ordered before this one and inside its range adds nothing
    // a later check needs when this one writes, or both read.
    const bool covered = old.range.lo >= m.lo && old.range.hi <= m.hi && before(*old.rec, *rec) &&
                         (m.write || !old.range.write) && old.range.atomic == m.atomic;
    if (!covered) list[kept++] = old;
  }
  list.resize(kept);
  list.push_back(now);
  if (list.size() > kBucketRecords) list.erase(list.begin(), list.begin() + (list.size() - kBucketRecords));
}


void at_exit() {
  const uint64_t n = checker().reports.load(), bad = g_invalid_accesses.load(), shared = g_shared_races.load(),
                 barriers = g_barrier_errors.load();
  std::fprintf(stderr, "cucpu check: %" PRIu64 " race%s found\n", n, n == 1 ? "" : "s");
  if (bad) std::fprintf(stderr, "cucpu check: %" PRIu64 " invalid kernel access%s found\n", bad, bad == 1 ? "" : "es");
  if (shared) std::fprintf(stderr, "cucpu check: %" PRIu64 " shared-memory race%s found\n", shared, shared == 1 ? "" : "s");
  if (barriers) std::fprintf(stderr, "cucpu check: %" PRIu64 " divergent barrier%s found\n", barriers, barriers == 1 ? "" : "s");
  if (n == 0 && bad == 0 && shared == 0 && barriers == 0) return;
  if (const char* code = std::getenv("CUCPU_CHECK_ERROR_EXITCODE")) {
    std::fflush(nullptr);
    std::_Exit(std::atoi(code));
  }
}

// A thread's run of kernel blocks (KernelRun): the kernel's name, what its
// accesses touched, and the allocation the last one fell in.
struct KernelTouch {
  std::string kernel;
  const Op* key = nullptr;
  bool last = false;
  std::vector<MemAccess> ranges;
  uintptr_t alloc_lo = 0, alloc_hi = 0;
};
thread_local ThreadHeap<KernelTouch> t_touch_heap;  // base/thread_heap.h
KernelTouch& touch() { return t_touch_heap.get(); }

constexpr size_t kMaxRanges = 4096;  // beyond this, ranges merge per allocation (may over-report)

void note_range(uintptr_t lo, uintptr_t hi, bool write, bool atomic) {
  std::vector<MemAccess>& v = touch().ranges;
  for (size_t k = v.size(), n = 0; k > 0 && n < 8; --k, ++n) {
    MemAccess& m = v[k - 1];
    if (m.write == write && m.atomic == atomic && lo <= m.hi && hi >= m.lo) {
      m.lo = std::min(m.lo, lo);
      m.hi = std::max(m.hi, hi);
      return;
    }
  }
  v.push_back({lo, hi, write, atomic});
  if (v.size() <= kMaxRanges) return;
  std::sort(v.begin(), v.end(), [](const MemAccess& a, const MemAccess& b) {
    return std::tie(a.write, a.atomic, a.lo) < std::tie(b.write, b.atomic, b.lo);
  });
  std::vector<MemAccess> merged;
  for (const MemAccess& m : v) {
    std::optional<Allocation> a;
    if (!merged.empty() && merged.back().write == m.write && merged.back().atomic == m.atomic &&
        bucket_of(merged.back().lo, &a) == bucket_of(m.lo, &a))
      merged.back().hi = std::max(merged.back().hi, m.hi);
    else
      merged.push_back(m);
  }
  v = std::move(merged);
}

// A thread's index in its block, from its linear one.
struct Thread3 {
  uint32_t x, y, z;
};
Thread3 thread_of(const ptx::BlockEnv* env, uint32_t tid) {
  return {tid % env->ntid[0], tid / env->ntid[0] % env->ntid[1], tid / (env->ntid[0] * env->ntid[1])};
}

void report_invalid(const ptx::BlockEnv* env, uint64_t addr, uint32_t bytes, uint32_t flags, uint32_t line, uint32_t tid,
                    const std::optional<Allocation>& within) {
  const uint64_t n = g_invalid_accesses.fetch_add(1) + 1;
  if (n > kPrintedReports) return;
  const Thread3 t = thread_of(env, tid);
  const char* what = flags & ptx::kAccessAtomic ? "atomic" : flags & ptx::kAccessWrite ? "write" : "read";
  std::fprintf(stderr,
               "cucpu check: invalid global %s of %u bytes at 0x%" PRIx64 " in kernel %s, block (%u,%u,%u), thread (%u,%u,%u), PTX line %u\n",
               what, bytes, addr, touch().kernel.c_str(), env->ctaid[0], env->ctaid[1], env->ctaid[2], t.x, t.y, t.z, line);
  const std::optional<Allocation> near = within ? within : Registry::instance().nearest(addr);
  if (near && addr + bytes > near->base + near->size && addr >= near->base)
    std::fprintf(stderr, "  the access runs %" PRIu64 " bytes past the end of %s at 0x%" PRIxPTR " (%zu bytes)\n",
                 addr + bytes - (near->base + near->size), memory_kind_name(near->kind), near->base, near->size);
  else if (near && addr < near->base)
    std::fprintf(stderr, "  the access lies %" PRIu64 " bytes before %s at 0x%" PRIxPTR " (%zu bytes)\n",
                 near->base - addr, memory_kind_name(near->kind), near->base, near->size);
  else
    std::fprintf(stderr, "  the address lies in no live allocation (never allocated, or freed)\n");
}

// An access not aligned to its size: reported here with its thread and
// line; the compiled code's own check then faults the kernel with
// CUDA_ERROR_MISALIGNED_ADDRESS, as without the checker.
void report_misaligned(const ptx::BlockEnv* env, uint64_t addr, uint32_t bytes, uint32_t flags, uint32_t line,
                       uint32_t tid) {
  const uint64_t n = g_invalid_accesses.fetch_add(1) + 1;
  if (n > kPrintedReports) return;
  const Thread3 t = thread_of(env, tid);
  const char* what = flags & ptx::kAccessAtomic ? "atomic" : flags & ptx::kAccessWrite ? "write" : "read";
  std::fprintf(stderr,
               "cucpu check: misaligned global %s of %u bytes at 0x%" PRIx64 " in kernel %s, block (%u,%u,%u), thread "
               "(%u,%u,%u), PTX line %u\n",
               what, bytes, addr, touch().kernel.c_str(), env->ctaid[0], env->ctaid[1], env->ctaid[2], t.x, t.y, t.z, line);
}

// The compiled code's check of each global or generic access (ptx/check_rt.h).
bool kernel_access(const ptx::BlockEnv* env, uint64_t addr, uint32_t bytes, uint32_t flags, uint32_t line, uint32_t tid) {
  const uintptr_t lo = addr, hi = addr + bytes;
  if (lo < touch().alloc_lo || hi > touch().alloc_hi) {
    if (flags & ptx::kAccessGeneric) {
      const auto shared = reinterpret_cast<uintptr_t>(env->shared);
      if (lo >= shared && hi <= shared + env->total_shared_bytes) return true;  // the block's shared memory
    }
    std::optional<Allocation> a = Registry::instance().find(lo);
    if (!a) {
      // A generic address outside every allocation is the thread's local
      // memory (or another space the checker does not see): not checked.
      if (flags & ptx::kAccessGeneric) return true;
      report_invalid(env, addr, bytes, flags, line, tid, a);
      return false;
    }
    if (hi > a->base + a->size) {
      report_invalid(env, addr, bytes, flags, line, tid, a);
      return false;
    }
    touch().alloc_lo = a->base;
    touch().alloc_hi = a->base + a->size;
  }
  const uint32_t align = bytes < 16 ? bytes : 16;
  if (align && (addr & (align - 1)) != 0) report_misaligned(env, addr, bytes, flags, line, tid);  // the kernel then faults
  note_range(lo, hi, (flags & ptx::kAccessWrite) != 0, (flags & ptx::kAccessAtomic) != 0);
  return true;
}

// Racecheck and synccheck report a kernel's pair of PTX lines once: true
// (and counted in `count`) the first time, while reports are still printed.
bool first_of_kernel_lines(std::atomic<uint64_t>& count, uint32_t line_a, uint32_t line_b) {
  static std::mutex mu;
  static std::set<std::tuple<const void*, std::string, uint32_t, uint32_t>> seen;  // by the kind's counter
  {
    std::lock_guard<std::mutex> g(mu);
    if (!seen.insert({&count, touch().kernel, std::min(line_a, line_b), std::max(line_a, line_b)}).second) return false;
  }
  return count.fetch_add(1) + 1 <= kPrintedReports;
}

// Racecheck (ptx/check_rt.h): one report per kernel and pair of PTX lines.
void shared_race(const ptx::BlockEnv* env, uint32_t offset, const ptx::SharedAccess& a, const ptx::SharedAccess& b) {
  if (!first_of_kernel_lines(g_shared_races, a.line, b.line)) return;
  const Thread3 ta = thread_of(env, a.tid), tb = thread_of(env, b.tid);
  std::fprintf(stderr,
               "cucpu check: shared-memory race in kernel %s, block (%u,%u,%u), at shared offset %u: thread (%u,%u,%u) %s "
               "it at PTX line %u, then thread (%u,%u,%u) of another warp %s it at PTX line %u, with no barrier between\n",
               touch().kernel.c_str(), env->ctaid[0], env->ctaid[1], env->ctaid[2], offset, ta.x, ta.y, ta.z,
               a.write ? "writes" : "reads", a.line, tb.x, tb.y, tb.z, b.write ? "writes" : "reads", b.line);
}

// Synccheck (ptx/check_rt.h): one report per kernel and pair of lines.
void divergent_barrier(const ptx::BlockEnv* env, const ptx::SharedAccess& a, const ptx::SharedAccess& b) {
  if (!first_of_kernel_lines(g_barrier_errors, a.line, b.line)) return;
  const Thread3 ta = thread_of(env, a.tid), tb = thread_of(env, b.tid);
  std::fprintf(stderr,
               "cucpu check: divergent barrier in kernel %s, block (%u,%u,%u): thread (%u,%u,%u) waits at the barrier of PTX "
               "line %u, thread (%u,%u,%u) at PTX line %u (bar.sync, __syncthreads(), must be reached by every thread at "
               "one instruction)\n",
               touch().kernel.c_str(), env->ctaid[0], env->ctaid[1], env->ctaid[2], ta.x, ta.y, ta.z, a.line, tb.x, tb.y,
               tb.z, b.line);
}

}  // namespace

void KernelRun::begin(const Op* key, const std::string& kernel, bool last) {
  touch().kernel = kernel;
  touch().key = key;
  touch().last = last;
  touch().ranges.clear();
  touch().alloc_lo = touch().alloc_hi = 0;  // memory may have been freed since the last kernel
}

void KernelRun::end() {
  ran(touch().key, touch().ranges, touch().last);
  touch().ranges.clear();
  touch().alloc_lo = touch().alloc_hi = 0;
}

__attribute__((constructor)) void init_from_env() {
  if (!ptx::instrument_accesses()) return;  // the one reading of CUCPU_CHECK
  g_on.store(true, std::memory_order_relaxed);
  checker();
  ptx::set_access_hook(&kernel_access);
  ptx::set_shared_race_hook(&shared_race);
  ptx::set_divergent_barrier_hook(&divergent_barrier);
  std::atexit(at_exit);
}

void enqueued(Stream* s, Op* const* parts, size_t n, Op* join_op) {
  void* frames[kFrames];
  const int depth = backtrace(frames, kFrames);
  std::vector<MemAccess> touched;
  bool when_run = false;
  auto collect = [&](const Op* op) {
    op->accesses(touched);
    when_run |= op->accesses_when_run();
  };
  for (size_t i = 0; i < n; ++i) collect(parts[i]);
  collect(join_op);

  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  StreamState& st = state_of(c, s);
  join(st.clock, host_clock());
  if (st.legacy) {
    for (auto& [other, os] : c.streams)
      if (os.blocking && os.ctx == st.ctx) join(st.clock, os.clock);
  } else if (st.blocking) {
    join(st.clock, state_of(c, s->ctx->legacy_stream()).clock);
  }
  for (const MemAccess& m : touched)  // a wait on a stream memory word: after that word's writers
    if (m.atomic && !m.write) {
      auto it = c.flags.find(m.lo);
      if (it != c.flags.end()) join(st.clock, it->second);
    }
  if (st.clock.size() <= st.actor) st.clock.resize(st.actor + 1, 0);
  ++st.clock[st.actor];

  auto rec = std::make_shared<Record>();
  rec->id = c.next_record++;
  rec->actor = st.actor;
  rec->epoch = st.clock[st.actor];
  rec->clock = st.clock;
  rec->what = join_op->trace_name();
  if (n > 0 && rec->what != "graph launch") rec->what = parts[0]->trace_name() + (n > 1 ? " (" + std::to_string(n) + " parts)" : "");
  rec->where = s->describe();
  rec->stream = s;
  std::memcpy(rec->frames, frames, sizeof frames);
  rec->depth = depth;
  RecordRef ref = rec;
  for (const MemAccess& m : touched) {
    add_access(c, m, ref);
    if (m.atomic && m.write) join(c.flags[m.lo], st.clock);
  }
  if (when_run) {
    for (size_t i = 0; i < n; ++i)
      if (parts[i]->accesses_when_run()) c.pending_run[parts[i]] = ref;
    if (join_op->accesses_when_run()) c.pending_run[join_op] = ref;
  }
  if (join_op->runs_program_code()) c.host_functions[join_op] = st.clock;
}

void ran(const Op* op, const std::vector<MemAccess>& touched, bool last) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  auto it = c.pending_run.find(op);
  if (it == c.pending_run.end()) return;
  RecordRef rec = it->second;
  if (last) c.pending_run.erase(it);
  for (const MemAccess& m : touched) add_access(c, m, rec);
}

void event_recorded(Event* e, Stream* s) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  c.events[e] = state_of(c, s).clock;
}

void stream_waits_event(Stream* s, Event* e) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  auto it = c.events.find(e);
  if (it != c.events.end()) join(state_of(c, s).clock, it->second);
}

void host_waited_stream(Stream* s) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  join(host_clock(), state_of(c, s).clock);
}

void host_waited_event(Event* e) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  auto it = c.events.find(e);
  if (it != c.events.end()) join(host_clock(), it->second);
}

void host_waited_context(Context* ctx) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  for (auto& [s, st] : c.streams)
    if (!ctx || st.ctx == ctx) join(host_clock(), st.clock);
}

void graph_launch_begins(const void* exec, Stream* s) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  auto it = c.execs.find(exec);
  if (it != c.execs.end()) join(state_of(c, s).clock, it->second);
}

void graph_launch_enqueued(const void* exec, Stream* s) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  c.execs[exec] = state_of(c, s).clock;
}

void host_function_begins(const Op* op) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  auto it = c.host_functions.find(op);
  if (it == c.host_functions.end()) return;
  t_worker.in_host_function = true;  // a worker runs no program code but host functions
  t_worker.clock = std::move(it->second);  // its earlier host functions say nothing of this one
  c.host_functions.erase(it);
}

void memory_renewed(uintptr_t base, size_t) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  c.shadow.erase(base);
  c.attached.erase(base);
}

void memory_attached(uintptr_t base, Stream* single) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  if (single) c.attached[base] = single;
  else c.attached.erase(base);
}

uint64_t reports() {
  return checker().reports.load() + g_invalid_accesses.load() + g_shared_races.load() + g_barrier_errors.load();
}

}  // namespace cucpu::check
