// Events: record, query, synchronize, elapsed time.
#include "api/common.h"
#include "core/check.h"
#include "core/event.h"
#include "core/ipc.h"
#include "core/ops.h"

using namespace cucpu;
using api::NullStream;

namespace {

using api::event_handle;

CUresult create(CUevent* out, unsigned flags) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  const unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if (flags & ~known) return CUDA_ERROR_INVALID_VALUE;
  if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  Event* e = rt().events.create(c->owner, c->owner->id, flags);
  if (flags & CU_EVENT_INTERPROCESS) {
    if (CUresult r = ipc_event_share(e)) {
      rt().events.kill(e);
      rt().events.release(e);
      return r;
    }
  }
  *out = reinterpret_cast<CUevent>(e);
  return CUDA_SUCCESS;
}

CUresult destroy(CUevent h) {
  Event* e;
  if (CUresult r = event_handle(h, &e)) return r;
  // Waits already enqueued hold their own reference to the marker op.
  if (!rt().events.try_kill(e)) return CUDA_ERROR_INVALID_HANDLE;  // another thread destroyed it first
  rt().events.release(e);
  return CUDA_SUCCESS;
}

// The record's snapshot in this process (the marker waits take).
void record_snapshot(Event* e, Stream* s) {
  const bool reached = s->quiescent();
  if (reached && !e->timing() && !check::on()) {
    // Nothing earlier can still run: the event is reached now, and without
    // timing it needs no marker: an empty snapshot answers as a reached one
    // does (query and synchronize succeed, a wait adds no edge, elapsed
    // time is INVALID_HANDLE for such an event either way).
    e->set_snapshot(OpRef());
    return;
  }
  auto* op = new MarkerOp(e->timing());
  if (reached) {
    // Nothing earlier can still run: the event is reached now. Completing
    // the marker here skips the stream's timeline (an idle stream's query
    // and sync are unaffected) and the scheduler.
    op->execute(CUDA_SUCCESS);
    op->complete_unpublished();
    e->set_snapshot(OpRef(op));
    if (check::on()) [[unlikely]] check::event_recorded(e, s);
    return;
  }
  OpRef keep = OpRef::share(op);
  e->set_snapshot(std::move(keep));
  s->enqueue(op);
  if (check::on()) [[unlikely]] check::event_recorded(e, s);
}

CUresult record(NullStream ns, CUevent h, CUstream hs, unsigned flags) {
  Event* e;
  if (CUresult r = event_handle(h, &e)) return r;
  if (flags & ~static_cast<unsigned>(CU_EVENT_RECORD_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
  Stream* s;
  if (CUresult r = api::stream_handle(hs, ns, &s)) return r;
  if (s->ctx->owner != e->ctx) return CUDA_ERROR_INVALID_HANDLE;
  Route route;
  if (CUresult r = capture_record(e, s, flags, &route)) return r;
  if (route == Route::kCaptured) return CUDA_SUCCESS;
  record_snapshot(e, s);
  if (e->ipc) [[unlikely]] ipc_event_record(e, s);  // and in every process that holds it
  return CUDA_SUCCESS;
}

CUresult query(CUevent h) {
  Event* e;
  if (CUresult r = event_handle(h, &e)) return r;
  if (CUresult r = captured_event_use(e, false)) return r;
  if (e->ipc) [[unlikely]] {
    if (!ipc_event_reached(e)) return CUDA_ERROR_NOT_READY;
    return e->ctx->sticky_error();
  }
  OpRef op = e->snapshot();
  if (op && !op->reached()) return CUDA_ERROR_NOT_READY;
  if (check::on()) [[unlikely]] check::host_waited_event(e);
  return e->ctx->sticky_error();
}

CUresult synchronize(CUevent h) {
  Event* e;
  if (CUresult r = event_handle(h, &e)) return r;
  if (CUresult r = captured_event_use(e, true)) return r;
  OpRef op = e->snapshot();
  if (op) op->wait_done();
  if (e->ipc) [[unlikely]] ipc_event_synchronize(e);  // records of other processes too
  if (check::on()) [[unlikely]] check::host_waited_event(e);
  return e->ctx->sticky_error();
}

CUresult elapsed(float* ms, CUevent hs, CUevent he) {
  if (!ms) return CUDA_ERROR_INVALID_HANDLE;  // what driver 580 returns
  Event *a, *b;
  if (CUresult r = event_handle(hs, &a)) return r;
  if (CUresult r = event_handle(he, &b)) return r;
  if (!a->timing() || !b->timing()) return CUDA_ERROR_INVALID_HANDLE;
  OpRef oa = a->snapshot();
  OpRef ob = b->snapshot();
  if (!oa || !ob) return CUDA_ERROR_INVALID_HANDLE;
  if (!oa->reached() || !ob->reached()) return CUDA_ERROR_NOT_READY;
  // An event a graph's event-record node recorded holds that node's op,
  // which takes no time stamp: refused, never read as a marker.
  const uint64_t ta = oa->reached_at_ns(), tb = ob->reached_at_ns();
  if (ta == 0 || tb == 0) return CUDA_ERROR_INVALID_HANDLE;
  *ms = static_cast<float>((static_cast<double>(tb) - static_cast<double>(ta)) / 1e6);
  return CUDA_SUCCESS;
}

}  // namespace

static CUresult impl_cuIpcGetEventHandle(CUipcEventHandle* pHandle, CUevent event) {
  if (!pHandle) return CUDA_ERROR_INVALID_VALUE;
  Event* e;
  if (CUresult r = event_handle(event, &e)) return r;
  return ipc_event_export(e, pHandle);
}

static CUresult impl_cuIpcOpenEventHandle(CUevent* phEvent, CUipcEventHandle handle) {
  if (!phEvent) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  return ipc_event_open(c, handle, phEvent);
}

static CUresult record_default(NullStream ns, CUevent e, CUstream s) { return record(ns, e, s, 0); }

#include "api/entries/event.inc"
