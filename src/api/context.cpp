// Contexts: creation, the per-thread current-context stack, primary contexts.
#include <algorithm>

#include "api/common.h"
#include "api/context.h"
#include "core/allocator.h"
#include "core/allocation.h"
#include "core/capture.h"
#include "core/context.h"
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
  context_stack().push_back(c);
  *pctx = reinterpret_cast<CUcontext>(c);
  return CUDA_SUCCESS;
}

CUresult destroy(CUcontext h) {
  Context* c;
  if (CUresult r = api::ctx_handle(h, &c)) return r;
  if (c->primary) return CUDA_ERROR_INVALID_CONTEXT;
  auto& st = context_stack();
  if (!rt().contexts.try_kill(c)) return CUDA_ERROR_INVALID_CONTEXT;  // another thread destroyed it first
  if (!st.empty() && st.back() == c) st.pop_back();
  tear_down(c);
  rt().contexts.release(c);
  return CUDA_SUCCESS;
}

CUresult push(CUcontext h) {
  Context* c;
  if (CUresult r = api::ctx_handle(h, &c)) return r;
  context_stack().push_back(c);
  return CUDA_SUCCESS;
}

CUresult pop(CUcontext* pctx) {
  auto& st = context_stack();
  if (st.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  Context* c = st.back();
  st.pop_back();
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

extern "C" {

CUresult cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return api::call("cuCtxCreate", api::kDefault, [&] { return create(pctx, flags, dev); }, pctx, flags, dev);
}
CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return api::call("cuCtxCreate_v2", api::kDefault, [&] { return create(pctx, flags, dev); }, pctx, flags, dev);
}
CUresult cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* params, int numParams, unsigned int flags,
                        CUdevice dev) {
  return api::call("cuCtxCreate_v3", api::kDefault, [&] {
    if (numParams < 0 || (numParams > 0 && !params)) return CUDA_ERROR_INVALID_VALUE;
    if (numParams > 0) return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
    return create(pctx, flags, dev);
  }, pctx, params, numParams, flags, dev);
}
CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* p, unsigned int flags, CUdevice dev) {
  return api::call("cuCtxCreate_v4", api::kDefault, [&] {
    if (p && (p->numExecAffinityParams > 0 || p->cigParams)) return CUDA_ERROR_NOT_SUPPORTED;
    return create(pctx, flags, dev);
  }, pctx, p, flags, dev);
}

CUresult cuCtxDestroy(CUcontext ctx) {
  return api::call("cuCtxDestroy", api::kDefault, [&] { return destroy(ctx); }, ctx);
}
CUresult cuCtxDestroy_v2(CUcontext ctx) {
  return api::call("cuCtxDestroy_v2", api::kDefault, [&] { return destroy(ctx); }, ctx);
}
CUresult cuCtxPushCurrent(CUcontext ctx) {
  return api::call("cuCtxPushCurrent", api::kDefault, [&] { return push(ctx); }, ctx);
}
CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  return api::call("cuCtxPushCurrent_v2", api::kDefault, [&] { return push(ctx); }, ctx);
}
CUresult cuCtxPopCurrent(CUcontext* pctx) {
  return api::call("cuCtxPopCurrent", api::kDefault, [&] { return pop(pctx); }, pctx);
}
CUresult cuCtxPopCurrent_v2(CUcontext* pctx) {
  return api::call("cuCtxPopCurrent_v2", api::kDefault, [&] { return pop(pctx); }, pctx);
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  return api::call("cuCtxSetCurrent", api::kDefault, [&] {
    auto& st = context_stack();
    if (!ctx) {
      if (!st.empty()) st.pop_back();
      return CUDA_SUCCESS;
    }
    Context* c;
    if (CUresult r = api::ctx_handle(ctx, &c)) return r;
    if (st.empty()) st.push_back(c);
    else st.back() = c;
    return CUDA_SUCCESS;
  }, ctx);
}

CUresult cuCtxGetCurrent(CUcontext* pctx) {
  return api::call("cuCtxGetCurrent", api::kDefault, [&] {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = reinterpret_cast<CUcontext>(current_context());
    return CUDA_SUCCESS;
  }, pctx);
}

