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
#include <string>
#include <unordered_map>

#include "core/allocation.h"
#include "core/context.h"
#include "core/event.h"
#include "core/stream.h"

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

struct Checker {
  std::mutex mu;
  std::unordered_map<const Stream*, StreamState> streams;
  std::unordered_map<const Event*, Clock> events;
  std::unordered_map<const void*, Clock> execs;
  std::unordered_map<uintptr_t, Clock> flags;            // stream memory operation words
  std::unordered_map<const Op*, RecordRef> pending_run;  // kernels not run yet
  std::unordered_map<const Op*, Clock> host_functions;   // host functions not begun yet
  std::unordered_map<uintptr_t, std::vector<Access>> shadow;  // by allocation base (or MiB of host memory)
  std::set<std::pair<uint64_t, uint64_t>> reported;
  uint32_t next_actor = 0;
  uint64_t next_record = 1;
  std::atomic<uint64_t> reports{0};
};

Checker& checker() {
  static Checker* c = new Checker();  // never destroyed: worker threads may report during exit
  return *c;
}

// What the calling thread has seen complete (host threads), or what the
// host function it runs is ordered after (workers).
struct ThreadClock {
  Clock clock;
};
thread_local ThreadClock t_thread;

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

const char* memory_kind_name(MemKind k) {
  switch (k) {
    case MemKind::kDevice: return "device memory";
    case MemKind::kHost: return "pinned host memory";
    case MemKind::kManaged: return "managed memory";
    case MemKind::kRegistered: return "registered host memory";
  }
  return "memory";
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

// Checks one access against what is known of its memory, then records it.
void add_access(Checker& c, const MemAccess& m, const RecordRef& rec) {
  if (m.hi <= m.lo) return;
  std::optional<Allocation> alloc;
  std::vector<Access>& list = c.shadow[bucket_of(m.lo, &alloc)];
  const Access now{m, rec};
  size_t kept = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const Access& old = list[i];
    const bool overlap = old.range.lo < m.hi && m.lo < old.range.hi;
    if (overlap && old.rec != rec && (old.range.write || m.write) && !(old.range.atomic && m.atomic) &&
        !before(*old.rec, *rec) && !before(*rec, *old.rec))
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

std::string describe_stream(const Stream* s, const StreamState& st) {
  char buf[160];
  const char* kind = st.legacy ? "the legacy stream" : s->kind == StreamKind::kPerThread ? "the per-thread stream" : nullptr;
  if (kind) std::snprintf(buf, sizeof buf, "%s (ctx %p)", kind, static_cast<const void*>(s->ctx));
  else std::snprintf(buf, sizeof buf, "stream %p (ctx %p)", static_cast<const void*>(s), static_cast<const void*>(s->ctx));
  return buf;
}

void at_exit() {
  const uint64_t n = checker().reports.load();
  std::fprintf(stderr, "cucpu check: %" PRIu64 " race%s found\n", n, n == 1 ? "" : "s");
  if (n == 0) return;
  if (const char* code = std::getenv("CUCPU_CHECK_ERROR_EXITCODE")) {
    std::fflush(nullptr);
    std::_Exit(std::atoi(code));
  }
}

}  // namespace

__attribute__((constructor)) void init_from_env() {
  const char* v = std::getenv("CUCPU_CHECK");
  if (!v || !*v || std::strcmp(v, "0") == 0) return;
  g_on.store(true, std::memory_order_relaxed);
  checker();
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
  join(st.clock, t_thread.clock);
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
  rec->where = describe_stream(s, st);
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

void ran(const Op* op, const std::vector<MemAccess>& touched) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  auto it = c.pending_run.find(op);
  if (it == c.pending_run.end()) return;
  RecordRef rec = std::move(it->second);
  c.pending_run.erase(it);
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
  join(t_thread.clock, state_of(c, s).clock);
}

void host_waited_event(Event* e) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  auto it = c.events.find(e);
  if (it != c.events.end()) join(t_thread.clock, it->second);
}

void host_waited_context(Context* ctx) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  for (auto& [s, st] : c.streams)
    if (!ctx || st.ctx == ctx) join(t_thread.clock, st.clock);
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
  t_thread.clock = std::move(it->second);  // a worker's earlier host functions say nothing of this one
  c.host_functions.erase(it);
}

void memory_renewed(uintptr_t base, size_t) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  c.shadow.erase(base);
}

uint64_t reports() { return checker().reports.load(); }

}  // namespace cucpu::check
