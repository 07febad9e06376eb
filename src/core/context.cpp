#include "core/context.h"

#include <algorithm>
#include <thread>

#include "core/capture.h"
#include "core/runtime.h"
#include "core/green_context.h"
#include "core/stream.h"
#include "exec/scheduler.h"

namespace cucpu {
namespace {
// A process-unique key per thread (thread ids can be reused; these are not).
uint64_t thread_key() {
  static std::atomic<uint64_t> next{1};
  thread_local uint64_t key = next.fetch_add(1, std::memory_order_relaxed);
  return key;
}
struct PerThreadCache {
  uint64_t ctx_id = 0;
  uint64_t generation = 0;
  Stream* stream = nullptr;
};
thread_local PerThreadCache t_pts;

// Every constructed context, for synchronize_all_contexts. A context leaves
// the list first thing in its destructor, so one found under the lock is
// alive (and its legacy stream still holds its handle reference) for as
// long as the lock is held.
std::mutex g_contexts_mu;
std::vector<Context*> g_contexts;  // guarded by g_contexts_mu
}  // namespace

Context::Context(Device* dev, unsigned flags, bool primary)
    : Context(dev, flags, primary, nullptr, this, &Scheduler::instance()) {}

Context::Context(Device* dev, unsigned flags, GreenContext* green, Context* owner, Scheduler* pool)
    : Context(dev, flags, false, green, owner, pool) {}

Context::Context(Device* dev, unsigned flags, bool primary, GreenContext* green, Context* owner, Scheduler* pool)
    : device(dev), primary(primary),
      id(rt().next_ctx_id.fetch_add(1, std::memory_order_relaxed)), flags(flags),
      green(green), owner(owner), pool(pool) {
  // A converted green context's default stream is non-blocking, as all its
  // streams are (driver 580 reports CU_STREAM_NON_BLOCKING for it).
  legacy_ = rt().streams.create(this, StreamKind::kLegacy, green ? unsigned{CU_STREAM_NON_BLOCKING} : 0u, 0);
  reset_limits();
  std::lock_guard<std::mutex> g(g_contexts_mu);
  g_contexts.push_back(this);
}

void Context::reset_limits() {
  // Driver 580's defaults on the H200 (measured: tests/conformance ContextDefaults).
  for (auto& l : limits) l.store(0, std::memory_order_relaxed);
  limits[CU_LIMIT_STACK_SIZE].store(1024, std::memory_order_relaxed);
  limits[CU_LIMIT_PRINTF_FIFO_SIZE].store(8650752, std::memory_order_relaxed);
  limits[CU_LIMIT_MALLOC_HEAP_SIZE].store(8 << 20, std::memory_order_relaxed);
  limits[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT].store(2048, std::memory_order_relaxed);
  limits[CU_LIMIT_MAX_L2_FETCH_GRANULARITY].store(64, std::memory_order_relaxed);
  limits[CU_LIMIT_PERSISTING_L2_CACHE_SIZE].store(11796480, std::memory_order_relaxed);
}

void Context::leave_registry() {
  std::lock_guard<std::mutex> g(g_contexts_mu);
  auto it = std::find(g_contexts.begin(), g_contexts.end(), this);
  if (it != g_contexts.end()) g_contexts.erase(it);
}

Context::~Context() {
  leave_registry();
  shut_down();
  capture_stream_destroyed(legacy_);  // a green context's default stream may capture
  rt().streams.kill(legacy_);
  legacy_->drop_handle();
  if (Stream* m = markers_.load(std::memory_order_acquire)) {
    // Its markers wait only for this context's streams, drained above.
    m->wait_idle();
    rt().streams.kill(m);
    m->drop_handle();
  }
  delete green;
}

Stream* Context::marker_stream() {
  if (Stream* m = markers_.load(std::memory_order_acquire)) return m;
  Stream* made = rt().streams.create(this, StreamKind::kMarkers, static_cast<unsigned>(CU_STREAM_NON_BLOCKING), 0);
  Stream* expected = nullptr;
  if (markers_.compare_exchange_strong(expected, made, std::memory_order_acq_rel)) return made;
  rt().streams.kill(made);
  made->drop_handle();
  return expected;
}

bool Context::link_stream(Stream* s) {
  std::lock_guard<std::mutex> g(streams_mu);
  // Under streams_mu: a destroyer that kills the handle and then looks at
  // the streams under the lock sees this stream, or this sees it dead.
  if (rt().contexts.state(this) != HandleState::kLive) return false;
  streams_.push_back(s);
  return true;
}

void Context::add_context_wait(OpRef op) {
  std::lock_guard<std::mutex> g(streams_mu);
  context_waits_.erase(std::remove_if(context_waits_.begin(), context_waits_.end(), [](const OpRef& w) { return w->done(); }),
                       context_waits_.end());
  context_waits_.push_back(std::move(op));
}

std::vector<OpRef> Context::pending_context_waits() {
  std::vector<OpRef> out;
  std::lock_guard<std::mutex> g(streams_mu);
  for (const OpRef& w : context_waits_)
    if (!w->done()) out.push_back(OpRef::share(w.get()));
  return out;
}

bool Context::has_live_streams() {
  std::lock_guard<std::mutex> g(streams_mu);
  for (Stream* s : streams_)
    if (s->kind == StreamKind::kRegular && rt().streams.state(s) == HandleState::kLive) return true;
  return false;
}

void Context::unlink_stream(Stream* s) {
  std::lock_guard<std::mutex> g(streams_mu);
  auto it = std::find(streams_.begin(), streams_.end(), s);
  if (it != streams_.end()) {
    *it = streams_.back();
    streams_.pop_back();
  }
  unlinked_.notify_all();
  per_thread_.erase(std::remove_if(per_thread_.begin(), per_thread_.end(),
                                   [s](auto& e) { return e.second == s; }),
                    per_thread_.end());
}

Stream* Context::per_thread_stream() {
  const uint64_t gen = generation_.load(std::memory_order_acquire);
  if (t_pts.ctx_id == id && t_pts.generation == gen) return t_pts.stream;
  uint64_t key = thread_key();
  Stream* found = nullptr;
  {
    std::lock_guard<std::mutex> g(streams_mu);
    for (auto& e : per_thread_)
      if (e.first == key) found = e.second;
  }
  if (!found) {
    found = rt().streams.create(this, StreamKind::kPerThread, 0u, 0);
    std::lock_guard<std::mutex> g(streams_mu);
    streams_.push_back(found);
    per_thread_.emplace_back(key, found);
  }
  t_pts = {id, gen, found};
  return found;
}

void Context::collect_sync_targets(std::vector<std::pair<Stream*, uint64_t>>& out) {
  {
    std::lock_guard<std::mutex> g(streams_mu);
    for (Stream* s : streams_)
      if (s->try_retain()) out.emplace_back(s, s->enqueued.load(std::memory_order_acquire));
  }
  legacy_->retain();
  out.emplace_back(legacy_, legacy_->enqueued.load(std::memory_order_acquire));
}

namespace {
void wait_and_release(std::vector<std::pair<Stream*, uint64_t>>& targets) {
  for (auto& [s, seq] : targets) {
    s->wait_for(seq);
    s->release();
  }
}
}  // namespace

void Context::for_each_work_context(const std::function<void(Context*)>& f) {
  std::lock_guard<std::mutex> g(g_contexts_mu);
  f(this);
  if (!primary) return;
  for (Context* c : g_contexts)
    if (c != this && c->owner == this) f(c);
}

CUresult Context::synchronize() {
  std::vector<std::pair<Stream*, uint64_t>> targets;
  for_each_work_context([&](Context* c) { c->collect_sync_targets(targets); });
  wait_and_release(targets);
  return sticky_error();
}

void synchronize_all_contexts() {
  std::vector<std::pair<Stream*, uint64_t>> targets;
  {
    std::lock_guard<std::mutex> g(g_contexts_mu);
    for (Context* c : g_contexts) c->collect_sync_targets(targets);
  }
  wait_and_release(targets);  // no lock held: the streams' references keep them
}

void Context::shut_down() {
  synchronize();
  std::vector<Stream*> owned;
  {
    std::lock_guard<std::mutex> g(streams_mu);
    for (Stream* s : streams_)
      if (rt().streams.state(s) == HandleState::kLive || s->kind == StreamKind::kPerThread) owned.push_back(s);
    per_thread_.clear();
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  // A capture dies with its streams: the sequence they began ends (its graph
  // discarded), a stream joined to another's leaves and invalidates it.
  for (Stream* s : owned) capture_stream_destroyed(s);
  // Each live handle's reference is dropped once; draining streams already
  // dropped theirs when the user destroyed them.
  for (Stream* s : owned) {
    rt().streams.kill(s);
    s->drop_handle();
  }
  // A stream's last reference may be dropped by the worker that completed
  // its last op, just after the synchronize above saw it complete; that
  // release unlinks the stream from this context, so wait for it.
  std::unique_lock<std::mutex> lk(streams_mu);
  unlinked_.wait(lk, [&] { return streams_.empty(); });
}

__attribute__((tls_model("initial-exec"))) constinit thread_local Context* t_current_context = nullptr;
__attribute__((tls_model("initial-exec"))) constinit thread_local uint64_t t_current_context_id = 0;

namespace context_stack {
namespace {
struct Entry {
  Context* ctx;
  uint64_t id;
};
// Below the top: the top itself lives in t_current_context(_id).
std::vector<Entry>& below() {
  thread_local std::vector<Entry> stack;
  return stack;
}
// The id a context made current is known by. A dead one (the converted
// context of a destroyed green context, whose slot is never reused) gets 0,
// which no context has: its object is gone.
uint64_t id_of(Context* c) { return rt().contexts.state(c) == HandleState::kLive ? c->id : 0; }
void set(Context* c, uint64_t id) {
  t_current_context = c;
  t_current_context_id = id;
}
}  // namespace

void push(Context* c) {
  if (t_current_context) below().push_back({t_current_context, t_current_context_id});
  set(c, c ? id_of(c) : 0);
}

Context* pop() {
  Context* top = t_current_context;
  if (!top) return nullptr;
  auto& st = below();
  if (st.empty()) {
    set(nullptr, 0);
  } else {
    set(st.back().ctx, st.back().id);
    st.pop_back();
  }
  return top;
}

void set_top(Context* c) { set(c, c ? id_of(c) : 0); }
}  // namespace context_stack

}  // namespace cucpu
