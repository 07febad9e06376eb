#include "exec/trace.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <thread>
#include <vector>

#include "base/fault_ahead.h"
#include "base/thread_heap.h"
#include "exec/asymmetric_fence.h"
#include "exec/op.h"
#include "exec/scheduler.h"
#include "exec/trace_file.h"

namespace cucpu::trace {

std::atomic<bool> g_on{false};

namespace {

// Each thread keeps its last CUCPU_TRACE_BUFFER events (default 2^19, 20
// MiB a thread), overwriting the oldest: a long run's trace holds its end.
constexpr size_t kDefaultEvents = size_t{1} << 19;
size_t g_capacity = kDefaultEvents;

enum Kind : uint8_t { kRun, kCall, kEnqueue, kLink, kPart };
struct Event {
  uint64_t t0, t1;
  const void* track;  // kRun, kPart: the timeline; kCall: the entry's name (a string literal)
  uint32_t a;         // kRun: the op; kCall: the call; kEnqueue: the op; kLink: the op before
  int32_t b;          // kCall: the CUresult; kEnqueue: the call; kLink: the op after
  uint32_t name;      // kRun, kPart: index into the names table; kCall: the first op it enqueued (0: none)
  Kind kind;
};

// Ids are handed to threads in blocks: a thread numbers its ops and calls
// without a shared read-modify-write.
constexpr uint32_t kIdBlock = 1024;

// Events reach the ring through a small stage that stays in the cache: a
// full stage is streamed into the ring with non-temporal stores, so that
// an event costs a store to a warm line, not a miss on a cold one.
constexpr size_t kStageEvents = 4096;  // 160 KiB

// One thread's events: a stage, and a ring of g_capacity behind it, whose
// pages a background thread faults in ahead of the flushes (a fresh page's
// fault would cost the thread 16 ns an event, base/fault_ahead.h). Only
// the owner appends; the writer reads at exit, once `writing` is false after
// tracing stopped (append(): the owner's store to `writing` and the
// writer's to g_on are ordered by an asymmetric fence,
// exec/asymmetric_fence.h).
struct Buffer {
  std::atomic<bool> writing{false};
  size_t staged = 0;
  Event stage[kStageEvents];
  std::unique_ptr<FaultAheadMapping> ring_memory;
  Event* ring;                    // g_capacity events (null if the mapping failed: events are lost)
  size_t filled = 0;              // events in the ring (at most g_capacity)
  size_t next = 0;                // where the next event goes: once full, the oldest
  uint64_t overwritten = 0;
  uint64_t lost = 0;  // events dropped because the ring could not be mapped
  long tid = 0;
  bool worker = false;
  uint32_t next_op = 0, ops_end = 0, next_call = 0, calls_end = 0;  // this thread's blocks of ids
  // Names built from keys (keyed_name): a direct-mapped cache of 64.
  struct Keyed {
    uint64_t key = 0;
    uint32_t epoch = 0, id = 0;
  } keyed[64];
  Buffer()
      : ring_memory(std::make_unique<FaultAheadMapping>(g_capacity * sizeof(Event))),
        ring(static_cast<Event*>(ring_memory->data())) {}
  // Oldest first; the staged events included.
  std::vector<Event> in_order() {
    flush();
    std::vector<Event> out;
    out.reserve(filled);
    if (filled == g_capacity) out.insert(out.end(), ring + next, ring + g_capacity);
    out.insert(out.end(), ring, ring + (filled == g_capacity ? next : filled));
    ring_memory.reset();
    ring = nullptr;
    filled = next = 0;
    return out;
  }
  // Moves the staged events into the ring, overwriting its oldest once full.
  void flush();
};
// Each of the trace's warnings is printed once a process: the first
// thread to find its flag clear prints it.
std::atomic<bool> g_wrap_told{false};
std::atomic<bool> g_unmapped_told{false};
bool first_to_tell(std::atomic<bool>& told) {
  return !told.load(std::memory_order_relaxed) && !told.exchange(true);
}

struct State {
  std::mutex mu;  // guards buffers, names and labels
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<std::string> names;
  std::map<std::string, uint32_t> name_ids;
  std::map<const void*, std::string> labels;
  std::string path;
  bool summary = false;
  std::atomic<uint32_t> next_call{1};
  std::atomic<uint32_t> next_op{1};
  // now() and steady_clock read together when tracing starts (and again at
  // the end): the scale from now() ticks to nanoseconds.
  uint64_t start_ticks = 0;
  std::chrono::steady_clock::time_point start_time;
};
State& state() {
  static State* s = new State();  // outlives every thread (written at exit)
  return *s;
}

// Initial-exec: a few words of the static TLS block (tests/loading keeps it small), no __tls_get_addr on the hot path.
__attribute__((tls_model("initial-exec"))) thread_local Buffer* t_buffer = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local uint32_t t_call = 0;
// The current call's first enqueued op: its call event names it, so most
// calls (one op) record no enqueue event of their own.
__attribute__((tls_model("initial-exec"))) thread_local uint32_t t_first_enqueued = 0;

// The calling thread's buffer, made on its first event.
[[gnu::noinline, gnu::cold]] Buffer& new_buffer() {
  auto b = std::make_unique<Buffer>();
  b->tid = static_cast<long>(syscall(SYS_gettid));
  b->worker = Scheduler::on_worker_thread();
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  t_buffer = b.get();
  s.buffers.push_back(std::move(b));
  return *t_buffer;
}
inline Buffer& buffer() { return t_buffer ? *t_buffer : new_buffer(); }

// A name's id in the shared table, added if new. The caller holds s.mu.
uint32_t intern_locked(State& s, const std::string& n) {
  auto [it, fresh] = s.name_ids.emplace(n, static_cast<uint32_t>(s.names.size()));
  if (fresh) s.names.push_back(n);
  return it->second;
}

// Names are interned in the shared table once per thread and name; the
// thread's own cache answers after that, without the lock.
uint32_t name_id(const std::string& n) {
  thread_local ThreadHeap<std::unordered_map<std::string, uint32_t>> heap;  // base/thread_heap.h
  auto& mine = heap.get();
  if (auto it = mine.find(n); it != mine.end()) return it->second;
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  const uint32_t id = intern_locked(s, n);
  mine.emplace(n, id);
  return id;
}

// Bumped when keys may come to name something else (names_may_change).
std::atomic<uint32_t> g_name_epoch{0};

// Whether the kernel gives the asymmetric fence; else both sides use full fences.
bool g_light = false;

// Copies n events without pulling the destination into the cache.
void stream_copy(Event* dst, const Event* src, size_t n) {
#if defined(__x86_64__)
  static_assert(sizeof(Event) % 8 == 0);
  auto* d = reinterpret_cast<long long*>(dst);
  const auto* from = reinterpret_cast<const unsigned char*>(src);
  for (size_t i = 0; i < n * sizeof(Event) / 8; ++i) {
    long long w;
    std::memcpy(&w, from + 8 * i, 8);
    _mm_stream_si64(d + i, w);
  }
  _mm_sfence();  // the stores are weakly ordered: done before `writing` is released
#else
  std::memcpy(dst, src, n * sizeof(Event));
#endif
}

void Buffer::flush() {
  const Event* from = stage;
  size_t n = staged;
  staged = 0;
  if (!ring) [[unlikely]] {
    lost += n;
    if (first_to_tell(g_unmapped_told))
      std::fprintf(stderr,
                   "[cucpu] trace: no memory for a thread's buffer of %zu events: that thread's events are lost "
                   "(a smaller CUCPU_TRACE_BUFFER may fit)\n",
                   g_capacity);
    return;
  }
  if (n > g_capacity) {  // all but the last g_capacity would be overwritten at once
    overwritten += n - g_capacity;
    from += n - g_capacity;
    n = g_capacity;
  }
  while (n) {
    const size_t take = std::min(n, g_capacity - next);
    if (filled + take > g_capacity) overwritten += filled + take - g_capacity;
    stream_copy(ring + next, from, take);
    filled = std::min(g_capacity, filled + take);
    next = (next + take) % g_capacity;
    from += take;
    n -= take;
  }
  if (filled < g_capacity) ring_memory->reached(next * sizeof(Event));
  if (overwritten && first_to_tell(g_wrap_told))
    std::fprintf(stderr,
                 "[cucpu] trace: a thread's buffer of %zu events is full: from now on each thread's oldest events are "
                 "overwritten, and the file holds each thread's last %zu (CUCPU_TRACE_BUFFER sets the size)\n",
                 g_capacity, g_capacity);
}

// The fields are stored straight into the stage: an Event built by the
// caller and copied would be read back in wider loads than its fields were
// written with, a store-forwarding stall on every event.
[[gnu::always_inline]] inline void append(Kind kind, uint64_t t0, uint64_t t1, const void* track, uint32_t a,
                                          int32_t bb, uint32_t name) {
  Buffer& b = buffer();
  b.writing.store(true, std::memory_order_relaxed);
  if (g_light) light_fence();
  else std::atomic_thread_fence(std::memory_order_seq_cst);
  struct Done {
    Buffer& b;
    ~Done() { b.writing.store(false, std::memory_order_release); }
  } done{b};
  if (!g_on.load(std::memory_order_relaxed)) return;  // the writer has begun: too late
  Event& e = b.stage[b.staged];
  e.t0 = t0;
  e.t1 = t1;
  e.track = track;
  e.a = a;
  e.b = bb;
  e.name = name;
  e.kind = kind;
  if (++b.staged == kStageEvents) [[unlikely]] b.flush();
}

// A timeline's figures for the summary (CUCPU_TRACE_SUMMARY).
struct Stat {
  uint64_t ops = 0, busy = 0, first = UINT64_MAX, last = 0;
};

// Perfetto's protobuf when asked (CUCPU_TRACE_FORMAT=perfetto, or a file
// named *.pftrace or *.perfetto-trace), else Chrome JSON.
bool perfetto_format(const std::string& path) {
  if (const char* f = std::getenv("CUCPU_TRACE_FORMAT"); f && *f) return std::strcmp(f, "perfetto") == 0;
  auto ends_with = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  return ends_with(".pftrace") || ends_with(".perfetto-trace");
}

void write_all() {
  State& s = state();
  g_on.store(false, std::memory_order_relaxed);
  if (g_light) heavy_fence();
  else std::atomic_thread_fence(std::memory_order_seq_cst);
  std::lock_guard<std::mutex> g(s.mu);
  std::vector<std::pair<Buffer*, std::vector<Event>>> all;
  TraceFile file;
  file.names = &s.names;
  for (auto& b : s.buffers) {
    while (b->writing.load(std::memory_order_acquire)) std::this_thread::yield();  // an append in flight
    all.emplace_back(b.get(), b->in_order());
    file.overwritten += b->overwritten;
    file.lost += b->lost;
  }
  // Entry names, recorded by address, join the table (s.mu is held).
  std::unordered_map<const void*, uint32_t> entry_names;
  std::unordered_map<uint32_t, uint32_t> enqueued_by;  // op -> call
  for (auto& [b, evs] : all)
    for (Event& e : evs)
      if (e.kind == kCall) {
        if (e.name) enqueued_by[e.name] = e.a;
        auto [it, fresh] = entry_names.try_emplace(e.track, 0);
        if (fresh) it->second = intern_locked(s, static_cast<const char*>(e.track));
        e.name = it->second;
        e.track = nullptr;
      }
  // Tracks: one per timeline (in order of first use), one per thread.
  std::map<const void*, uint64_t> timeline_track;
  uint64_t t_min = UINT64_MAX;
  for (auto& [b, evs] : all)
    for (const Event& e : evs) {
      if (e.kind == kRun || e.kind == kCall || e.kind == kPart) t_min = std::min(t_min, e.t0);
      if ((e.kind == kRun || e.kind == kPart) && !timeline_track.count(e.track))
        timeline_track[e.track] = (uint64_t{1} << 23) + timeline_track.size();  // above pid_max's limit, 2^22
    }
  if (t_min == UINT64_MAX) t_min = 0;
  const uint64_t end_ticks = now();
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - s.start_time).count();
  const double ns_per_tick = end_ticks > s.start_ticks ? ns / static_cast<double>(end_ticks - s.start_ticks) : 1.0;
  auto at = [&](uint64_t t) { return static_cast<uint64_t>(static_cast<double>(t - std::min(t, t_min)) * ns_per_tick); };
  for (auto& [tl, id] : timeline_track) {
    auto it = s.labels.find(tl);
    file.tracks.push_back({id, it != s.labels.end() ? it->second : "timeline"});
  }
  int worker_no = 0;
  for (auto& [b, evs] : all)
    file.tracks.push_back({static_cast<uint64_t>(b->tid),
                           b->worker ? "worker " + std::to_string(worker_no++) : "host thread " + std::to_string(b->tid)});
  // Slices; each op's and node's twice, on its timeline's track and its thread's.
  std::unordered_map<uint32_t, uint32_t> call_slice, run_slice;  // call, op -> its slice (the timeline's, for ops)
  std::vector<std::pair<uint32_t, uint32_t>> links;              // op before, op after
  std::map<const void*, Stat> stats;
  auto slice = [&](uint64_t track, const Event& e, const char* cat) {
    file.slices.push_back({track, at(e.t0), at(e.t1), e.name, cat, {}, 0});
    return static_cast<uint32_t>(file.slices.size() - 1);
  };
  for (auto& [b, evs] : all) {
    // A thread records an op's nodes (kPart) before the op (kRun): they
    // wait here for the run that contains them.
    std::vector<uint32_t> parts;  // the timeline twin of each; the thread's is the next slice
    for (const Event& e : evs) {
      const auto tid = static_cast<uint64_t>(b->tid);
      switch (e.kind) {
        case kCall: {
          const uint32_t i = slice(tid, e, "api");
          file.slices[i].args[0] = {"call", e.a};
          file.slices[i].args[1] = {"result", e.b};
          file.slices[i].nargs = 2;
          call_slice[e.a] = i;
          break;
        }
        case kEnqueue: enqueued_by[e.a] = static_cast<uint32_t>(e.b); break;
        case kLink: links.emplace_back(e.a, static_cast<uint32_t>(e.b)); break;
        case kPart:  // inside its op's slice, on both of the op's tracks
          parts.push_back(slice(timeline_track[e.track], e, "node"));
          slice(tid, e, "node");
          break;
        case kRun: {
          const uint32_t i = slice(timeline_track[e.track], e, "op");
          slice(tid, e, "op");
          run_slice[e.a] = i;
          std::erase_if(parts, [&](uint32_t p) {
            const TraceFile::Slice& s = file.slices[p];
            if (s.track != file.slices[i].track || s.t0 < file.slices[i].t0 || s.t1 > file.slices[i].t1) return false;
            file.slices[p].parent = i;
            file.slices[p + 1].parent = i + 1;
            return true;
          });
          Stat& st = stats[e.track];
          ++st.ops;
          st.busy += e.t1 - e.t0;
          st.first = std::min(st.first, e.t0);
          st.last = std::max(st.last, e.t1);
          break;
        }
      }
    }
  }
  for (auto& [op, i] : run_slice) {
    auto by = enqueued_by.find(op);
    const uint32_t call = by != enqueued_by.end() ? by->second : 0;
    for (uint32_t k : {i, i + 1}) {  // both of the op's slices name it and its call
      file.slices[k].args[0] = {"op", op};
      file.slices[k].args[1] = {"call", call};
      file.slices[k].nargs = 2;
    }
    auto c = call_slice.find(call);
    if (call && c != call_slice.end()) file.flows.push_back({c->second, i, file.slices[c->second].t0, "enqueue"});
  }
  for (auto [pred, succ] : links) {
    auto p = run_slice.find(pred), q = run_slice.find(succ);
    if (p != run_slice.end() && q != run_slice.end() && file.slices[p->second].track != file.slices[q->second].track)
      file.flows.push_back({p->second, q->second, file.slices[p->second].t1, "dependency"});
  }
  FILE* f = std::fopen(s.path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "[cucpu] trace: cannot write %s\n", s.path.c_str());
    return;
  }
  if (perfetto_format(s.path)) write_perfetto(f, file);
  else write_json(f, file);
  std::fclose(f);
  if (file.overwritten)
    std::fprintf(stderr, "[cucpu] trace: %" PRIu64 " older events were overwritten (each thread keeps its last %zu)\n",
                 file.overwritten, g_capacity);
  if (file.lost)
    std::fprintf(stderr, "[cucpu] trace: %" PRIu64 " events were lost (no memory for their threads' buffers)\n",
                 file.lost);
  std::fprintf(stderr, "[cucpu] trace written to %s\n", s.path.c_str());
  if (!s.summary) return;
  std::fprintf(stderr, "[cucpu] %-72s %8s %12s %12s\n", "timeline", "ops", "busy (us)", "idle (us)");
  for (auto& [tl, st] : stats) {
    auto it = s.labels.find(tl);
    const double span = static_cast<double>(st.last - st.first) * ns_per_tick / 1000.0,
                 busy = static_cast<double>(st.busy) * ns_per_tick / 1000.0;
    std::fprintf(stderr, "[cucpu] %-72s %8" PRIu64 " %12.1f %12.1f\n",
                 (it != s.labels.end() ? it->second : std::string("timeline")).substr(0, 72).c_str(), st.ops, busy,
                 span > busy ? span - busy : 0.0);
  }
}

