#include "core/context_work.h"

#include <vector>

#include "core/capture.h"
#include "core/context.h"
#include "core/event.h"
#include "core/ops.h"
#include "core/runtime.h"
#include "core/stream.h"

namespace cucpu {
namespace {
// Every stream of `c`'s work contexts (each's legacy stream first), each
// with a reference the caller drops.
std::vector<Stream*> streams_of(Context* c) {
  std::vector<Stream*> out;
  c->for_each_work_context([&](Context* m) {
    Stream* legacy = m->legacy_stream();
    legacy->retain();
    out.push_back(legacy);
    m->for_each_stream([&](Stream* s) {
      if (s->try_retain()) out.push_back(s);
    });
  });
  return out;
}
}  // namespace

CUresult record_context_work(Context* c, Event* e) {
  if (CUresult r = capture_check_context_sync(c, true)) return r;
  std::vector<OpRef> pending;
  for (Stream* s : streams_of(c)) {
    if (OpRef op = s->last_pending_op()) pending.push_back(std::move(op));
    s->release();
  }
  capture_forget_event(e);
  auto* marker = new MarkerOp(e->timing());
  if (pending.empty()) {
    // Nothing of the context still runs: the event is reached now.
    marker->execute(CUDA_SUCCESS);
    marker->complete_unpublished();
    e->set_snapshot(OpRef(marker));
    return CUDA_SUCCESS;
  }
  // One marker per pending stream on the context's marker timeline, in
  // order: the last (the event's) follows every earlier one.
  Stream* markers = c->marker_stream();
  for (size_t i = 0; i + 1 < pending.size(); ++i) markers->enqueue(new MarkerOp(), pending[i].get());
  e->set_snapshot(OpRef::share(marker));
  markers->enqueue(marker, pending.back().get());
  return CUDA_SUCCESS;
}

CUresult context_wait_event(Context* c, Event* e) {
  if (CUresult r = capture_refuse_captured_event(e)) return r;
  if (CUresult r = capture_check_context_sync(c, true)) return r;
  OpRef dep = e->pending_snapshot();
  if (dep) c->for_each_work_context([&](Context* m) { m->add_context_wait(OpRef::share(dep.get())); });
  std::vector<Stream*> streams = streams_of(c);
  for (Stream* s : streams) {
    // Streams the user destroyed drain without taking more work.
    const bool open = s->kind == StreamKind::kLegacy || rt().streams.state(s) == HandleState::kLive;
    if (dep && open) s->enqueue(new MarkerOp(), dep.get());
    s->release();
  }
  return CUDA_SUCCESS;
}

void join_context_waits(Context* c, Stream* s) {
  for (const OpRef& dep : c->pending_context_waits()) s->enqueue(new MarkerOp(), dep.get());
}

}  // namespace cucpu
