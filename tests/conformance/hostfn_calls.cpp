// Which API calls a host function may make: observed on each driver and
// printed as INFO lines; the comparison table shows where they differ.
#include "harness.h"

namespace {
struct Probe {
  CUstream other;
  CUevent ev;
  CUresult r[12];
};
void CUDA_CB probe_calls(void* p) {
  auto* x = static_cast<Probe*>(p);
  int dummy;
  unsigned long long id;
  CUcontext c;
  x->r[0] = cuStreamQuery(x->other);
  x->r[1] = cuEventRecord(x->ev, x->other);
  x->r[2] = cuStreamGetId(x->other, &id);
  x->r[3] = cuCtxGetCurrent(&c);
  x->r[4] = cuDeviceGetAttribute(&dummy, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0);
  x->r[5] = cuEventQuery(x->ev);
  CUdeviceptr m;
  x->r[6] = cuMemAlloc(&m, 16);
  if (x->r[6] == CUDA_SUCCESS) cuMemFree(m);
  CUstream s2;
  x->r[7] = cuStreamCreate(&s2, 0);
  if (x->r[7] == CUDA_SUCCESS) cuStreamDestroy(s2);
  x->r[8] = cuCtxGetStreamPriorityRange(&dummy, &dummy);
  int v;
  x->r[9] = cuDriverGetVersion(&v);
}
}  // namespace

CONF_TEST(CallsInsideHostFunction) {
  Probe p{};
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamCreate(&p.other, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuEventCreate(&p.ev, 0));
  ASSERT_CU(cuLaunchHostFunc(s, probe_calls, &p));
  ASSERT_CU(cuStreamSynchronize(s));
  const char* names[] = {"hostfn_StreamQuery", "hostfn_EventRecord", "hostfn_StreamGetId",
                         "hostfn_CtxGetCurrent", "hostfn_DeviceGetAttribute", "hostfn_EventQuery",
                         "hostfn_MemAlloc", "hostfn_StreamCreate", "hostfn_CtxGetStreamPriorityRange",
                         "hostfn_DriverGetVersion"};
  for (int i = 0; i < 10; ++i) conf::info(names[i], p.r[i]);
  ASSERT_CU(cuStreamSynchronize(p.other));
  ASSERT_CU(cuEventDestroy(p.ev));
  ASSERT_CU(cuStreamDestroy(p.other));
  ASSERT_CU(cuStreamDestroy(s));
}

// "The callback stream is considered idle for the duration of the
// callback": what a host function sees of its own stream, and of an event
// recorded just before it; and what another thread sees meanwhile.
namespace {
struct OwnStream {
  CUstream self;
  CUevent before;
  CUresult query_self, query_event;
  conf::Gate gate;
};
void CUDA_CB look_at_own_stream(void* p) {
  auto* x = static_cast<OwnStream*>(p);
  x->query_self = cuStreamQuery(x->self);
  x->query_event = cuEventQuery(x->before);
  conf::Gate::hold(&x->gate);
}
}  // namespace

CONF_TEST(HostFnSeesItsOwnStream) {
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  OwnStream o{};
  o.self = s;
  ASSERT_CU(cuEventCreate(&o.before, CU_EVENT_DISABLE_TIMING));
  ASSERT_CU(cuEventRecord(o.before, s));
  ASSERT_CU(cuLaunchHostFunc(s, look_at_own_stream, &o));
  while (!o.gate.entered.load()) std::this_thread::yield();
  conf::info("hostfn_running_query_from_outside", cuStreamQuery(s));
  o.gate.release();
  ASSERT_CU(cuStreamSynchronize(s));
  conf::info("hostfn_query_own_stream", o.query_self);
  conf::info("hostfn_query_event_before_it", o.query_event);
  ASSERT_CU(cuEventDestroy(o.before));
  ASSERT_CU(cuStreamDestroy(s));
}

