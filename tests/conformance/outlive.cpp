// Objects that outlive their context, and handles made while another is
// checked: events, executable graphs and graphs of a destroyed context,
// child graphs added to a destroyed graph, and captures into a graph
// another capture owns. Each case ends with valid calls that must work.
#include <cstdint>
#include <vector>

#include "harness.h"

namespace {
// A context made, given an event and a graph (one memset node over its own
// allocation), then destroyed: what is left are stale handles.
struct DeadContext {
  CUevent event = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  DeadContext() {
    CUcontext c = nullptr;
    if (cuCtxCreate(&c, nullptr, 0, 0) != CUDA_SUCCESS) throw conf::Failure{"cuCtxCreate failed"};
    CUdeviceptr p = 0;
    cuMemAlloc(&p, 1 << 20);
    cuEventCreate(&event, 0);
    cuEventRecord(event, nullptr);
    cuGraphCreate(&graph, 0);
    CUDA_MEMSET_NODE_PARAMS m{};
    m.dst = p;
    m.value = 0xdeadbeef;
    m.elementSize = 4;
    m.width = (1 << 20) / 4;
    m.height = 1;
    CUgraphNode n = nullptr;
    cuGraphAddMemsetNode(&n, graph, nullptr, 0, &m, c);
    if (cuGraphInstantiate(&exec, graph, 0) != CUDA_SUCCESS) throw conf::Failure{"cuGraphInstantiate failed"};
    cuCtxSynchronize();
    if (cuCtxDestroy(c) != CUDA_SUCCESS) throw conf::Failure{"cuCtxDestroy failed"};
    cuCtxSetCurrent(conf::primary());
  }
};
}  // namespace

CONF_TEST(OutliveEventsOfADestroyedContextSayItIsDestroyed) {
  // Driver 580 has answered INVALID_CONTEXT here in one run and crashed in
  // another (H100, 2026-12-07): undefined there, a clear error here.
  SKIP_ON_NVIDIA("driver 580 crashes or answers INVALID_CONTEXT for an event of a destroyed context");
  DeadContext dead;
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuEventQuery(dead.event));
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuEventSynchronize(dead.event));
  // A context made after it may take the old one's place; the event is not
  // its. Driver 580 then answers INVALID_CONTEXT (seen for the query);
  // cucpu answers CONTEXT_IS_DESTROYED throughout.
  CUcontext next = nullptr;
  ASSERT_CU(cuCtxCreate(&next, nullptr, 0, 0));
  CUstream s = nullptr;
  ASSERT_CU(cuStreamCreate(&s, 0));
  CUevent mine = nullptr;
  ASSERT_CU(cuEventCreate(&mine, 0));
  ASSERT_CU(cuEventRecord(mine, s));
  ASSERT_CU(cuEventSynchronize(mine));
  float ms = 0;
  const CUresult stale[] = {cuEventQuery(dead.event), cuEventSynchronize(dead.event), cuEventRecord(dead.event, s),
                            cuEventRecord(dead.event, nullptr), cuEventElapsedTime(&ms, dead.event, mine),
                            cuEventDestroy(dead.event)};
  const char* names[] = {"outlive_event_query", "outlive_event_sync", "outlive_event_record",
                         "outlive_event_record_null", "outlive_event_elapsed", "outlive_event_destroy"};
  for (int i = 0; i < 6; ++i) {
    conf::info(names[i], stale[i]);
    if (conf::on_cucpu()) EXPECT_TRUE(stale[i] == CUDA_ERROR_CONTEXT_IS_DESTROYED);
    else EXPECT_TRUE(stale[i] != CUDA_SUCCESS);
  }
  // The new context works.
  ASSERT_CU(cuEventDestroy(mine));
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuCtxDestroy(next));
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
}

CONF_TEST(OutliveExecOfADestroyedContextNeverRuns) {
  SKIP_ON_NVIDIA("driver 580 crashes launching an executable graph of a destroyed context");
  DeadContext dead;
  CUcontext next = nullptr;
  ASSERT_CU(cuCtxCreate(&next, nullptr, 0, 0));
  // An allocation of the new context, where the old one's may have been.
  std::vector<CUdeviceptr> mine(4);
  for (CUdeviceptr& p : mine) {
    ASSERT_CU(cuMemAlloc(&p, 1 << 20));
    ASSERT_CU(cuMemsetD8(p, 0x11, 1 << 20));
  }
  CUstream s = nullptr;
  ASSERT_CU(cuStreamCreate(&s, 0));
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuGraphLaunch(dead.exec, s));
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuGraphLaunch(dead.exec, nullptr));
  ASSERT_CU(cuStreamSynchronize(s));
  for (CUdeviceptr p : mine) {
    unsigned char b[2] = {};
    ASSERT_CU(cuMemcpyDtoH(b, p, 1));
    ASSERT_CU(cuMemcpyDtoH(b + 1, p + (1 << 20) - 1, 1));
    EXPECT_TRUE(b[0] == 0x11 && b[1] == 0x11);
  }
  // Its graph, instantiated again: refused too; destroying both works.
  CUgraphExec again = nullptr;
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuGraphInstantiate(&again, dead.graph, 0));
  ASSERT_CU(cuGraphExecDestroy(dead.exec));
  ASSERT_CU(cuGraphDestroy(dead.graph));
  ASSERT_CU(cuCtxSynchronize());
  ASSERT_CU(cuStreamDestroy(s));
  for (CUdeviceptr p : mine) ASSERT_CU(cuMemFree(p));
  ASSERT_CU(cuCtxDestroy(next));
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
}

