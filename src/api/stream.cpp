// Streams: creation, queries, attributes, host functions, event waits and
// managed-memory attachment.
#include "api/common.h"
#include "core/allocation.h"
#include "core/check.h"
#include "core/context_work.h"
#include "core/event.h"
#include "core/ipc.h"
#include "core/ops.h"

using namespace cucpu;
using api::NullStream;

namespace cucpu::api {
// cuCtxGetStreamPriorityRange: 0 (least) to -5 (greatest).
int clamp_stream_priority(int p) { return p > 0 ? 0 : p < -5 ? -5 : p; }

CUresult new_stream(Context* c, unsigned flags, int priority, CUstream* out) {
  // A green context's streams are all non-blocking (driver 580 reports
  // CU_STREAM_NON_BLOCKING for cuStreamCreate(0) under its converted context).
  if (c->green) flags |= CU_STREAM_NON_BLOCKING;
  Stream* s = rt().streams.create(c, StreamKind::kRegular, flags, clamp_stream_priority(priority));
  if (!c->link_stream(s)) {
    rt().streams.kill(s);
    s->drop_handle();
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  }
  if (c->green) join_context_waits(c, s);
  *out = reinterpret_cast<CUstream>(s);
  return CUDA_SUCCESS;
}
}  // namespace cucpu::api

namespace {

CUresult create(CUstream* out, unsigned flags, int priority) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  return api::new_stream(c, flags, priority, out);
}

CUresult destroy(CUstream h) {
  Stream* s = rt().streams.live(h);
  if (!s || s->kind != StreamKind::kRegular) return CUDA_ERROR_INVALID_HANDLE;
  // A stream left in a destroyed green context stays (the driver's documented leak).
  if (rt().contexts.state(s->ctx) != HandleState::kLive) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (!rt().streams.try_kill(s)) return CUDA_ERROR_INVALID_HANDLE;  // another thread destroyed it first
  capture_stream_destroyed(s);
  // Pending work still runs; the stream lives until it is done.
  s->drop_handle();
  return CUDA_SUCCESS;
}

CUresult query(NullStream ns, CUstream h) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  api::expect_capture_rule(api::kUnsafeInCapture, "kUnsafeInCapture");
  if (CUresult r = capture_forbid_on_stream(s)) return r;
  if (!s->idle()) return CUDA_ERROR_NOT_READY;
  if (check::on()) [[unlikely]] check::host_waited_stream(s);
  return s->ctx->sticky_error();
}

CUresult synchronize(NullStream ns, CUstream h) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  api::expect_capture_rule(api::kUnsafeInCapture, "kUnsafeInCapture");
  if (CUresult r = capture_forbid_on_stream(s)) return r;
  s->wait_idle();
  if (check::on()) [[unlikely]] check::host_waited_stream(s);
  return s->ctx->sticky_error();
}

CUresult get_flags(NullStream ns, CUstream h, unsigned* flags) {
  return api::read_stream(ns, h, flags, [](const Stream* s) { return s->flags; });
}

CUresult get_priority(NullStream ns, CUstream h, int* priority) {
  return api::read_stream(ns, h, priority, [](const Stream* s) { return s->priority.load(); });
}

CUresult get_id(NullStream ns, CUstream h, unsigned long long* id) {
  return api::read_stream(ns, h, id, [](const Stream* s) { return static_cast<unsigned long long>(s->id); });
}

CUresult get_device(NullStream ns, CUstream h, CUdevice* dev) {
  return api::read_stream(ns, h, dev, [](const Stream* s) { return static_cast<CUdevice>(s->ctx->device->ordinal); });
}

CUresult get_ctx(NullStream ns, CUstream h, CUcontext* pctx) {
  return api::read_stream(ns, h, pctx, [](const Stream* s) { return reinterpret_cast<CUcontext>(s->ctx); });
}

CUresult get_ctx_v2(NullStream ns, CUstream h, CUcontext* pctx, CUgreenCtx* pgreen) {
  if (!pctx && !pgreen) return CUDA_ERROR_INVALID_VALUE;  // either alone is fine (driver 580)
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  // A green context's stream: the green context, and its device's primary
  // context (the stream chapter), not the converted context.
  if (pctx) *pctx = reinterpret_cast<CUcontext>(s->ctx->owner);
  if (pgreen) *pgreen = s->ctx->green_handle();
  return CUDA_SUCCESS;
}

CUresult get_green_ctx(NullStream ns, CUstream h, CUgreenCtx* pgreen) {
  if (!pgreen) return CUDA_ERROR_INVALID_VALUE;
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  *pgreen = s->ctx->green_handle();
  return CUDA_SUCCESS;
}

CUresult get_attribute(NullStream ns, CUstream h, const CUstreamAttrID& attr, CUstreamAttrValue* out) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  std::lock_guard<SpinLock> g(s->attr_mu);
  switch (api::raw_enum(attr)) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: out->accessPolicyWindow = s->attrs.access_policy; break;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
      std::memcpy(&out->syncPolicy, &s->attrs.sync_policy, sizeof s->attrs.sync_policy);
      break;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY: out->priority = s->priority.load(); break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP: out->memSyncDomainMap = s->attrs.domain_map; break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: out->memSyncDomain = s->attrs.domain; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

bool access_policy_ok(const CUaccessPolicyWindow& w) {
  auto prop_ok = [](int p) {
    return p == CU_ACCESS_PROPERTY_NORMAL || p == CU_ACCESS_PROPERTY_STREAMING || p == CU_ACCESS_PROPERTY_PERSISTING;
  };
  const int hit = api::raw_enum(w.hitProp), miss = api::raw_enum(w.missProp);
  return w.hitRatio >= 0.0f && w.hitRatio <= 1.0f && prop_ok(hit) && prop_ok(miss) &&
         miss != CU_ACCESS_PROPERTY_PERSISTING && w.num_bytes <= 134217728u;
}