CUresult cuCtxGetDevice(CUdevice* device) {
  return api::call("cuCtxGetDevice", api::kDefault, [&] {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    *device = c->device->ordinal;
    return CUDA_SUCCESS;
  }, device);
}

CUresult cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  return api::call("cuCtxGetDevice_v2", api::kDefault, [&] {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    Context* c;
    if (CUresult r = ctx ? api::ctx_handle(ctx, &c) : api::current_ctx(&c)) return r;
    *device = c->device->ordinal;
    return CUDA_SUCCESS;
  }, device, ctx);
}

CUresult cuCtxGetFlags(unsigned int* flags) {
  return api::call("cuCtxGetFlags", api::kDefault, [&] {
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    // Every context maps pinned host memory (CU_CTX_MAP_HOST is implied).
    *flags = c->flags.load() | CU_CTX_MAP_HOST;
    return CUDA_SUCCESS;
  }, flags);
}

CUresult cuCtxSetFlags(unsigned int flags) {
  return api::call("cuCtxSetFlags", api::kDefault, [&] {
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    if (!flags_ok(flags)) return CUDA_ERROR_INVALID_VALUE;
    c->flags.store(flags);
    return CUDA_SUCCESS;
  }, flags);
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
  return api::call("cuCtxGetId", api::kDefault, [&] {
    if (!ctxId) return CUDA_ERROR_INVALID_VALUE;
    Context* c;
    if (ctx) {
      if (CUresult r = api::ctx_handle(ctx, &c)) return r;
    } else if (CUresult r = api::current_ctx(&c)) {
      return r;
    }
    *ctxId = c->id;
    return CUDA_SUCCESS;
  }, ctx, ctxId);
}

CUresult cuCtxSynchronize(void) {
  return api::call("cuCtxSynchronize", api::kDefault, [&] {
    Context* c = current_context();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (CUresult r = api::ctx_handle(reinterpret_cast<CUcontext>(c), &c)) return r;
    if (CUresult r = capture_check_unsafe_call()) return r;
    if (CUresult r = capture_check_context_sync(c)) return r;
    return c->synchronize();
  });
}

CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  return api::call("cuCtxSynchronize_v2", api::kDefault, [&] {
    Context* c = ctx ? reinterpret_cast<Context*>(ctx) : current_context();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (CUresult r = api::ctx_handle(reinterpret_cast<CUcontext>(c), &c)) return r;
    if (CUresult r = capture_check_unsafe_call()) return r;
    if (CUresult r = capture_check_context_sync(c)) return r;
    return c->synchronize();
  }, ctx);
}

CUresult cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return api::call("cuCtxGetStreamPriorityRange", api::kDefault, [&] {
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    if (leastPriority) *leastPriority = 0;
    if (greatestPriority) *greatestPriority = -5;
    return CUDA_SUCCESS;
  }, leastPriority, greatestPriority);
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
  return api::call("cuCtxGetApiVersion", api::kDefault, [&] {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    Context* c;
    if (ctx) {
      if (CUresult r = api::ctx_handle(ctx, &c)) return r;
    } else if (CUresult r = api::current_ctx(&c)) {
      return r;
    }
    *version = 3020;  // what driver 580 reports for every context
    return CUDA_SUCCESS;
  }, ctx, version);
}

CUresult cuCtxGetLimit(size_t* pvalue, CUlimit limit) {
  return api::call("cuCtxGetLimit", api::kDefault, [&] {
    if (!pvalue) return CUDA_ERROR_INVALID_VALUE;
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    const int l = api::raw_enum(limit);
    if (l < 0 || l >= CU_LIMIT_MAX || l == CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH) return CUDA_ERROR_UNSUPPORTED_LIMIT;
    *pvalue = c->limits[l].load();
    return CUDA_SUCCESS;
  }, pvalue, limit);
}

CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  return api::call("cuCtxSetLimit", api::kDefault, [&] {
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    const int l = api::raw_enum(limit);
    // sm_90 has no device-side synchronization depth (driver 580).
    if (l < 0 || l >= CU_LIMIT_MAX || l == CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH) return CUDA_ERROR_UNSUPPORTED_LIMIT;
    c->limits[l].store(value);
    return CUDA_SUCCESS;
  }, limit, value);
}