CONF_TEST(OutliveChildGraphAddedToADestroyedGraphIsRefused) {
  CUgraph parent = nullptr, child = nullptr;
  ASSERT_CU(cuGraphCreate(&parent, 0));
  ASSERT_CU(cuGraphCreate(&child, 0));
  CUgraphNode n = nullptr;
  ASSERT_CU(cuGraphAddEmptyNode(&n, child, nullptr, 0));
  ASSERT_CU(cuGraphDestroy(parent));
  CUgraphNode added = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddChildGraphNode(&added, parent, nullptr, 0, child));
  // Nothing was made of it: the child still clones and instantiates.
  CUgraph copy = nullptr;
  ASSERT_CU(cuGraphClone(&copy, child));
  CUgraphExec exec = nullptr;
  ASSERT_CU(cuGraphInstantiate(&exec, copy, 0));
  ASSERT_CU(cuGraphLaunch(exec, nullptr));
  ASSERT_CU(cuStreamSynchronize(nullptr));
  ASSERT_CU(cuGraphExecDestroy(exec));
  ASSERT_CU(cuGraphDestroy(copy));
  ASSERT_CU(cuGraphDestroy(child));
}

CONF_TEST(OutliveCaptureIntoAGraphAnotherCaptureOwnsIsRefused) {
  CUstream a = nullptr, b = nullptr;
  ASSERT_CU(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAlloc(&p, 64));
  ASSERT_CU(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_RELAXED));
  ASSERT_CU(cuMemsetD8Async(p, 1, 64, a));
  CUstreamCaptureStatus st;
  CUgraph owned = nullptr;
  ASSERT_CU(cuStreamGetCaptureInfo(a, &st, nullptr, &owned, nullptr, nullptr, nullptr));
  // Its owner could free it under the second capture.
  EXPECT_CU(CUDA_ERROR_ILLEGAL_STATE,
            cuStreamBeginCaptureToGraph(b, owned, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED));
  CUstreamCaptureStatus bst = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  ASSERT_CU(cuStreamIsCapturing(b, &bst));
  EXPECT_TRUE(bst == CU_STREAM_CAPTURE_STATUS_NONE);
  // The first capture ends without handing its graph over; captures still work.
  ASSERT_CU(cuStreamDestroy(a));
  CUgraph g = nullptr;
  ASSERT_CU(cuStreamBeginCapture(b, CU_STREAM_CAPTURE_MODE_RELAXED));
  ASSERT_CU(cuMemsetD8Async(p, 3, 64, b));
  ASSERT_CU(cuStreamEndCapture(b, &g));
  CUgraphExec exec = nullptr;
  ASSERT_CU(cuGraphInstantiate(&exec, g, 0));
  ASSERT_CU(cuGraphLaunch(exec, b));
  ASSERT_CU(cuStreamSynchronize(b));
  ASSERT_CU(cuGraphExecDestroy(exec));
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuStreamDestroy(b));
  ASSERT_CU(cuMemFree(p));
}

// A host registration belongs to the context that made it: any context, or
// none, may unregister it while that context lives; once it is destroyed the
// registration is gone (UCX reports driver behaviour so), and the range may
// be registered again.
CONF_TEST(OutliveHostRegistrationEndsWithItsContext) {
  std::vector<char> buf(3 * 8192);
  char* first = buf.data();
  char* second = buf.data() + 8192;
  CUcontext c = nullptr;
  ASSERT_CU(cuCtxCreate(&c, nullptr, 0, 0));
  ASSERT_CU(cuMemHostRegister(first, 4096, 0));
  ASSERT_CU(cuMemHostRegister(second, 4096, 0));
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  ASSERT_CU(cuMemHostUnregister(first));  // another context
  ASSERT_CU(cuMemHostRegister(first, 4096, 0));
  ASSERT_CU(cuCtxSetCurrent(nullptr));
  ASSERT_CU(cuMemHostUnregister(first));  // no context at all
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  ASSERT_CU(cuCtxDestroy(c));
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  EXPECT_CU(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(second));
  ASSERT_CU(cuMemHostRegister(second, 4096, 0));
  ASSERT_CU(cuMemHostUnregister(second));
}