// Stream-ordered calls a host function makes on another stream: the worker
// running it has no current context, and the driver takes the context from
// the stream. The work must also get done.
namespace {
const char* kFillPtx =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry fill(.param .u64 p, .param .u32 v)\n{\n.reg .b64 %rd<2>;\n.reg .b32 %r<2>;\n"
    "ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [v];\nst.global.u32 [%rd1], %r1;\nret;\n}\n";

struct AsyncProbe {
  CUstream other;
  CUevent ev;
  CUfunction fill;
  CUdeviceptr a, b, managed;
  unsigned host[4];
  CUresult r[24];
  int ran = 0;
};
void CUDA_CB count_run(void* p) { ++static_cast<AsyncProbe*>(p)->ran; }
void CUDA_CB count_callback(CUstream, CUresult, void* p) { ++static_cast<AsyncProbe*>(p)->ran; }
void CUDA_CB async_calls(void* p) {
  auto* x = static_cast<AsyncProbe*>(p);
  int i = 0;
  x->r[i++] = cuMemsetD32Async(x->a, 7, 4, x->other);
  x->r[i++] = cuMemcpyDtoDAsync(x->b, x->a, 16, x->other);
  x->r[i++] = cuMemcpyDtoHAsync(x->host, x->b, 16, x->other);
  x->r[i++] = cuMemcpyHtoDAsync(x->a + 16, x->host, 16, x->other);
  x->r[i++] = cuMemsetD8Async(x->a + 32, 1, 16, x->other);
  x->r[i++] = cuMemcpyAsync(x->a + 48, x->b, 16, x->other);
  x->r[i++] = cuLaunchHostFunc(x->other, count_run, x);
  x->r[i++] = cuStreamAddCallback(x->other, count_callback, x, 0);
  unsigned v = 9;
  void* args[] = {&x->b, &v};
  x->r[i++] = cuLaunchKernel(x->fill, 1, 1, 1, 1, 1, 1, 0, x->other, args, nullptr);
  x->r[i++] = cuEventRecord(x->ev, x->other);
  x->r[i++] = cuStreamWaitEvent(x->other, x->ev, 0);
  x->r[i++] = cuStreamWriteValue32(x->other, x->a + 60, 5, 0);
  CUdeviceptr tmp = 0;
  x->r[i++] = cuMemAllocAsync(&tmp, 256, x->other);
  x->r[i++] = tmp ? cuMemFreeAsync(tmp, x->other) : CUDA_ERROR_INVALID_VALUE;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  x->r[i++] = cuMemPrefetchAsync(x->managed, 64, loc, 0, x->other);
  CUstreamCaptureStatus st;
  x->r[i++] = cuStreamIsCapturing(x->other, &st);
  CUstreamCaptureStatus st2;
  cuuint64_t id = 0;
  x->r[i++] = cuStreamGetCaptureInfo(x->other, &st2, &id, nullptr, nullptr, nullptr, nullptr);
  CUcontext c;
  x->r[i++] = cuStreamGetCtx(x->other, &c);
  unsigned flags;
  x->r[i++] = cuStreamGetFlags(x->other, &flags);
  int prio;
  x->r[i++] = cuStreamGetPriority(x->other, &prio);
  CUdevice dev;
  x->r[i++] = cuStreamGetDevice(x->other, &dev);
}
}  // namespace

CONF_TEST(HostFnEnqueuesOnAnotherStream) {
  conf::primary();
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  AsyncProbe p{};
  CUmodule m;
  ASSERT_CU(cuModuleLoadData(&m, kFillPtx));
  ASSERT_CU(cuModuleGetFunction(&p.fill, m, "fill"));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamCreate(&p.other, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuEventCreate(&p.ev, 0));
  ASSERT_CU(cuMemAlloc(&p.a, 64));
  ASSERT_CU(cuMemAlloc(&p.b, 64));
  ASSERT_CU(cuMemAllocManaged(&p.managed, 64, CU_MEM_ATTACH_GLOBAL));
  ASSERT_CU(cuLaunchHostFunc(s, async_calls, &p));
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuStreamSynchronize(p.other));
  const char* names[] = {"MemsetD32Async", "MemcpyDtoDAsync", "MemcpyDtoHAsync", "MemcpyHtoDAsync", "MemsetD8Async",
                         "MemcpyAsync", "LaunchHostFunc", "StreamAddCallback", "LaunchKernel", "EventRecord",
                         "StreamWaitEventHoldsWorkUntilTheEventCompletes", "StreamWriteValue32", "MemAllocAsync", "MemFreeAsync",
                         "MemPrefetchAsync", "StreamIsCapturing", "StreamGetCaptureInfo", "StreamGetCtx",
                         "StreamGetFlags", "StreamGetPriority", "StreamGetDevice"};
  for (int i = 0; i < 21; ++i) {
    char key[64];
    std::snprintf(key, sizeof key, "hostfn_other_%s", names[i]);
    conf::info(key, p.r[i]);
  }
  unsigned b0 = 0;
  ASSERT_CU(cuMemcpyDtoH(&b0, p.b, 4));
  conf::info_value("hostfn_other_host_copy", p.r[2] == CUDA_SUCCESS ? p.host[0] : 0);
  conf::info_value("hostfn_other_kernel_wrote", b0);
  conf::info_value("hostfn_other_host_work_ran", p.ran);
  ASSERT_CU(cuMemFree(p.a));
  ASSERT_CU(cuMemFree(p.b));
  ASSERT_CU(cuMemFree(p.managed));
  ASSERT_CU(cuEventDestroy(p.ev));
  ASSERT_CU(cuStreamDestroy(p.other));
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuModuleUnload(m));
}
