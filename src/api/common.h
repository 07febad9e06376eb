// Validation helpers shared by the entry points: current context, handles,
// and the special stream handles. Each returns a CUresult the entry point
// passes through unchanged.
#pragma once

#include <cstring>
#include <type_traits>

#include "api/entry.h"
#include "core/context.h"
#include "base/raw_enum.h"
#include "core/runtime.h"
#include "core/event.h"
#include "core/stream.h"
#include "core/graph_exec.h"

namespace cucpu::api {

// The value cuDeviceGetAttribute reports for attribute `a` where it does not
// depend on the device or the machine (0 for an unknown attribute).
int static_attribute(int a);

using cucpu::copy_enum;  // base/raw_enum.h: caller enums are read as integers
using cucpu::raw_enum;

// What a NULL stream handle means for the entry point being called: the
// legacy default stream, or (for _ptsz/_ptds variants) the per-thread one.
enum class NullStream { kLegacy, kPerThread };

inline bool device_ok(CUdevice d) { return d >= 0 && static_cast<size_t>(d) < rt().devices.size(); }

// A device's PCI domain, bus and device, as cuDeviceGetAttribute reports them
// (device.cpp). `dev` must be valid.
struct PciLocation {
  int domain = 0, bus = 0, device = 0;
};
PciLocation pci_location(CUdevice dev);

// The current context, checked live and free of a sticky error.
inline CUresult current_ctx(Context** out) {
  Context* c = current_context();
  if (!c) return CUDA_ERROR_INVALID_CONTEXT;
  HandleState st = rt().contexts.state(c);
  if (st == HandleState::kDead) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (st != HandleState::kLive) return CUDA_ERROR_INVALID_CONTEXT;
  if (!current_context_is(c)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;  // a later context took its slot
  *out = c;
  return c->sticky_error();
}

// A context handle passed explicitly (NULL is not accepted here).
inline CUresult ctx_handle(CUcontext h, Context** out) {
  if (!h) return CUDA_ERROR_INVALID_CONTEXT;
  HandleState st = rt().contexts.state(h);
  if (st == HandleState::kDead) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (st != HandleState::kLive) return CUDA_ERROR_INVALID_CONTEXT;
  *out = reinterpret_cast<Context*>(h);
  return CUDA_SUCCESS;
}

// The current context, checked live, sticky error or not.
inline CUresult current_ctx_handle(Context** out) {
  Context* c = current_context();
  if (!c) return CUDA_ERROR_INVALID_CONTEXT;
  if (CUresult r = ctx_handle(reinterpret_cast<CUcontext>(c), out)) return r;
  return current_context_is(c) ? CUDA_SUCCESS : CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

// The handle of a stream the user created: INVALID_HANDLE unless it names a
// live one, CONTEXT_IS_DESTROYED once its context is, else its context's
// sticky error (CUDA_SUCCESS when none), with *out set.
inline CUresult created_stream(Runtime& r, CUstream h, Stream** out) {
  Stream* s = r.streams.live(h);
  if (!s || s->kind != StreamKind::kRegular) return CUDA_ERROR_INVALID_HANDLE;
  if (r.contexts.state_of(s->ctx) != HandleState::kLive) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  *out = s;
  return s->ctx->sticky_error();
}

// A stream handle: NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD name the
// current context's default streams. A converted green context has no
// per-thread stream: CU_STREAM_PER_THREAD is INVALID_HANDLE under it (the
// stream chapter, cuStreamGetCtx_v2), and a NULL handle of a per-thread
// entry point names its default stream.
inline CUresult stream_handle(CUstream h, NullStream null_means, Stream** out) {
  if (h == nullptr || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
    Context* c;
    if (CUresult r = current_ctx(&c)) return r;
    if (c->green) [[unlikely]] {
      if (h == CU_STREAM_PER_THREAD) return CUDA_ERROR_INVALID_HANDLE;
      *out = c->legacy_stream();
      return CUDA_SUCCESS;
    }
    bool per_thread = h == CU_STREAM_PER_THREAD || (h == nullptr && null_means == NullStream::kPerThread);
    *out = per_thread ? c->per_thread_stream() : c->legacy_stream();
    return CUDA_SUCCESS;
  }
  return created_stream(rt(), h, out);
}

// A created stream, live, of a live context with no sticky error: what
// stream_handle answers CUDA_SUCCESS for, short of the default streams;
// nullptr for any other handle (stream_handle then gives its answer).
// An entry's body alone calls it (past the library-state check).
inline Stream* healthy_stream(CUstream h) {
  Stream* s = nullptr;
  return created_stream(rt_built(), h, &s) == CUDA_SUCCESS ? s : nullptr;
}

// The stream getters (cuStreamGetPriority, ...): `read(s)` into *out. The
// common case, a healthy created stream, makes no call; any other handle
// or a null `out` takes read_stream_slowly, which answers as the checks
// in their order do (the null `out` first).
template <class T, class Read>
[[gnu::noinline]] CUresult read_stream_slowly(NullStream ns, CUstream h, T* out, Read read) noexcept {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  try {
    Stream* s;
    if (CUresult r = stream_handle(h, ns, &s)) return r;
    *out = read(s);
    return CUDA_SUCCESS;
  } catch (const std::bad_alloc&) {
    return CUDA_ERROR_OUT_OF_MEMORY;  // a default stream made on first use
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;  // as api::checked_body maps it
  }
}
template <class T, class Read>
inline CUresult read_stream(NullStream ns, CUstream h, T* out, Read read) noexcept {
  if (Stream* s = healthy_stream(h); s && out) [[likely]] {
    *out = read(s);
    return CUDA_SUCCESS;
  }
  return read_stream_slowly(ns, h, out, read);
}

// A stream priority clamped to the range cuCtxGetStreamPriorityRange reports.
int clamp_stream_priority(int priority);
// Makes a stream of `c` (cuStreamCreate*, cuGreenCtxStreamCreate; flags
// already checked). CONTEXT_IS_DESTROYED when `c` is destroyed meanwhile.
CUresult new_stream(Context* c, unsigned flags, int priority, CUstream* out);

// A live event of a live context. Once its context is destroyed an event's
// handle stays, and every call answers CONTEXT_IS_DESTROYED (driver 580:
// query, synchronize, record, elapsed time and destroy), never touching the
// context again.
inline CUresult event_handle(CUevent h, Event** out) {
  Event* e = rt().events.live(h);
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  if (!context_alive(e->ctx, e->ctx_id)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  *out = e;
  return CUDA_SUCCESS;
}

// Whether work on `s` may have to become a node (or be refused) rather than
// run: it captures, or is the legacy stream while a blocking stream of its
// context captures. Two loads.
inline bool capture_concerns(const Stream* s) {
  return s->capturing.load(std::memory_order_acquire) != nullptr ||
         (s->kind == StreamKind::kLegacy && s->ctx->blocking_captures.load(std::memory_order_acquire) != 0);
}

// capture_route for hot paths: `make()` builds the node parameters only
// when capture_concerns(s); otherwise two loads decide (node parameters are
// a few hundred bytes: zeroing them on every enqueue would fill the store
// buffer that an enqueue relies on). Every stream-ordered entry point
// routes its work through this.
// `fill(NodeParams& p)` writes the node's parameters into the node itself,
// where they start as NodeParams{}.
template <class FillParams>
CUresult capture_route_lazy(Stream* s, FillParams&& fill, bool capturable, Route* route, bool invalidate = true) {
  expect_capture_rule(capturable ? kCaptured : kRefusedInCapture, capturable ? "kCaptured" : "kRefusedInCapture");
  if (!capture_concerns(s)) {
    *route = Route::kEnqueue;
    return CUDA_SUCCESS;
  }
  using F = std::remove_reference_t<FillParams>;
  ParamsFill in_place{[](NodeParams& p, const void* f) {
                        (*static_cast<F*>(const_cast<void*>(f)))(p);
                        record_memory_checks(p);
                      },
                      &fill};
  return capture_route(s, in_place, capturable, route, invalidate);
}

// Work that never becomes a graph node: during a capture it is refused (and
// the capture invalidated, unless `invalidate` is false), as the driver does.
inline CUresult refuse_during_capture(Stream* s, Route* route, bool invalidate = true) {
  return capture_route_lazy(s, [](NodeParams&) {}, false, route, invalidate);
}

}  // namespace cucpu::api

