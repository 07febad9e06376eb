// Green contexts: SM resources, their splits and descriptors, green
// contexts, their streams, and their events (core/green_context.h).
#include <algorithm>

#include "api/common.h"
#include "core/context_work.h"
#include "core/event.h"
#include "core/green_context.h"

using namespace cucpu;

namespace {

// A green context handle is its converted context's (core/context.h
// green_handle): a live context converted from a green context.
CUresult green_handle(CUgreenCtx h, GreenContext** out) {
  Context* c;
  if (CUresult r = api::ctx_handle(reinterpret_cast<CUcontext>(h), &c)) return r;
  if (!c->green) return CUDA_ERROR_INVALID_CONTEXT;
  *out = c->green;
  return CUDA_SUCCESS;
}

// Only SM resources exist (CUDA 13.0).
CUresult check_type(const CUdevResourceType& type) {
  return api::raw_enum(type) == CU_DEV_RESOURCE_TYPE_SM ? CUDA_SUCCESS : CUDA_ERROR_INVALID_RESOURCE_TYPE;
}

SmSet all_sms() {
  SmSet s;
  for (unsigned i = 0; i < device_sm_count(); ++i) s.set(i);
  return s;
}

// What a context holds: a converted context its green context's SMs, any
// other the device's resource itself (driver 580: the same bytes).
CUresult context_resource(Context* c, CUdevResource* resource, const CUdevResourceType& type) {
  if (!resource) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = check_type(type)) return r;
  if (c->green) write_resource({c->device->ordinal, ResourceOrigin::kContext, 0, c->green->sms}, resource);
  else write_resource({c->device->ordinal, ResourceOrigin::kDevice, 0, all_sms()}, resource);
  return CUDA_SUCCESS;
}

}  // namespace

static CUresult impl_cuDeviceGetDevResource(CUdevice device, CUdevResource* resource, const CUdevResourceType& type) {
  if (!api::device_ok(device)) return CUDA_ERROR_INVALID_DEVICE;
  if (!resource) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = check_type(type)) return r;
  write_resource({device, ResourceOrigin::kDevice, 0, all_sms()}, resource);
  return CUDA_SUCCESS;
}

