// Contexts: creation, the per-thread current-context stack, primary contexts.
#include <algorithm>

#include "api/common.h"
#include "api/context.h"
#include "core/allocator.h"
#include "core/allocation.h"
#include "core/capture.h"
#include "core/check.h"
#include "core/context.h"
#include "core/context_work.h"
#include "core/event.h"
#include "core/green_context.h"
#include "core/primary_context.h"
#include "core/module.h"

using namespace cucpu;

namespace {

using api::device_ok;

bool flags_ok(unsigned flags) {
  if (flags & ~static_cast<unsigned>(CU_CTX_FLAGS_MASK)) return false;
  unsigned sched = flags & CU_CTX_SCHED_MASK;
  return sched == 0 || sched == CU_CTX_SCHED_SPIN || sched == CU_CTX_SCHED_YIELD ||
         sched == CU_CTX_SCHED_BLOCKING_SYNC;
}

CUresult create(CUcontext* pctx, unsigned flags, CUdevice dev) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (!flags_ok(flags)) return CUDA_ERROR_INVALID_VALUE;
  Context* c = rt().contexts.create(&rt().devices[static_cast<size_t>(dev)], flags, false);
  context_stack::push(c);
  *pctx = reinterpret_cast<CUcontext>(c);
  return CUDA_SUCCESS;
}

CUresult destroy(CUcontext h) {
  Context* c;
  if (CUresult r = api::ctx_handle(h, &c)) return r;
  if (c->primary || c->green) return CUDA_ERROR_INVALID_CONTEXT;  // cuDevicePrimaryCtxRelease / cuGreenCtxDestroy end those
  if (!rt().contexts.try_kill(c)) return CUDA_ERROR_INVALID_CONTEXT;  // another thread destroyed it first
  if (current_context() == c) context_stack::pop();
  tear_down(c);
  rt().contexts.release(c);
  return CUDA_SUCCESS;
}

// A context to make current: a live one, or the converted context of a
// destroyed green context, which driver 580 still makes current (calls
// under it then answer CONTEXT_IS_DESTROYED), until its slot is reused.
CUresult current_candidate(CUcontext h, Context** out) {
  const CUresult r = api::ctx_handle(h, out);
  if (r != CUDA_ERROR_CONTEXT_IS_DESTROYED || destroyed_converted_device(h) < 0) return r;
  *out = reinterpret_cast<Context*>(h);
  return CUDA_SUCCESS;
}

CUresult push(CUcontext h) {
  Context* c;
  if (CUresult r = current_candidate(h, &c)) return r;
  context_stack::push(c);
  return CUDA_SUCCESS;
}

CUresult pop(CUcontext* pctx) {
  Context* c = context_stack::pop();
  if (!c) return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx) *pctx = reinterpret_cast<CUcontext>(c);
  return CUDA_SUCCESS;
}

}  // namespace

namespace cucpu::api {
CUresult primary_context_handle(CUdevice dev, CUcontext* pctx) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *pctx = reinterpret_cast<CUcontext>(primary_context(rt().devices[static_cast<size_t>(dev)]));
  return CUDA_SUCCESS;
}
}  // namespace cucpu::api

namespace {
Device& device_of(CUdevice dev) { return rt().devices[static_cast<size_t>(dev)]; }

CUresult reset(CUdevice dev) {
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  primary_reset(device_of(dev));
  return CUDA_SUCCESS;
}

CUresult set_flags(CUdevice dev, unsigned flags) {
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (!flags_ok(flags)) return CUDA_ERROR_INVALID_VALUE;
  primary_set_flags(device_of(dev), flags);
  return CUDA_SUCCESS;
}

}  // namespace

static CUresult impl_cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* params, int numParams, unsigned int flags,
                                    CUdevice dev) {
  if (numParams < 0 || (numParams > 0 && !params)) return CUDA_ERROR_INVALID_VALUE;
  if (numParams > 0) return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
  return create(pctx, flags, dev);
}
static CUresult impl_cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* p, unsigned int flags, CUdevice dev) {
  if (p && (p->numExecAffinityParams > 0 || p->cigParams)) return CUDA_ERROR_NOT_SUPPORTED;
  return create(pctx, flags, dev);
}

