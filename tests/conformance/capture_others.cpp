// Calls on streams and events that take no part in a capture, made while
// another stream captures: for each capture mode, from the capturing thread
// and from another thread, the call's code and whether the capture survives
// (INFO rows; the comparison table shows where the drivers differ).
#include <functional>

#include "harness.h"

namespace {
void CUDA_CB noop(void*) {}

struct Env {
  CUstream capturing, idle;
  CUevent idle_event, fresh;
  CUdeviceptr mem;
  unsigned host[4];
};

struct Call {
  const char* name;
  std::function<CUresult(Env&)> run;
};

const Call kCalls[] = {
    {"StreamQuery", [](Env& e) { return cuStreamQuery(e.idle); }},
    {"StreamSynchronize", [](Env& e) { return cuStreamSynchronize(e.idle); }},
    {"EventQuery", [](Env& e) { return cuEventQuery(e.idle_event); }},
    {"EventSynchronize", [](Env& e) { return cuEventSynchronize(e.idle_event); }},
    {"EventRecord", [](Env& e) { return cuEventRecord(e.fresh, e.idle); }},
    {"StreamWaitEventHoldsWorkUntilTheEventCompletes", [](Env& e) { return cuStreamWaitEvent(e.idle, e.idle_event, 0); }},
    {"LaunchHostFunc", [](Env& e) { return cuLaunchHostFunc(e.idle, noop, nullptr); }},
    {"MemcpyHtoDAsync", [](Env& e) { return cuMemcpyHtoDAsync(e.mem, e.host, 16, e.idle); }},
    {"MemsetD8Async", [](Env& e) { return cuMemsetD8Async(e.mem, 0, 16, e.idle); }},
    {"StreamGetFlags", [](Env& e) { unsigned f; return cuStreamGetFlags(e.idle, &f); }},
    {"StreamIsCapturing", [](Env& e) { CUstreamCaptureStatus s; return cuStreamIsCapturing(e.idle, &s); }},
    {"CtxSynchronize", [](Env&) { return cuCtxSynchronize(); }},
    {"MemAlloc", [](Env&) {
       CUdeviceptr p;
       CUresult r = cuMemAlloc(&p, 64);
       if (r == CUDA_SUCCESS) cuMemFree(p);
       return r;
     }},
    {"MemcpyHtoD", [](Env& e) { return cuMemcpyHtoD(e.mem, e.host, 16); }},
    {"StreamCreate", [](Env&) {
       CUstream s;
       CUresult r = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
       if (r == CUDA_SUCCESS) cuStreamDestroy(s);
       return r;
     }},
    {"EventCreate", [](Env&) {
       CUevent ev;
       CUresult r = cuEventCreate(&ev, 0);
       if (r == CUDA_SUCCESS) cuEventDestroy(ev);
       return r;
     }},
    {"LegacyStreamQuery", [](Env&) { return cuStreamQuery(CU_STREAM_LEGACY); }},
    {"PerThreadStreamQuery", [](Env&) { return cuStreamQuery(CU_STREAM_PER_THREAD); }},
};

const struct {
  CUstreamCaptureMode mode;
  const char* name;
} kModes[] = {{CU_STREAM_CAPTURE_MODE_GLOBAL, "global"},
              {CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, "thread_local"},
              {CU_STREAM_CAPTURE_MODE_RELAXED, "relaxed"}};

}  // namespace

