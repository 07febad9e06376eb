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