__attribute__((constructor)) void start_tracing() {
  const char* p = std::getenv("CUCPU_TRACE");
  if (!p || !*p || std::strcmp(p, "0") == 0) return;
  State& s = state();
  s.path = p;
  const char* sum = std::getenv("CUCPU_TRACE_SUMMARY");
  s.summary = sum && *sum == '1';
  if (const char* cap = std::getenv("CUCPU_TRACE_BUFFER")) {
    const long long n = std::atoll(cap);
    // At most 2^44 events (640 TiB, beyond a process's address space): a
    // larger request fails to map (its events are counted lost) instead of
    // overflowing the ring's size.
    if (n >= 16) g_capacity = static_cast<size_t>(std::min(n, 1ll << 44));
  }
  s.start_time = std::chrono::steady_clock::now();
  s.start_ticks = now();
  g_light = heavy_fence_available();
  std::atexit(write_all);
  g_on.store(true, std::memory_order_relaxed);
  g_op_hooks.store(true, std::memory_order_relaxed);
}

}  // namespace


uint32_t current_call() { return t_call; }

uint32_t next_op_id() {
  Buffer& b = buffer();
  if (b.next_op == b.ops_end) {
    b.next_op = state().next_op.fetch_add(kIdBlock, std::memory_order_relaxed);
    b.ops_end = b.next_op + kIdBlock;
  }
  return b.next_op++;
}