CONF_TEST(CallsOnOtherStreamsDuringCapture) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  Env e{};
  ASSERT_CU(cuStreamCreate(&e.capturing, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamCreate(&e.idle, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuEventCreate(&e.idle_event, 0));
  ASSERT_CU(cuEventCreate(&e.fresh, 0));
  ASSERT_CU(cuEventRecord(e.idle_event, e.idle));
  ASSERT_CU(cuMemAlloc(&e.mem, 64));
  ASSERT_CU(cuStreamSynchronize(e.idle));
  for (const auto& m : kModes) {
    for (int other_thread = 0; other_thread < 2; ++other_thread) {
      for (const Call& c : kCalls) {
        ASSERT_CU(cuStreamBeginCapture(e.capturing, m.mode));
        ASSERT_CU(cuLaunchHostFunc(e.capturing, noop, nullptr));
        CUresult r = CUDA_SUCCESS;
        if (other_thread) {
          std::thread([&] {
            cuCtxSetCurrent(conf::primary());
            r = c.run(e);
          }).join();
        } else {
          r = c.run(e);
        }
        CUgraph g = nullptr;
        CUresult end = cuStreamEndCapture(e.capturing, &g);
        if (g) cuGraphDestroy(g);
        char key[128];
        std::snprintf(key, sizeof key, "cap_%s_%s_%s", m.name, other_thread ? "other" : "same", c.name);
        conf::info(key, r);
        std::snprintf(key, sizeof key, "cap_%s_%s_%s_end", m.name, other_thread ? "other" : "same", c.name);
        conf::info(key, end);
        cuStreamSynchronize(e.idle);
        cuCtxSynchronize();
      }
    }
  }
  ASSERT_CU(cuMemFree(e.mem));
  ASSERT_CU(cuEventDestroy(e.idle_event));
  ASSERT_CU(cuEventDestroy(e.fresh));
  ASSERT_CU(cuStreamDestroy(e.idle));
  ASSERT_CU(cuStreamDestroy(e.capturing));
}

// Events and capture: an event last recorded inside a capture, queried and
// synchronized from outside it; the external-event flags used outside capture.
CONF_TEST(EventsAndCapture) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUstream s, t;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamCreate(&t, CU_STREAM_NON_BLOCKING));
  CUevent ev;
  ASSERT_CU(cuEventCreate(&ev, 0));
  for (int step = 0; step < 2; ++step) {
    ASSERT_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    ASSERT_CU(cuEventRecord(ev, s));
    const char* what = step == 0 ? "query" : "synchronize";
    CUresult r = step == 0 ? cuEventQuery(ev) : cuEventSynchronize(ev);
    CUgraph g = nullptr;
    CUresult end = cuStreamEndCapture(s, &g);
    if (g) cuGraphDestroy(g);
    char key[96];
    std::snprintf(key, sizeof key, "event_in_capture_%s", what);
    conf::info(key, r);
    std::snprintf(key, sizeof key, "event_in_capture_%s_end", what);
    conf::info(key, end);
    // After the capture ended, the event's last record is the captured one.
    std::snprintf(key, sizeof key, "event_after_capture_%s", what);
    conf::info(key, step == 0 ? cuEventQuery(ev) : cuEventSynchronize(ev));
  }
  conf::info("event_wait_external_outside_capture", cuStreamWaitEvent(t, ev, CU_EVENT_WAIT_EXTERNAL));
  conf::info("event_record_external_outside_capture", cuEventRecordWithFlags(ev, t, CU_EVENT_RECORD_EXTERNAL));
  conf::info("event_record_default_flags", cuEventRecordWithFlags(ev, t, CU_EVENT_RECORD_DEFAULT));
  conf::info("event_wait_bad_flags", cuStreamWaitEvent(t, ev, 0x8));
  conf::info("event_record_bad_flags", cuEventRecordWithFlags(ev, t, 0x8));
  ASSERT_CU(cuStreamSynchronize(t));
  ASSERT_CU(cuEventDestroy(ev));
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuStreamDestroy(t));
}