CUresult set_attribute(NullStream ns, CUstream h, const CUstreamAttrID& attr, const CUstreamAttrValue* v) {
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  std::lock_guard<SpinLock> g(s->attr_mu);
  switch (api::raw_enum(attr)) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
      if (!access_policy_ok(v->accessPolicyWindow)) return CUDA_ERROR_INVALID_VALUE;
      s->attrs.access_policy = v->accessPolicyWindow;
      break;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
      if (int p = api::raw_enum(v->syncPolicy); p < CU_SYNC_POLICY_AUTO || p > CU_SYNC_POLICY_BLOCKING_SYNC)
        return CUDA_ERROR_INVALID_VALUE;
      s->attrs.sync_policy = api::raw_enum(v->syncPolicy);
      break;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
      s->priority.store(api::clamp_stream_priority(v->priority));
      break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      if (v->memSyncDomainMap.default_ >= 4 || v->memSyncDomainMap.remote >= 4) return CUDA_ERROR_INVALID_VALUE;
      s->attrs.domain_map = v->memSyncDomainMap;
      break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      if (int d = api::raw_enum(v->memSyncDomain);
          d != CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT && d != CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE)
        return CUDA_ERROR_INVALID_VALUE;
      s->attrs.domain = v->memSyncDomain;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult copy_attributes(NullStream ns, CUstream dst_h, CUstream src_h) {
  Stream* dst;
  Stream* src;
  if (CUresult r = api::stream_handle(dst_h, ns, &dst)) return r;
  if (CUresult r = api::stream_handle(src_h, ns, &src)) return r;
  if (dst == src) return CUDA_SUCCESS;
  if (dst->ctx != src->ctx) return CUDA_ERROR_INVALID_VALUE;  // as driver 580
  StreamAttributes a;
  {
    std::lock_guard<SpinLock> g(src->attr_mu);
    a = src->attrs;
  }
  std::lock_guard<SpinLock> g(dst->attr_mu);
  dst->attrs = a;
  dst->priority.store(src->priority.load());
  return CUDA_SUCCESS;
}

CUresult wait_event(NullStream ns, CUstream h, CUevent ev, unsigned flags) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  Event* e = rt().events.live(ev);
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  if (flags & ~static_cast<unsigned>(CU_EVENT_WAIT_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
  Route route;
  if (CUresult r = capture_wait(s, e, flags, &route)) return r;
  if (route == Route::kCaptured) return CUDA_SUCCESS;
  if (check::on()) [[unlikely]] check::stream_waits_event(s, e);
  if (e->ipc) [[unlikely]] ipc_event_stream_wait(e, s);  // records of other processes too
  OpRef dep = e->pending_snapshot();
  if (!dep) return CUDA_SUCCESS;  // never recorded, or already complete: nothing to wait for
  s->enqueue(new MarkerOp(), dep.get());
  return CUDA_SUCCESS;
}

CUresult launch_host_func(NullStream ns, CUstream h, CUhostFn fn, void* data) {
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  auto node = [&](NodeParams& p) {
    p.become<NodeKind::kHost>() = {fn, data};
  };
  Route route;
  if (CUresult r = api::capture_route_lazy(s, node, true, &route)) return r;
  if (route == Route::kCaptured) return CUDA_SUCCESS;
  s->enqueue(new HostFuncOp(fn, data));
  return CUDA_SUCCESS;
}

CUresult add_callback(NullStream ns, CUstream h, CUstreamCallback cb, void* data, unsigned flags) {
  if (!cb || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  Route route;  // callbacks cannot be captured (host functions can)
  if (CUresult r = api::refuse_during_capture(s, &route)) return r;
  s->enqueue(new HostFuncOp(cb, h, data));
  return CUDA_SUCCESS;
}

CUresult attach_mem(NullStream ns, CUstream h, CUdeviceptr dptr, size_t length, unsigned flags) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST && flags != CU_MEM_ATTACH_SINGLE)
    return CUDA_ERROR_INVALID_VALUE;
  if (flags == CU_MEM_ATTACH_SINGLE && s->kind == StreamKind::kLegacy) return CUDA_ERROR_INVALID_VALUE;
  Route route;  // not capturable
  if (CUresult r = api::refuse_during_capture(s, &route)) return r;
  auto a = Registry::instance().find(static_cast<uintptr_t>(dptr));
  if (a && a->kind == MemKind::kManaged) {
    if (a->base != static_cast<uintptr_t>(dptr)) return CUDA_ERROR_INVALID_VALUE;
    if (length != 0 && length != a->size) return CUDA_ERROR_INVALID_VALUE;
  } else if (a) {
    return CUDA_ERROR_INVALID_VALUE;  // device or pinned memory cannot be attached
  } else if (dptr == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Pageable host memory is accepted (the device reports pageable access)
  // and has no association to record.
  if (!a) return CUDA_SUCCESS;
  uintptr_t base = a->base;
  uint64_t sid = flags == CU_MEM_ATTACH_SINGLE ? s->id : 0;
  if (sid) s->note_attachment();
  if (check::on()) [[unlikely]] check::memory_attached(base, flags == CU_MEM_ATTACH_SINGLE ? s : nullptr);
  s->enqueue(new FunctionOp([base, flags, sid] { Registry::instance().set_attachment(base, flags, sid); }));
  return CUDA_SUCCESS;
}

}  // namespace

static CUresult impl_cuStreamCreate(CUstream* phStream, unsigned int Flags) { return create(phStream, Flags, 0); }

#include "api/entries/stream.inc"
