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
#include <vector>

#include "base/thread_heap.h"
#include "exec/op.h"
#include "exec/scheduler.h"
#include "exec/spin_lock.h"

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
  const void* track;  // kRun, kPart: the timeline
  uint32_t a;         // kRun: the op; kCall: the call; kEnqueue: the op; kLink: the op before
  int32_t b;          // kCall: the CUresult; kEnqueue: the call; kLink: the op after
  uint32_t name;      // kRun, kCall, kPart: index into the names table
  Kind kind;
};

// One thread's events, a ring of g_capacity. The owner appends under `mu`
// (never contended but at exit, when the writer reads).
struct Buffer {
  SpinLock mu;
  std::vector<Event> events;
  size_t next = 0;           // once full: the oldest event, overwritten next
  uint64_t overwritten = 0;
  long tid = 0;
  bool worker = false;
  // Oldest first.
  std::vector<Event> in_order() {
    std::vector<Event> out;
    out.reserve(events.size());
    out.insert(out.end(), events.begin() + static_cast<std::ptrdiff_t>(next), events.end());
    out.insert(out.end(), events.begin(), events.begin() + static_cast<std::ptrdiff_t>(next));
    events.clear();
    events.shrink_to_fit();
    return out;
  }
};
std::atomic<bool> g_wrap_told{false};

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

thread_local Buffer* t_buffer = nullptr;
thread_local uint32_t t_call = 0;

Buffer& buffer() {
  if (t_buffer) return *t_buffer;
  auto b = std::make_unique<Buffer>();
  b->tid = static_cast<long>(syscall(SYS_gettid));
  b->worker = Scheduler::on_worker_thread();
  b->events.reserve(g_capacity);  // address space only: pages are touched as events arrive
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  t_buffer = b.get();
  s.buffers.push_back(std::move(b));
  return *t_buffer;
}

// Names are interned in the shared table once per thread and name; the
// thread's own cache answers after that, without the lock.
uint32_t name_id(const std::string& n) {
  thread_local ThreadHeap<std::unordered_map<std::string, uint32_t>> heap;  // base/thread_heap.h
  auto& mine = heap.get();
  if (auto it = mine.find(n); it != mine.end()) return it->second;
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  auto [it, fresh] = s.name_ids.emplace(n, static_cast<uint32_t>(s.names.size()));
  if (fresh) s.names.push_back(n);
  mine.emplace(n, it->second);
  return it->second;
}

void append(const Event& e) {
  Buffer& b = buffer();
  SpinLockGuard g(b.mu);
  if (b.events.size() < g_capacity) {
    b.events.push_back(e);
    return;
  }
  if (b.overwritten++ == 0 && !g_wrap_told.exchange(true))
    std::fprintf(stderr,
                 "[cucpu] trace: a thread's buffer of %zu events is full: from now on each thread's oldest events are "
                 "overwritten, and the file holds each thread's last %zu (CUCPU_TRACE_BUFFER sets the size)\n",
                 g_capacity, g_capacity);
  b.events[b.next] = e;
  b.next = (b.next + 1) % g_capacity;
}

void json_string(FILE* f, const std::string& s) {
  std::fputc('"', f);
  for (char c : s) {
    if (c == '"' || c == '\\') std::fputc('\\', f);
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    std::fputc(c, f);
  }
  std::fputc('"', f);
}