// Calls that are unsafe during a global-mode capture, made with arguments
// that are wrong as well: which check answers first, the capture rule or
// the argument's, and whether the capture survives.
CONF_TEST(UnsafeCallsWithBadArgumentsDuringCapture) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  // (Destroyed stream and event handles are left out: driver 580 crashes
  // on a destroyed event's query during a capture.)
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  const struct {
    const char* name;
    std::function<CUresult()> run;
  } calls[] = {
      {"MemAllocZeroBytes", [] { CUdeviceptr p; return cuMemAlloc(&p, 0); }},
      {"MemAllocNullOut", [] { return cuMemAlloc(nullptr, 64); }},
      {"MemFreeNull", [] { return cuMemFree(0); }},
      {"MemFreeUnknown", [] { return cuMemFree(CUdeviceptr{0x1234}); }},
      {"MemAllocHostZeroBytes", [] { void* p; return cuMemAllocHost(&p, 0); }},
      {"MemFreeHostNull", [] { return cuMemFreeHost(nullptr); }},
      {"CtxSynchronizeNoContext", [] {
         CUcontext popped;
         cuCtxPopCurrent(&popped);
         CUresult r = cuCtxSynchronize();
         cuCtxPushCurrent(popped);
         return r;
       }},
  };
  for (const auto& c : calls) {
    ASSERT_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    ASSERT_CU(cuLaunchHostFunc(s, noop, nullptr));
    CUresult r = c.run();
    CUgraph g = nullptr;
    CUresult end = cuStreamEndCapture(s, &g);
    if (g) cuGraphDestroy(g);
    char key[128];
    std::snprintf(key, sizeof key, "unsafe_bad_%s", c.name);
    conf::info(key, r);
    std::snprintf(key, sizeof key, "unsafe_bad_%s_end", c.name);
    conf::info(key, end);
  }
  ASSERT_CU(cuStreamDestroy(s));
}

// Destroying a stream the capture forked into: the stream leaves and the
// capture goes on (driver 580). Its work, once joined, stays in the graph,
// which runs; destroyed before its work is joined, the end says UNJOINED.
CONF_TEST(CaptureForkedStreamDestroyedLeavesTheCapture) {
  CUdeviceptr buf;
  ASSERT_CU(cuMemAlloc(&buf, 4));
  for (bool join_first : {true, false}) {
    CUstream origin, side;
    CUevent fork, join;
    ASSERT_CU(cuStreamCreate(&origin, CU_STREAM_NON_BLOCKING));
    ASSERT_CU(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));
    ASSERT_CU(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    ASSERT_CU(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    ASSERT_CU(cuMemsetD8(buf, 0, 4));
    ASSERT_CU(cuStreamBeginCapture(origin, CU_STREAM_CAPTURE_MODE_GLOBAL));
    ASSERT_CU(cuMemsetD8Async(buf, 1, 1, origin));
    ASSERT_CU(cuEventRecord(fork, origin));
    ASSERT_CU(cuStreamWaitEvent(side, fork, 0));
    ASSERT_CU(cuMemsetD8Async(buf + 1, 2, 1, side));
    if (join_first) {
      ASSERT_CU(cuEventRecord(join, side));
      ASSERT_CU(cuStreamWaitEvent(origin, join, 0));
    }
    ASSERT_CU(cuStreamDestroy(side));
    ASSERT_CU(cuEventDestroy(fork));
    ASSERT_CU(cuEventDestroy(join));
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    ASSERT_CU(cuStreamIsCapturing(origin, &st));
    EXPECT_TRUE(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CUgraph g = nullptr;
    if (!join_first) {
      EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, cuStreamEndCapture(origin, &g));
      ASSERT_CU(cuStreamDestroy(origin));
      continue;
    }
    ASSERT_CU(cuMemsetD8Async(buf + 2, 3, 1, origin));
    ASSERT_CU(cuStreamEndCapture(origin, &g));
    CUgraphExec e;
    ASSERT_CU(cuGraphInstantiate(&e, g, 0));
    ASSERT_CU(cuGraphLaunch(e, origin));
    ASSERT_CU(cuStreamSynchronize(origin));
    unsigned char v[4] = {9, 9, 9, 9};
    ASSERT_CU(cuMemcpyDtoH(v, buf, 4));
    EXPECT_TRUE(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 0);
    ASSERT_CU(cuGraphExecDestroy(e));
    ASSERT_CU(cuGraphDestroy(g));
    ASSERT_CU(cuStreamDestroy(origin));
  }
  ASSERT_CU(cuMemFree(buf));
}
