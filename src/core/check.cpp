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
#include "core/check_internal.h"
#include "core/context.h"
#include "core/event.h"
#include "core/stream.h"
#include "devrt/check_rt.h"
#include "symbols/symbolize.h"

namespace cucpu::check {

std::atomic<bool> g_on{false};

namespace {

using detail::bucket_of;
using detail::kPrintedReports;

using Clock = std::vector<uint32_t>;

void join(Clock& into, const Clock& from) {
  if (from.size() > into.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

constexpr int kFrames = 24;
constexpr size_t kBucketRecords = 512;  // accesses kept per allocation; older ones are forgotten

// One enqueued op (or group): its clock, and where the program enqueued it.
struct Record {
  uint64_t id = 0;
  uint32_t actor = 0, epoch = 0;
  Clock clock;
  std::string what;    // the op's trace name
  std::string where;   // "stream 0x... (ctx N)"
  const Stream* stream = nullptr;
  std::shared_ptr<const PartOrder> order;  // a graph launch: how its nodes (parts) are ordered
  bool at_call = false;  // a read during an API call, out of stream order (source_read_during_call)
  bool graph = false;    // a graph launch: its parts are nodes (ordered by `order`; unchecked without one)
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

// A new record: work of `actor` at the last tick of `clock`, enqueued (or,
// for the host, done) on `s` from the call whose frames are given.
std::shared_ptr<Record> new_record(uint64_t id, uint32_t actor, const Clock& clock, std::string what, Stream* s,
                                   void* const* frames, int depth) {
  auto rec = std::make_shared<Record>();
  rec->id = id;
  rec->actor = actor;
  rec->epoch = clock[actor];
  rec->clock = clock;
  rec->what = std::move(what);
  rec->where = s->describe();
  rec->stream = s;
  std::memcpy(rec->frames, frames, sizeof rec->frames);
  rec->depth = depth;
  return rec;
}

// a happens before b (a recorded first). Parts of one op: the copies of a
// batch are never ordered; the nodes of a graph launch by its edges (a
// graph too big for an order counts as ordered: its nodes go unchecked).
bool ordered(const Access& a, const Access& b) {
  if (a.rec != b.rec) return before(*a.rec, *b.rec);
  if (a.range.part == b.range.part || !a.range.part || !b.range.part) return true;
  if (!a.rec->graph) return false;
  return !a.rec->order || a.rec->order->before(a.range.part, b.range.part);
}

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
  struct Pending {
    RecordRef rec;
    uint32_t part = 0;  // the graph node the op is
  };
  std::unordered_map<const Op*, Pending> pending_run;    // kernels not run yet
  std::unordered_map<const Op*, std::shared_ptr<const PartOrder>> launch_orders;  // graph launches about to be enqueued, by join
  std::unordered_map<const Op*, uint32_t> node_ops;      // ops about to be enqueued that are one graph node each
  std::set<std::tuple<uint64_t, uint32_t, uint32_t>> node_pairs_reported;
  std::unordered_map<const Op*, Clock> host_functions;   // host functions not begun yet
  std::unordered_map<uintptr_t, std::vector<Access>> shadow;  // by allocation base (or MiB of host memory)
  std::unordered_map<uintptr_t, const Stream*> attached;      // managed memory attached to one stream
  std::set<std::pair<uintptr_t, const Stream*>> attach_reported;
  std::set<std::pair<uint64_t, uint64_t>> reported;
  uint32_t next_actor = 1;  // actor 0: the host, for reads during API calls
  uint32_t host_epoch = 0;  // actor 0's last epoch
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
    // This library's frame is the entry point the program called, by name;
    // the program's frames by function, file and line where it has them.
    if (dladdr(r.frames[i], &d) && d.dli_fbase == self.dli_fbase && d.dli_sname)
      std::fprintf(stderr, "      #%d %s (libcuda.so.1)\n", k, d.dli_sname);
    else
      std::fprintf(stderr, "      #%d %s\n", k, symbols::describe_return_address(r.frames[i]).c_str());
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
  if (a.rec->at_call || b.rec->at_call)
    std::fprintf(stderr,
                 "  a copy's source with srcAccessOrder DURING_API_CALL or ANY is read out of stream order: the stream's "
                 "earlier work must not touch it (undefined), and no host synchronization lies between them\n");
  else
    std::fprintf(stderr,
                 "  nothing orders the two: no stream order, event wait, legacy-stream rule, graph launch or host "
                 "synchronization lies between them\n");
}

// Two nodes of one graph launch that no edge path orders.
void report_nodes(Checker& c, const Access& old, const Access& now) {
  const PartOrder& order = *now.rec->order;
  const auto parts = std::minmax(old.range.part, now.range.part);
  if (!c.node_pairs_reported.insert({order.id, parts.first, parts.second}).second) return;
  const uint64_t n = c.reports.fetch_add(1) + 1;
  if (n > kPrintedReports) return;
  const uintptr_t lo = std::max(old.range.lo, now.range.lo), hi = std::min(old.range.hi, now.range.hi);
  std::fprintf(stderr, "cucpu check: race on [0x%" PRIxPTR ", 0x%" PRIxPTR ") (%zu bytes) between two nodes of one graph launch\n",
               lo, hi, static_cast<size_t>(hi - lo));
  const Access& a = old.range.part < now.range.part ? old : now;
  const Access& b = old.range.part < now.range.part ? now : old;
  for (const Access* x : {&a, &b})
    std::fprintf(stderr, "  %s by %s\n", x->range.write ? "written" : "read", order.names[x->range.part - 1].c_str());
  std::fprintf(stderr, "  no path of graph edges leads from either node to the other; the graph was launched on %s at\n",
               now.rec->where.c_str());
  print_frames(*now.rec);
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
    if (overlap && old.rec == rec && !rec->graph && old.range.part != m.part && old.range.part && m.part &&
        (old.range.write || m.write) && c.reported.insert({rec->id, rec->id}).second)
      report_undefined(c, "copies of one batch depend on each other (undefined: they run in no set order; here in list order):",
                       old, &now);
    // A race needs a plain write: atomics among themselves, and a plain
    // read of what atomics change, are not reported.
    const bool plain_write = (old.range.write && !old.range.atomic) || (m.write && !m.atomic);
    if (overlap && plain_write && (old.rec != rec || rec->order) && !ordered(old, now) && !ordered(now, old)) {
      if (old.rec == rec) report_nodes(c, old, now);
      else report(c, old, now);
    }
    // An access ordered before this one and inside its range adds nothing
    // a later check needs when this one writes, or both read.
    const bool covered = old.range.lo >= m.lo && old.range.hi <= m.hi && ordered(old, now) &&
                         (m.write || !old.range.write) && old.range.atomic == m.atomic;
    if (!covered) list[kept++] = old;
  }
  list.resize(kept);
  list.push_back(now);
  if (list.size() > kBucketRecords) list.erase(list.begin(), list.begin() + (list.size() - kBucketRecords));
}


void at_exit() {
  const detail::KernelCounts& k = detail::kernel_counts();
  const uint64_t n = checker().reports.load(), bad = k.invalid.load(), shared = k.shared_races.load(),
                 barriers = k.barriers.load(), unwritten = k.uninitialized.load();
  std::fprintf(stderr, "cucpu check: %" PRIu64 " race%s found\n", n, n == 1 ? "" : "s");
  if (bad) std::fprintf(stderr, "cucpu check: %" PRIu64 " invalid kernel access%s found\n", bad, bad == 1 ? "" : "es");
  if (shared) std::fprintf(stderr, "cucpu check: %" PRIu64 " shared-memory race%s found\n", shared, shared == 1 ? "" : "s");
  if (barriers) std::fprintf(stderr, "cucpu check: %" PRIu64 " divergent barrier%s found\n", barriers, barriers == 1 ? "" : "s");
  if (unwritten)
    std::fprintf(stderr, "cucpu check: %" PRIu64 " uninitialized read%s found\n", unwritten, unwritten == 1 ? "" : "s");
  if (n == 0 && bad == 0 && shared == 0 && barriers == 0 && unwritten == 0) return;
  if (const char* code = std::getenv("CUCPU_CHECK_ERROR_EXITCODE")) {
    std::fflush(nullptr);
    std::_Exit(std::atoi(code));
  }
}

}  // namespace


__attribute__((constructor)) void init_from_env() {
  if (!devrt::instrument_accesses()) return;  // the one reading of CUCPU_CHECK
  g_on.store(true, std::memory_order_relaxed);
  checker();
  const char* init = std::getenv("CUCPU_CHECK_INIT");
  detail::install_kernel_hooks(init && *init && std::strcmp(init, "0") != 0);
  std::atexit(at_exit);
}

void enqueued(Stream* s, Op* const* parts, size_t n, Op* join_op) {
  void* frames[kFrames];
  const int depth = backtrace(frames, kFrames);
  std::vector<MemAccess> touched;
  std::vector<std::pair<const Op*, size_t>> from;  // each op's first access in `touched`
  bool when_run = false;
  auto collect = [&](const Op* op) {
    from.emplace_back(op, touched.size());
    op->accesses(touched);
    when_run |= op->accesses_when_run();
  };
  for (size_t i = 0; i < n; ++i) collect(parts[i]);
  collect(join_op);

  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  std::shared_ptr<const PartOrder> order;
  bool graph = false;
  if (auto it = c.launch_orders.find(join_op); it != c.launch_orders.end()) {
    graph = true;
    order = std::move(it->second);
    c.launch_orders.erase(it);
  }
  auto node_of = [&](const Op* op) -> uint32_t {
    if (c.node_ops.empty()) return 0;
    auto it = c.node_ops.find(op);
    if (it == c.node_ops.end()) return 0;
    const uint32_t part = it->second;
    c.node_ops.erase(it);
    return part;
  };
  std::unordered_map<const Op*, uint32_t> part_of;  // this group's ops that are one node each
  for (size_t k = 0; k < from.size(); ++k)
    if (const uint32_t part = node_of(from[k].first)) {
      part_of[from[k].first] = part;
      const size_t end = k + 1 < from.size() ? from[k + 1].second : touched.size();
      for (size_t i = from[k].second; i < end; ++i)
        if (!touched[i].part) touched[i].part = part;
    }
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

  auto rec = new_record(c.next_record++, st.actor, st.clock,
                        n > 0 ? parts[0]->trace_name() + (n > 1 ? " (" + std::to_string(n) + " parts)" : "")
                              : join_op->trace_name(),
                        s, frames, depth);
  rec->order = std::move(order);
  rec->graph = graph;
  RecordRef ref = rec;
  for (const MemAccess& m : touched) {
    add_access(c, m, ref);
    if (m.atomic && m.write) join(c.flags[m.lo], st.clock);
  }
  if (when_run) {
    auto pend = [&](const Op* op) {
      auto it = part_of.find(op);
      c.pending_run[op] = Checker::Pending{ref, it == part_of.end() ? 0 : it->second};
    };
    for (size_t i = 0; i < n; ++i)
      if (parts[i]->accesses_when_run()) pend(parts[i]);
    if (join_op->accesses_when_run()) pend(join_op);
  }
  if (join_op->runs_program_code()) c.host_functions[join_op] = st.clock;
}

void source_read_during_call(Stream* s, const Copy3D& copy, size_t index, bool any) {
  std::vector<MemAccess> touched;
  copy_accesses(copy, touched);
  void* frames[kFrames];
  const int depth = backtrace(frames, kFrames);
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  // The host as an actor (0): its clock knows what it has seen complete;
  // everything enqueued afterwards joins it, so comes after this read.
  Clock& host = host_clock();
  if (host.empty()) host.resize(1, 0);
  host[0] = ++c.host_epoch;  // one count for every thread: like the rest of the host's clock, shared
  auto rec = new_record(c.next_record++, 0, host,
                        "the source of batch copy " + std::to_string(index) + ", read during the API call (srcAccessOrder " +
                            (any ? "ANY" : "DURING_API_CALL") + ")",
                        s, frames, depth);
  rec->at_call = true;
  RecordRef ref = rec;
  for (const MemAccess& m : touched)
    if (!m.write) add_access(c, m, ref);
}

void ran(const Op* op, const std::vector<MemAccess>& touched, bool last, uint32_t part) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  auto it = c.pending_run.find(op);
  if (it == c.pending_run.end()) return;
  RecordRef rec = it->second.rec;
  if (!part) part = it->second.part;
  if (last) c.pending_run.erase(it);
  for (MemAccess m : touched) {
    if (!m.part) m.part = part;
    add_access(c, m, rec);
  }
}

void graph_parts(const Op* join_op, std::shared_ptr<const PartOrder> order,
                 const std::vector<std::pair<const Op*, uint32_t>>& node_ops) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  c.launch_orders[join_op] = std::move(order);
  for (const auto& [op, part] : node_ops) c.node_ops[op] = part;
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

void memory_renewed(const Allocation& a) {
  detail::init_tracking_starts(a);
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  c.shadow.erase(a.base);
  c.attached.erase(a.base);
}

void memory_released(uintptr_t base) { detail::init_tracking_ends(base); }

void memory_attached(uintptr_t base, Stream* single) {
  Checker& c = checker();
  std::lock_guard<std::mutex> g(c.mu);
  if (single) c.attached[base] = single;
  else c.attached.erase(base);
}

uint64_t reports() {
  const detail::KernelCounts& k = detail::kernel_counts();
  return checker().reports.load() + k.invalid.load() + k.shared_races.load() + k.barriers.load() + k.uninitialized.load();
}

}  // namespace cucpu::check