void write_all() {
  State& s = state();
  g_on.store(false, std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(s.mu);
  std::vector<std::pair<Buffer*, std::vector<Event>>> all;
  uint64_t dropped = 0;
  for (auto& b : s.buffers) {
    SpinLockGuard bg(b->mu);
    all.emplace_back(b.get(), b->in_order());
    dropped += b->overwritten;
  }
  // Tracks: one per timeline (in order of first use), one per thread.
  struct Run {
    long track, thread;
    uint64_t t0, t1;
  };
  std::map<const void*, long> timeline_tid;
  std::unordered_map<uint32_t, std::pair<long, uint64_t>> call_at;  // call -> (thread, start)
  std::unordered_map<uint32_t, uint32_t> enqueued_by;                // op -> call
  std::unordered_map<uint32_t, Run> runs;                            // op -> its run
  uint64_t t_min = UINT64_MAX;
  for (auto& [b, evs] : all)
    for (const Event& e : evs) {
      if (e.kind == kRun || e.kind == kCall || e.kind == kPart) t_min = std::min(t_min, e.t0);
      if ((e.kind == kRun || e.kind == kPart) && !timeline_tid.count(e.track))
        timeline_tid[e.track] = 1000000 + static_cast<long>(timeline_tid.size());
      if (e.kind == kCall) call_at[e.a] = {b->tid, e.t0};
      if (e.kind == kEnqueue) enqueued_by[e.a] = static_cast<uint32_t>(e.b);
      if (e.kind == kRun) runs[e.a] = Run{timeline_tid[e.track], b->tid, e.t0, e.t1};
    }
  if (t_min == UINT64_MAX) t_min = 0;
  const uint64_t end_ticks = now();
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - s.start_time).count();
  const double ns_per_tick = end_ticks > s.start_ticks ? ns / static_cast<double>(end_ticks - s.start_ticks) : 1.0;
  auto us = [&](uint64_t t) { return static_cast<double>(t - t_min) * ns_per_tick / 1000.0; };
  FILE* f = std::fopen(s.path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "[cucpu] trace: cannot write %s\n", s.path.c_str());
    return;
  }
  std::fprintf(f, "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"cucpu\"}}");
  for (auto& [tl, tid] : timeline_tid) {
    auto it = s.labels.find(tl);
    std::fprintf(f, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%ld,\"name\":\"thread_name\",\"args\":{\"name\":", tid);
    json_string(f, it != s.labels.end() ? it->second : "timeline");
    std::fprintf(f, "}}");
  }
  int worker_no = 0;
  for (auto& [b, evs] : all) {
    std::string label = b->worker ? "worker " + std::to_string(worker_no++) : "host thread " + std::to_string(b->tid);
    std::fprintf(f, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%ld,\"name\":\"thread_name\",\"args\":{\"name\":", b->tid);
    json_string(f, label);
    std::fprintf(f, "}}");
  }
  uint64_t flow = 1;
  auto flow_pair = [&](const char* cat, long from_tid, uint64_t from_t, long to_tid, uint64_t to_t) {
    std::fprintf(f, ",\n{\"ph\":\"s\",\"pid\":1,\"tid\":%ld,\"ts\":%.3f,\"id\":%" PRIu64 ",\"cat\":\"%s\",\"name\":\"%s\"}",
                 from_tid, us(from_t), flow, cat, cat);
    std::fprintf(f, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":%ld,\"ts\":%.3f,\"id\":%" PRIu64
                    ",\"cat\":\"%s\",\"name\":\"%s\"}",
                 to_tid, us(to_t), flow, cat, cat);
    ++flow;
  };
  struct Stat {
    uint64_t ops = 0, busy = 0, first = UINT64_MAX, last = 0;
  };
  std::map<const void*, Stat> stats;
  for (auto& [b, evs] : all)
    for (const Event& e : evs) {
      if (e.kind == kCall) {
        std::fprintf(f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%ld,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"api\",\"name\":", b->tid,
                     us(e.t0), us(e.t1) - us(e.t0));
        json_string(f, s.names[e.name]);
        std::fprintf(f, ",\"args\":{\"call\":%u,\"result\":%d}}", e.a, e.b);
        continue;
      }
      if (e.kind == kLink) {
        auto p = runs.find(e.a), q = runs.find(static_cast<uint32_t>(e.b));
        if (p != runs.end() && q != runs.end() && p->second.track != q->second.track)
          flow_pair("dependency", p->second.track, p->second.t1, q->second.track, q->second.t0);
        continue;
      }
      if (e.kind == kPart) {  // inside its op's slice, on both of the op's tracks
        for (long tid : {timeline_tid[e.track], b->tid}) {
          std::fprintf(f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%ld,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"node\",\"name\":", tid,
                       us(e.t0), us(e.t1) - us(e.t0));
          json_string(f, s.names[e.name]);
          std::fprintf(f, "}");
        }
        continue;
      }
      if (e.kind != kRun) continue;
      const std::string& name = s.names[e.name];
      const long ttid = timeline_tid[e.track];
      auto by = enqueued_by.find(e.a);
      const uint32_t call = by != enqueued_by.end() ? by->second : 0;
      for (long tid : {ttid, b->tid}) {
        std::fprintf(f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%ld,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"op\",\"name\":", tid,
                     us(e.t0), us(e.t1) - us(e.t0));
        json_string(f, name);
        std::fprintf(f, ",\"args\":{\"op\":%u,\"call\":%u}}", e.a, call);
      }
      auto c = call_at.find(call);
      if (call && c != call_at.end()) flow_pair("enqueue", c->second.first, c->second.second, ttid, e.t0);
      Stat& st = stats[e.track];
      ++st.ops;
      st.busy += e.t1 - e.t0;
      st.first = std::min(st.first, e.t0);
      st.last = std::max(st.last, e.t1);
    }
  std::fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"overwritten_events\":%" PRIu64 "}}\n", dropped);
  std::fclose(f);
  if (dropped)
    std::fprintf(stderr, "[cucpu] trace: %" PRIu64 " older events were overwritten (each thread keeps its last %zu)\n", dropped,
                 g_capacity);
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
    if (n >= 16) g_capacity = static_cast<size_t>(n);
  }
  s.start_time = std::chrono::steady_clock::now();
  s.start_ticks = now();
  std::atexit(write_all);
  g_on.store(true, std::memory_order_relaxed);
  g_op_hooks.store(true, std::memory_order_relaxed);
}

}  // namespace


uint32_t current_call() { return t_call; }

uint32_t next_op_id() { return state().next_op.fetch_add(1, std::memory_order_relaxed); }

void enqueued(uint32_t op_id) {
  if (op_id && t_call) append(Event{0, 0, nullptr, op_id, static_cast<int32_t>(t_call), 0, kEnqueue});
}

void linked(uint32_t pred, uint32_t succ) {
  if (succ) append(Event{0, 0, nullptr, pred, static_cast<int32_t>(succ), 0, kLink});
}

Call call_begin() {
  Call c{state().next_call.fetch_add(1, std::memory_order_relaxed), t_call, now()};
  t_call = c.id;
  return c;
}

void call_end(const char* name, const Call& c, int result) {
  t_call = c.outer;
  // Entry names are string literals: known by address after the first call.
  thread_local ThreadHeap<std::unordered_map<const char*, uint32_t>> heap;  // base/thread_heap.h
  auto& by_address = heap.get();
  auto [it, fresh] = by_address.try_emplace(name, 0);
  if (fresh) it->second = name_id(name);
  append(Event{c.t0, now(), nullptr, c.id, result, it->second, kCall});
}

void op_ran(const Op* op, const void* timeline, uint64_t t0, uint64_t t1) {
  if (op->trace_id) append(Event{t0, t1, timeline, op->trace_id, 0, name_id(op->trace_name()), kRun});
}

void part_ran(const void* timeline, const std::string& name, uint64_t t0, uint64_t t1) {
  append(Event{t0, t1, timeline, 0, 0, name_id(name), kPart});
}

void name_timeline(const void* timeline, std::string label) {
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  s.labels[timeline] = std::move(label);
}

}  // namespace cucpu::trace
