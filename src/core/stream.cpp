#include "core/stream.h"

#include "core/allocation.h"
#include "core/check.h"
#include "core/context.h"
#include "core/runtime.h"
#include "exec/scheduler.h"
#include "exec/trace.h"

#include <cstdio>
#include "exec/spin_lock.h"

namespace cucpu {

Stream::Stream(Context* ctx, StreamKind kind, unsigned flags, int priority)
    : Timeline(priority, kind != StreamKind::kLegacy, rt().next_stream_id.fetch_add(1, std::memory_order_relaxed),
               &ctx->sticky, &ctx->device->fault.value,  // what Context::sticky_error reads
               ctx->pool),
      ctx(ctx), kind(kind), flags(flags) {
  if (trace::on()) [[unlikely]] trace::name_timeline(this, describe());
}

std::string Stream::describe() const {
  char label[128];
  const char* what = kind == StreamKind::kLegacy ? "legacy stream" : kind == StreamKind::kPerThread ? "per-thread stream" : "stream";
  std::snprintf(label, sizeof label, "%s %p (ctx %p, prio %d%s)", what, static_cast<const void*>(this),
                static_cast<const void*>(ctx), priority.load(std::memory_order_relaxed), blocking() ? "" : ", non-blocking");
  return label;
}

void Stream::last_reference_dropped() {
  if (kind == StreamKind::kRegular || kind == StreamKind::kPerThread) ctx->unlink_stream(this);
  // Every op, including attach ops, has run: the association reverts.
  if (attached_.load(std::memory_order_acquire)) Registry::instance().detach_stream(id);
  rt().streams.release(this);
}

bool Stream::quiescent() {
  if (kind == StreamKind::kLegacy || !idle()) return false;
  return !blocking() || ctx->legacy_stream()->idle();
}


void Stream::enqueue(Op* op, Op* extra_dep) { enqueue_group(nullptr, 0, op, extra_dep); }

void Stream::enqueue_group(Op* const* parts, size_t n, Op* join, Op* extra_dep, const std::vector<bool>* roots,
                           const std::vector<bool>* sinks) {
  const int prio = priority.load(std::memory_order_relaxed);
  join->timeline = this;
  join->priority = prio;
  if (check::on()) [[unlikely]] check::enqueued(this, parts, n, join);
  if (trace::on()) [[unlikely]] {
    trace::enqueued(join->trace_id);
    for (size_t i = 0; i < n; ++i) trace::enqueued(parts[i]->trace_id);
  }
  // The common case: one op, nothing to wait for but the stream (and, for
  // a blocking stream, an idle legacy stream), enqueued by the thread that
  // owns the stream.
  const bool plain = n == 0 && !extra_dep && kind != StreamKind::kLegacy;
  if (plain && try_enqueue_owned(join)) return;

  // Ops take no reference to the stream: a destroyed stream lives until its
  // last op is done (see drop_handle). Parts keep seq 0: they are not
  // timeline positions, and the join finishes after every part.
  for (size_t i = 0; i < n; ++i) {
    parts[i]->timeline = this;
    parts[i]->priority = prio;
  }
  // More than the stream link may be linked to the join: a build guard.
  const bool guarded = n > 0 || extra_dep || kind == StreamKind::kLegacy || blocking();
  if (guarded) join->add_build_guard();
  std::vector<OpRef> legacy_deps;
  bool claimed = false;

  auto link_in_stream = [&] { claimed = link(parts, n, roots, join); };

  if (kind == StreamKind::kLegacy) {
    std::unique_lock<std::shared_mutex> order(ctx->order_mu);
    link_in_stream();
    ctx->for_each_stream([&](Stream* s) {
      if (s->blocking()) {
        OpRef dep = s->last_pending_op();
        if (dep) legacy_deps.push_back(std::move(dep));
      }
    });
  } else if (blocking()) {
    std::shared_lock<std::shared_mutex> order(ctx->order_mu);
    link_in_stream();
    OpRef dep = ctx->legacy_stream()->last_pending_op();
    if (dep) legacy_deps.push_back(std::move(dep));
  } else {
    link_in_stream();
  }

  // The heads are what must wait for other streams' work: the join op
  // alone, or every root part (and the join then waits for the parts).
  auto link_head = [&](Op* head) {
    for (auto& d : legacy_deps) d->add_successor(head);
    if (extra_dep) extra_dep->add_successor(head);
  };
  if (n == 0) {
    link_head(join);
  } else {
    for (size_t i = 0; i < n; ++i) {
      if (!roots || (*roots)[i]) link_head(parts[i]);
      // Before the part's guard drops, so it cannot be done yet.
      if (!sinks || (*sinks)[i]) parts[i]->add_successor(join);
    }
  }
  // Dropping a dependency we hold (a build guard, or the join's stream
  // link once claimed): an op ready now goes to the scheduler with that
  // dependency's reference; otherwise the reference is dropped and the last
  // dependency's reference will carry the op (Scheduler::finish).
  Scheduler& sched = Scheduler::instance();
  auto launch = [&](Op* o) {
    if (o->release_dependency()) sched.submit(o);
    else o->release();
  };
  for (size_t i = 0; i < n; ++i) launch(parts[i]);
  if (guarded) launch(join);
  if (claimed) launch(join);
}





}  // namespace cucpu