void enqueued(uint32_t op_id) {
  if (!op_id || !t_call) return;
  if (!t_first_enqueued) t_first_enqueued = op_id;  // named by the call's own event
  else append(kEnqueue, 0, 0, nullptr, op_id, static_cast<int32_t>(t_call), 0);
}

void linked(uint32_t pred, uint32_t succ) {
  if (succ) append(kLink, 0, 0, nullptr, pred, static_cast<int32_t>(succ), 0);
}

Call call_begin() {
  Buffer& b = buffer();
  if (b.next_call == b.calls_end) {
    b.next_call = state().next_call.fetch_add(kIdBlock, std::memory_order_relaxed);
    b.calls_end = b.next_call + kIdBlock;
  }
  Call c{b.next_call++, t_call, now(), t_first_enqueued};
  t_call = c.id;
  t_first_enqueued = 0;
  return c;
}

void call_end(const char* name, const Call& c, int result) {
  t_call = c.outer;
  const uint32_t first = t_first_enqueued;
  t_first_enqueued = c.outer_enqueued;
  // Entry names are string literals: recorded by address, named when the file is written.
  append(kCall, c.t0, now(), name, c.id, result, first);
}

void op_ran(const Op* op, const void* timeline, uint64_t t0, uint64_t t1) {
  if (!op->trace_id) return;
  uint32_t name;
  if (const char* literal = op->trace_literal()) {  // known by its address
    name = keyed_name(name_key({reinterpret_cast<uintptr_t>(literal)}),
                      [](const void* l) { return std::string(static_cast<const char*>(l)); }, literal);
  } else if (const uint64_t key = op->trace_name_key()) {
    name = keyed_name(key, [](const void* o) { return static_cast<const Op*>(o)->trace_name(); }, op);
  } else {
    name = name_id(op->trace_name());
  }
  append(kRun, t0, t1, timeline, op->trace_id, 0, name);
}

void part_ran(const void* timeline, uint32_t name, uint64_t t0, uint64_t t1) {
  append(kPart, t0, t1, timeline, 0, 0, name);
}

uint32_t keyed_name(uint64_t key, std::string (*make)(const void*), const void* arg) {
  Buffer& b = buffer();
  const uint32_t epoch = g_name_epoch.load(std::memory_order_acquire);
  Buffer::Keyed& k = b.keyed[(key >> 7) % 64];
  if (k.key != key || k.epoch != epoch) k = {key, epoch, name_id(make(arg))};
  return k.id;
}

void names_may_change() { g_name_epoch.fetch_add(1, std::memory_order_release); }

void name_timeline(const void* timeline, std::string label) {
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  s.labels[timeline] = std::move(label);
}

}  // namespace cucpu::trace