// Execution affinity (the SM limit MPS sets on a context): cucpu makes no
// context with one (cuCtxCreate_v3 refuses them), so no device supports it,
// and a context's affinity is the SMs it holds, as its resource says.
// Any type is answered, an unknown one too (driver 580): none is supported.
static CUresult impl_cuDeviceGetExecAffinitySupport(int* pi, const CUexecAffinityType&, CUdevice dev) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  if (!api::device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *pi = 0;
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxGetExecAffinity(CUexecAffinityParam* pExecAffinity, const CUexecAffinityType& type) {
  if (!pExecAffinity) return CUDA_ERROR_INVALID_VALUE;
  if (api::raw_enum(type) != CU_EXEC_AFFINITY_TYPE_SM_COUNT) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx_handle(&c)) return r;
  pExecAffinity->type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
  pExecAffinity->param.smCount.val = static_cast<unsigned>(c->green ? c->green->sms.count() : device_sm_count());
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxGetDevResource(CUcontext hCtx, CUdevResource* resource, const CUdevResourceType& type) {
  Context* c;
  if (CUresult r = api::ctx_handle(hCtx, &c)) return r;
  return context_resource(c, resource, type);
}

static CUresult impl_cuGreenCtxGetDevResource(CUgreenCtx hCtx, CUdevResource* resource, const CUdevResourceType& type) {
  GreenContext* g;
  if (CUresult r = green_handle(hCtx, &g)) return r;
  return context_resource(g->ctx, resource, type);
}

static CUresult impl_cuDevSmResourceSplitByCount(CUdevResource* result, unsigned int* nbGroups,
                                                 const CUdevResource* input, CUdevResource* remaining,
                                                 unsigned int useFlags, unsigned int minCount) {
  if (!nbGroups || !input) return CUDA_ERROR_INVALID_VALUE;
  // Either flag, not both; other bits are ignored (driver 580).
  constexpr unsigned kBoth = CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING |
                             CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE;
  if ((useFlags & kBoth) == kBoth) return CUDA_ERROR_INVALID_VALUE;
  SmResource in;  // a copy: `result` or `remaining` may be `input` itself
  if (CUresult r = read_resource(*input, &in)) return r;
  SmSplit plan;
  if (CUresult r = plan_split(in, useFlags, minCount, &plan)) return r;
  if (!result) {
    *nbGroups = plan.groups;
    return CUDA_SUCCESS;
  }
  if (*nbGroups == 0) return CUDA_ERROR_INVALID_VALUE;
  const unsigned made = std::min(*nbGroups, plan.groups);
  const uint64_t split = next_split_id();
  for (unsigned i = 0; i < made; ++i)
    write_resource({in.device, ResourceOrigin::kGroup, split, split_group(in, plan, i)}, &result[i]);
  if (remaining)
    write_resource({in.device, ResourceOrigin::kRemainder, split, split_remainder(in, plan, made)}, remaining);
  *nbGroups = made;
  return CUDA_SUCCESS;
}

static CUresult impl_cuDevResourceGenerateDesc(CUdevResourceDesc* phDesc, CUdevResource* resources,
                                               unsigned int nbResources) {
  // Zero resources: driver 580 crashes; refused here.
  if (!phDesc || !resources || nbResources == 0) return CUDA_ERROR_INVALID_VALUE;
  SmResource first;
  if (CUresult r = read_resource(resources[0], &first)) return r;
  SmSet sms = first.sms;
  // Several resources: their SMs together. The documentation asks for
  // outputs of one split; driver 580 takes any resources of one device.
  for (unsigned i = 1; i < nbResources; ++i) {
    SmResource more;
    if (CUresult r = read_resource(resources[i], &more)) return r;
    if (more.device != first.device) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    sms |= more.sms;
  }
  *phDesc = reinterpret_cast<CUdevResourceDesc>(make_desc(first.device, sms));
  return CUDA_SUCCESS;
}

static CUresult impl_cuGreenCtxCreate(CUgreenCtx* phCtx, CUdevResourceDesc desc, CUdevice dev, unsigned int flags) {
  if (!phCtx) return CUDA_ERROR_INVALID_VALUE;
  if (!api::device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (flags != CU_GREEN_CTX_DEFAULT_STREAM) return CUDA_ERROR_INVALID_VALUE;
  // No descriptor: every SM of the device (driver 580 accepts NULL). A
  // forged one crashes the driver; here it is refused.
  const ResourceDesc whole{dev, all_sms()};
  const ResourceDesc* d = desc ? rt().resource_descs.live(desc) : &whole;
  if (!d || d->device != dev) return CUDA_ERROR_INVALID_VALUE;
  *phCtx = create_green_context(rt().devices[static_cast<size_t>(dev)], *d)->ctx->green_handle();
  return CUDA_SUCCESS;
}

static CUresult impl_cuGreenCtxDestroy(CUgreenCtx hCtx) {
  GreenContext* g;
  if (CUresult r = green_handle(hCtx, &g)) return r;
  if (!destroy_green_context(g)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;  // another thread destroyed it first
  return CUDA_SUCCESS;
}

static CUresult impl_cuCtxFromGreenCtx(CUcontext* pContext, CUgreenCtx hCtx) {
  if (!pContext) return CUDA_ERROR_INVALID_VALUE;
  GreenContext* g;
  if (CUresult r = green_handle(hCtx, &g)) return r;
  *pContext = reinterpret_cast<CUcontext>(g->ctx);
  return CUDA_SUCCESS;
}

static CUresult impl_cuGreenCtxGetId(CUgreenCtx greenCtx, unsigned long long* greenCtxId) {
  if (!greenCtxId) return CUDA_ERROR_INVALID_VALUE;
  GreenContext* g;
  if (greenCtx) {
    if (CUresult r = green_handle(greenCtx, &g)) return r;
  } else {
    // NULL: the current context's green context, if it is a converted one.
    Context* c;
    if (CUresult r = api::current_ctx(&c)) return r;
    if (!c->green) return CUDA_ERROR_INVALID_CONTEXT;
    g = c->green;
  }
  *greenCtxId = g->id;
  return CUDA_SUCCESS;
}

static CUresult impl_cuGreenCtxStreamCreate(CUstream* phStream, CUgreenCtx greenCtx, unsigned int flags,
                                            int priority) {
  if (!phStream) return CUDA_ERROR_INVALID_VALUE;
  GreenContext* g;
  if (CUresult r = green_handle(greenCtx, &g)) return r;
  if (flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
  return api::new_stream(g->ctx, flags, priority, phStream);
}


static CUresult impl_cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent hEvent) {
  GreenContext* g;
  if (CUresult r = green_handle(hCtx, &g)) return r;
  Event* e;
  if (CUresult r = api::event_handle(hEvent, &e)) return r;
  // The event and the green context must share their primary context.
  if (e->ctx != g->ctx->owner) return CUDA_ERROR_INVALID_HANDLE;
  return record_context_work(g->ctx, e);
}

static CUresult impl_cuGreenCtxWaitEvent(CUgreenCtx hCtx, CUevent hEvent) {
  GreenContext* g;
  if (CUresult r = green_handle(hCtx, &g)) return r;
  Event* e;
  if (CUresult r = api::event_handle(hEvent, &e)) return r;
  return context_wait_event(g->ctx, e);  // the event may be any context's
}

#include "api/entries/green_context.inc"