CUresult cuCtxGetCacheConfig(CUfunc_cache* pconfig) {
  return api::call("cuCtxGetCacheConfig", api::kDefault, [&] {
    if (!pconfig) return CUDA_ERROR_INVALID_VALUE;
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    *pconfig = static_cast<CUfunc_cache>(c->cache_config.load());
    return CUDA_SUCCESS;
  }, pconfig);
}

CUresult cuCtxSetCacheConfig(CUfunc_cache config) {
  return api::call("cuCtxSetCacheConfig", api::kDefault, [&] {
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    const int cfg = api::raw_enum(config);
    if (cfg < CU_FUNC_CACHE_PREFER_NONE || cfg > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
    c->cache_config.store(cfg);
    return CUDA_SUCCESS;
  }, config);
}

// The bank size is fixed at four bytes on sm_90: a requested size is
// accepted and has no effect, as on the GPU, and the reported size stays.
CUresult cuCtxSetSharedMemConfig(CUsharedconfig config) {
  return api::call("cuCtxSetSharedMemConfig", api::kDefault, [&] {
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    const int cfg = api::raw_enum(config);
    if (cfg < CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE || cfg > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
      return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
  }, config);
}

CUresult cuCtxGetSharedMemConfig(CUsharedconfig* pConfig) {
  return api::call("cuCtxGetSharedMemConfig", api::kDefault, [&] {
    if (!pConfig) return CUDA_ERROR_INVALID_VALUE;
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    *pConfig = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
    return CUDA_SUCCESS;
  }, pConfig);
}

// Peer access between contexts of different devices: recorded, so that the
// driver's "already enabled" and "not enabled" answers hold.
CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  return api::call("cuCtxEnablePeerAccess", api::kDefault, [&] {
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
  }, peerContext, Flags);
}

CUresult cuCtxDisablePeerAccess(CUcontext peerContext) {
  return api::call("cuCtxDisablePeerAccess", api::kDefault, [&] {
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    Context* peer;
    if (CUresult r = api::ctx_handle(peerContext, &peer)) return r;
    std::lock_guard<std::mutex> g(c->peers_mu);
    auto it = std::find(c->peers.begin(), c->peers.end(), peer->id);
    if (it == c->peers.end()) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    c->peers.erase(it);
    return CUDA_SUCCESS;
  }, peerContext);
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  return api::call("cuDevicePrimaryCtxRetain", api::kDefault, [&] {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *pctx = reinterpret_cast<CUcontext>(primary_retain(device_of(dev)));
    return CUDA_SUCCESS;
  }, pctx, dev);
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  return api::call("cuDevicePrimaryCtxRelease", api::kDefault, [&] { return device_ok(dev) ? primary_release(device_of(dev)) : CUDA_ERROR_INVALID_DEVICE; }, dev);
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  return api::call("cuDevicePrimaryCtxRelease_v2", api::kDefault, [&] { return device_ok(dev) ? primary_release(device_of(dev)) : CUDA_ERROR_INVALID_DEVICE; }, dev);
}
CUresult cuDevicePrimaryCtxReset(CUdevice dev) {
  return api::call("cuDevicePrimaryCtxReset", api::kDefault, [&] { return reset(dev); }, dev);
}
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  return api::call("cuDevicePrimaryCtxReset_v2", api::kDefault, [&] { return reset(dev); }, dev);
}
CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  return api::call("cuDevicePrimaryCtxSetFlags", api::kDefault, [&] { return set_flags(dev, flags); },
                   dev, flags);
}
CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  return api::call("cuDevicePrimaryCtxSetFlags_v2", api::kDefault,
                   [&] { return set_flags(dev, flags); }, dev, flags);
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  return api::call("cuDevicePrimaryCtxGetState", api::kDefault, [&] {
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    bool on = false;
    primary_state(device_of(dev), flags, &on);
    *active = on ? 1 : 0;
    return CUDA_SUCCESS;
  }, dev, flags, active);
}

}  // extern "C"