static CUresult impl_cuCtxSetCurrent(CUcontext ctx) {
  if (!ctx) {
    context_stack::pop();
    return CUDA_SUCCESS;
  }
  Context* c;
  if (CUresult r = current_candidate(ctx, &c)) return r;
  context_stack::set_top(c);
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxGetCurrent(CUcontext* pctx) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  *pctx = reinterpret_cast<CUcontext>(current_context());
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxGetDevice(CUdevice* device) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) {
    // A destroyed green context's converted context still has its device (driver 580).
    const int d = r == CUDA_ERROR_CONTEXT_IS_DESTROYED ? destroyed_converted_device(current_context()) : -1;
    if (d < 0) return r;
    *device = d;
    return CUDA_SUCCESS;
  }
  *device = c->device->ordinal;
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = ctx ? api::ctx_handle(ctx, &c) : api::current_ctx(&c)) return r;
  *device = c->device->ordinal;
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxGetFlags(unsigned int* flags) {
  if (!flags) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  // Every context maps pinned host memory (CU_CTX_MAP_HOST is implied).
  *flags = c->flags.load() | CU_CTX_MAP_HOST;
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxSetFlags(unsigned int flags) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  if (!flags_ok(flags)) return CUDA_ERROR_INVALID_VALUE;
  c->flags.store(flags);
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
  if (!ctxId) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (ctx) {
    if (CUresult r = api::ctx_handle(ctx, &c)) return r;
  } else if (CUresult r = api::current_ctx(&c)) {
    return r;
  }
  *ctxId = c->id;
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxSynchronize(void) {
  Context* c;
  if (CUresult r = api::current_ctx_handle(&c)) return r;
  if (CUresult r = capture_check_context_sync(c)) return r;
  const CUresult r = c->synchronize();
  if (check::on()) [[unlikely]] check::host_waited_context(c);
  return r;
}

static CUresult impl_cuCtxSynchronize_v2(CUcontext ctx) {
  Context* c;
  if (CUresult r = ctx ? api::ctx_handle(ctx, &c) : api::current_ctx_handle(&c)) return r;
  if (CUresult r = capture_check_context_sync(c)) return r;
  const CUresult r = c->synchronize();
  if (check::on()) [[unlikely]] check::host_waited_context(c);
  return r;
}

// The work of a context as one (core/context_work.h); a primary context's
// includes its green contexts'. The event must be the context's (a
// converted green context's events are its primary context's); the one
// waited on may be any context's.
static CUresult impl_cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent) {
  Context* c;
  if (CUresult r = api::ctx_handle(hCtx, &c)) return r;
  Event* e;
  if (CUresult r = api::event_handle(hEvent, &e)) return r;
  if (e->ctx != c->owner) return CUDA_ERROR_INVALID_HANDLE;
  return record_context_work(c, e);
}

static CUresult impl_cuCtxWaitEvent(CUcontext hCtx, CUevent hEvent) {
  Context* c;
  if (CUresult r = api::ctx_handle(hCtx, &c)) return r;
  Event* e;
  if (CUresult r = api::event_handle(hEvent, &e)) return r;
  return context_wait_event(c, e);
}

static CUresult impl_cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  if (leastPriority) *leastPriority = 0;
  if (greatestPriority) *greatestPriority = -5;
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (ctx) {
    if (CUresult r = api::ctx_handle(ctx, &c))
      return r == CUDA_ERROR_CONTEXT_IS_DESTROYED && destroyed_converted_device(ctx) >= 0 ? CUDA_ERROR_INVALID_CONTEXT : r;
  } else if (CUresult r = api::current_ctx(&c)) {
    return r;
  }
  *version = 3020;  // what driver 580 reports for every context
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxGetLimit(size_t* pvalue, const CUlimit& limit) {
  if (!pvalue) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  const int l = api::raw_enum(limit);
  if (l < 0 || l >= CU_LIMIT_MAX || l == CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH) return CUDA_ERROR_UNSUPPORTED_LIMIT;
  *pvalue = c->limits[l].load();
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxSetLimit(const CUlimit& limit, size_t value) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  const int l = api::raw_enum(limit);
  // sm_90 has no device-side synchronization depth (driver 580).
  if (l < 0 || l >= CU_LIMIT_MAX || l == CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH) return CUDA_ERROR_UNSUPPORTED_LIMIT;
  c->limits[l].store(value);
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxGetCacheConfig(CUfunc_cache* pconfig) {
  if (!pconfig) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  *pconfig = static_cast<CUfunc_cache>(c->cache_config.load());
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxSetCacheConfig(const CUfunc_cache& config) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  const int cfg = api::raw_enum(config);
  if (cfg < CU_FUNC_CACHE_PREFER_NONE || cfg > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
  c->cache_config.store(cfg);
  return CUDA_SUCCESS;
}

// The bank size is fixed at four bytes on sm_90: a requested size is
// accepted and has no effect, as on the GPU, and the reported size stays.
static CUresult impl_cuCtxSetSharedMemConfig(const CUsharedconfig& config) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  const int cfg = api::raw_enum(config);
  if (cfg < CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE || cfg > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxGetSharedMemConfig(CUsharedconfig* pConfig) {
  if (!pConfig) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  *pConfig = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
  return CUDA_SUCCESS;
}

// Peer access between contexts of different devices: recorded, so that the
// driver's "already enabled" and "not enabled" answers hold.
static CUresult impl_cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  Context* peer;
  if (CUresult r = api::ctx_handle(peerContext, &peer)) return r;
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (peer->device == c->device) return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;  // driver 580: a device is not its own peer
  std::lock_guard<std::mutex> g(c->peers_mu);
  if (std::find(c->peers.begin(), c->peers.end(), peer->id) != c->peers.end())
    return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  c->peers.push_back(peer->id);
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxDisablePeerAccess(CUcontext peerContext) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  Context* peer;
  if (CUresult r = api::ctx_handle(peerContext, &peer)) return r;
  std::lock_guard<std::mutex> g(c->peers_mu);
  auto it = std::find(c->peers.begin(), c->peers.end(), peer->id);
  if (it == c->peers.end()) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
  c->peers.erase(it);
  return CUDA_SUCCESS;
}

static CUresult impl_cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *pctx = reinterpret_cast<CUcontext>(primary_retain(device_of(dev)));
  return CUDA_SUCCESS;
}

static CUresult impl_cuDevicePrimaryCtxRelease(CUdevice dev) { return device_ok(dev) ? primary_release(device_of(dev)) : CUDA_ERROR_INVALID_DEVICE; }

static CUresult impl_cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  bool on = false;
  primary_state(device_of(dev), flags, &on);
  *active = on ? 1 : 0;
  return CUDA_SUCCESS;
}

#include "api/entries/context.inc"
