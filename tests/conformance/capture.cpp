// Stream capture: rules, status queries and the graphs it builds.
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "harness.h"

namespace {

std::atomic<int> g_runs{0};
void CUDA_CB count_run(void*) { g_runs++; }

struct Captured {
  CUstream s = nullptr;
  Captured(unsigned flags = CU_STREAM_NON_BLOCKING) { cuStreamCreate(&s, flags); }
  ~Captured() { cuStreamDestroy(s); }
};

size_t node_count(CUgraph g) {
  size_t n = 0;
  cuGraphGetNodes(g, nullptr, &n);
  return n;
}
size_t edge_count(CUgraph g) {
  size_t n = 0;
  cuGraphGetEdges(g, nullptr, nullptr, nullptr, &n);
  return n;
}

}  // namespace

CONF_TEST(CaptureRefusesLegacyStreamsBadModesAndUnpairedCalls) {
  EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuStreamBeginCapture(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL));
  EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuStreamBeginCapture(nullptr, CU_STREAM_CAPTURE_MODE_GLOBAL));
  Captured c;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamBeginCapture(c.s, static_cast<CUstreamCaptureMode>(7)));
  CUgraph g = nullptr;
  EXPECT_CU(CUDA_ERROR_ILLEGAL_STATE, cuStreamEndCapture(c.s, &g));
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  EXPECT_CU(CUDA_ERROR_ILLEGAL_STATE, cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU(cuStreamEndCapture(c.s, nullptr));  // ends the capture, discarding the graph
  EXPECT_CU(CUDA_ERROR_ILLEGAL_STATE, cuStreamEndCapture(c.s, &g));
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU(cuStreamEndCapture(c.s, &g));
  EXPECT_TRUE(g != nullptr && node_count(g) == 0);  // an empty capture
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  ASSERT_CU(cuGraphLaunch(e, c.s));
  ASSERT_CU(cuStreamSynchronize(c.s));
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuGraphDestroy(g));
  conf::info("capture_begin_per_thread", cuStreamBeginCapture(CU_STREAM_PER_THREAD, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUgraph pg = nullptr;
  conf::info("capture_end_per_thread", cuStreamEndCapture(CU_STREAM_PER_THREAD, &pg));
  if (pg) cuGraphDestroy(pg);
}

CONF_TEST(CapturedChainBecomesALinearGraphThatReplays) {
  Captured c;
  CUdeviceptr d;
  ASSERT_CU(cuMemAlloc(&d, 4096));
  std::vector<unsigned char> host(4096, 0);
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUstreamCaptureStatus st;
  ASSERT_CU(cuStreamIsCapturing(c.s, &st));
  EXPECT_TRUE(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  ASSERT_CU(cuMemsetD8Async(d, 7, 4096, c.s));
  ASSERT_CU(cuLaunchHostFunc(c.s, count_run, nullptr));
  ASSERT_CU(cuMemcpyDtoHAsync(host.data(), d, 4096, c.s));
  EXPECT_TRUE(host[0] == 0);  // captured, not run
  CUgraph g;
  ASSERT_CU(cuStreamEndCapture(c.s, &g));
  ASSERT_CU(cuStreamIsCapturing(c.s, &st));
  EXPECT_TRUE(st == CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_TRUE(node_count(g) == 3 && edge_count(g) == 2);
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  g_runs = 0;
  for (int i = 0; i < 1000; ++i) ASSERT_CU(cuGraphLaunch(e, c.s));
  ASSERT_CU(cuStreamSynchronize(c.s));
  EXPECT_TRUE(g_runs == 1000 && host[4095] == 7);
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuMemFree(d));
}

CONF_TEST(CapturedForkAndJoinBecomeADiamondGraph) {
  Captured a, b;
  CUevent fork, joinev;
  ASSERT_CU(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
  ASSERT_CU(cuEventCreate(&joinev, CU_EVENT_DISABLE_TIMING));
  ASSERT_CU(cuStreamBeginCapture(a.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU(cuLaunchHostFunc(a.s, count_run, nullptr));  // A
  ASSERT_CU(cuEventRecord(fork, a.s));
  ASSERT_CU(cuStreamWaitEvent(b.s, fork, 0));  // b joins the capture
  CUstreamCaptureStatus st;
  ASSERT_CU(cuStreamIsCapturing(b.s, &st));
  EXPECT_TRUE(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  ASSERT_CU(cuLaunchHostFunc(a.s, count_run, nullptr));  // B
  ASSERT_CU(cuLaunchHostFunc(b.s, count_run, nullptr));  // C
  ASSERT_CU(cuEventRecord(joinev, b.s));
  ASSERT_CU(cuStreamWaitEvent(a.s, joinev, 0));
  ASSERT_CU(cuLaunchHostFunc(a.s, count_run, nullptr));  // D
  CUgraph g;
  ASSERT_CU(cuStreamEndCapture(a.s, &g));
  EXPECT_TRUE(node_count(g) == 4 && edge_count(g) == 4);
  size_t roots = 0;
  ASSERT_CU(cuGraphGetRootNodes(g, nullptr, &roots));
  EXPECT_TRUE(roots == 1);
  ASSERT_CU(cuStreamIsCapturing(b.s, &st));
  EXPECT_TRUE(st == CU_STREAM_CAPTURE_STATUS_NONE);
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  g_runs = 0;
  for (int i = 0; i < 1000; ++i) ASSERT_CU(cuGraphLaunch(e, a.s));
  ASSERT_CU(cuStreamSynchronize(a.s));
  EXPECT_TRUE(g_runs == 4000);
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuEventDestroy(fork));
  ASSERT_CU(cuEventDestroy(joinev));
}

CONF_TEST(CaptureEndWithAnUnjoinedForkSaysUnjoined) {
  Captured a, b;
  CUevent fork;
  ASSERT_CU(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
  ASSERT_CU(cuStreamBeginCapture(a.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU(cuEventRecord(fork, a.s));
  ASSERT_CU(cuStreamWaitEvent(b.s, fork, 0));
  ASSERT_CU(cuLaunchHostFunc(b.s, count_run, nullptr));
  CUgraph g = reinterpret_cast<CUgraph>(1);
  EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, cuStreamEndCapture(a.s, &g));
  conf::info_value("unjoined_graph_is_null", g == nullptr);
  CUstreamCaptureStatus st;
  conf::info("unjoined_fork_status_call", cuStreamIsCapturing(b.s, &st));
  conf::info_value("unjoined_fork_status", st);
  ASSERT_CU(cuEventDestroy(fork));
}

CONF_TEST(CaptureInvalidatedByQuery) {
  Captured c;
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU(cuLaunchHostFunc(c.s, count_run, nullptr));
  EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuStreamQuery(c.s));
  CUstreamCaptureStatus st;
  ASSERT_CU(cuStreamIsCapturing(c.s, &st));
  EXPECT_TRUE(st == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  conf::info("capture_enqueue_after_invalidation", cuLaunchHostFunc(c.s, count_run, nullptr));
  CUgraph g = reinterpret_cast<CUgraph>(1);
  EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, cuStreamEndCapture(c.s, &g));
  EXPECT_TRUE(g == nullptr);
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuStreamSynchronize(c.s));
  EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, cuStreamEndCapture(c.s, &g));
}

CONF_TEST(CaptureOnABlockingStreamMakesLegacyUseImplicit) {
  Captured c(CU_STREAM_DEFAULT);  // blocking
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  CUstreamCaptureStatus st;
  EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, cuStreamIsCapturing(CU_STREAM_LEGACY, &st));
  conf::info("capture_legacy_hostfunc", cuLaunchHostFunc(CU_STREAM_LEGACY, count_run, nullptr));
  conf::info("capture_legacy_query", cuStreamQuery(CU_STREAM_LEGACY));
  CUgraph g = nullptr;
  conf::info("capture_end_after_legacy_use", cuStreamEndCapture(c.s, &g));
  if (g) cuGraphDestroy(g);
  Captured nb;  // non-blocking streams do not involve the legacy stream
  ASSERT_CU(cuStreamBeginCapture(nb.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU(cuStreamIsCapturing(CU_STREAM_LEGACY, &st));
  EXPECT_TRUE(st == CU_STREAM_CAPTURE_STATUS_NONE);
  ASSERT_CU(cuStreamEndCapture(nb.s, &g));
  ASSERT_CU(cuGraphDestroy(g));
}

CONF_TEST(ThreadCaptureModeExchangeSwapsAnyValue) {
  Captured c;
  CUdeviceptr p = 0;
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  conf::info("capture_global_memalloc", cuMemAlloc(&p, 64));
  CUgraph g = nullptr;
  conf::info("capture_global_end_after_memalloc", cuStreamEndCapture(c.s, &g));
  if (g) cuGraphDestroy(g);
  if (p) cuMemFree(p);
  p = 0;
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  conf::info("capture_relaxed_memalloc", cuMemAlloc(&p, 64));
  ASSERT_CU(cuStreamEndCapture(c.s, &g));
  ASSERT_CU(cuGraphDestroy(g));
  if (p) cuMemFree(p);
  p = 0;
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  ASSERT_CU(cuThreadExchangeStreamCaptureMode(&mode));
  EXPECT_TRUE(mode == CU_STREAM_CAPTURE_MODE_GLOBAL);
  conf::info("capture_global_seq_relaxed_thread_memalloc", cuMemAlloc(&p, 64));
  ASSERT_CU(cuThreadExchangeStreamCaptureMode(&mode));
  conf::info("capture_end_after_relaxed_thread_alloc", cuStreamEndCapture(c.s, &g));
  if (g) cuGraphDestroy(g);
  if (p) cuMemFree(p);
  mode = static_cast<CUstreamCaptureMode>(9);
  ASSERT_CU(cuThreadExchangeStreamCaptureMode(&mode));  // accepted as is
  ASSERT_CU(cuThreadExchangeStreamCaptureMode(&mode));
  int raw;
  std::memcpy(&raw, &mode, sizeof raw);
  EXPECT_TRUE(raw == 9);
  mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  ASSERT_CU(cuThreadExchangeStreamCaptureMode(&mode));
  SKIP_ON_NVIDIA("cuThreadExchangeStreamCaptureMode(NULL) is not probed on the driver");
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuThreadExchangeStreamCaptureMode(nullptr));
}

CONF_TEST(CaptureNonCapturableWork) {
  Captured c;
  CUgraph g = nullptr;
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  conf::info("capture_add_callback", cuStreamAddCallback(c.s, [](CUstream, CUresult, void*) {}, nullptr, 0));
  conf::info("capture_end_after_callback", cuStreamEndCapture(c.s, &g));
  if (g) cuGraphDestroy(g);
  g = nullptr;
  CUdeviceptr m;
  ASSERT_CU(cuMemAllocManaged(&m, 256, CU_MEM_ATTACH_GLOBAL));
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  conf::info("capture_attach_mem", cuStreamAttachMemAsync(c.s, m, 0, CU_MEM_ATTACH_SINGLE));
  conf::info("capture_end_after_attach", cuStreamEndCapture(c.s, &g));
  if (g) cuGraphDestroy(g);
  g = nullptr;
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  CUDA_MEMCPY3D_BATCH_OP op{};
  op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op.src.op.ptr.ptr = m;
  op.dst.op.ptr.ptr = m + 128;
  op.extent = {64, 1, 1};
  op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  conf::info("capture_batch_copy", cuMemcpy3DBatchAsync(1, &op, 0, c.s));
  conf::info("capture_end_after_batch", cuStreamEndCapture(c.s, &g));
  if (g) cuGraphDestroy(g);
  ASSERT_CU(cuMemFree(m));
}

CONF_TEST(CapturedExternalRecordAndWaitBecomeEventNodes) {
  Captured a, b, other;
  CUevent inside, outside;
  ASSERT_CU(cuEventCreate(&inside, 0));
  ASSERT_CU(cuEventCreate(&outside, 0));
  ASSERT_CU(cuEventRecord(outside, other.s));
  ASSERT_CU(cuStreamSynchronize(other.s));
  ASSERT_CU(cuStreamBeginCapture(a.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  ASSERT_CU(cuLaunchHostFunc(a.s, count_run, nullptr));
  ASSERT_CU(cuEventRecord(inside, a.s));
  conf::info("captured_event_query", cuEventQuery(inside));
  conf::info("captured_event_sync", cuEventSynchronize(inside));
  conf::info("capture_wait_outside_event", cuStreamWaitEvent(a.s, outside, 0));
  CUgraph g = nullptr;
  conf::info("capture_end_after_outside_wait", cuStreamEndCapture(a.s, &g));
  if (g) cuGraphDestroy(g);
  // Two sequences meeting.
  g = nullptr;
  ASSERT_CU(cuStreamBeginCapture(a.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  ASSERT_CU(cuStreamBeginCapture(b.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  ASSERT_CU(cuEventRecord(inside, a.s));
  conf::info("capture_merge_wait", cuStreamWaitEvent(b.s, inside, 0));
  CUgraph g2 = nullptr;
  conf::info("capture_merge_end_a", cuStreamEndCapture(a.s, &g));
  conf::info("capture_merge_end_b", cuStreamEndCapture(b.s, &g2));
  if (g) cuGraphDestroy(g);
  if (g2) cuGraphDestroy(g2);
  // External record and wait become event nodes.
  ASSERT_CU(cuStreamBeginCapture(a.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  ASSERT_CU(cuEventRecordWithFlags(outside, a.s, CU_EVENT_RECORD_EXTERNAL));
  ASSERT_CU(cuStreamWaitEvent(a.s, outside, CU_EVENT_WAIT_EXTERNAL));
  ASSERT_CU(cuStreamEndCapture(a.s, &g));
  CUgraphNode nodes[2];
  size_t n = 2;
  ASSERT_CU(cuGraphGetNodes(g, nodes, &n));
  EXPECT_TRUE(n == 2);
  CUgraphNodeType t0, t1;
  ASSERT_CU(cuGraphNodeGetType(nodes[0], &t0));
  ASSERT_CU(cuGraphNodeGetType(nodes[1], &t1));
  EXPECT_TRUE(t0 == CU_GRAPH_NODE_TYPE_EVENT_RECORD && t1 == CU_GRAPH_NODE_TYPE_WAIT_EVENT);
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuEventDestroy(inside));
  ASSERT_CU(cuEventDestroy(outside));
}

CONF_TEST(CaptureWaitOnOutsideEvent) {
  Captured a, other;
  CUevent outside;
  ASSERT_CU(cuEventCreate(&outside, 0));
  ASSERT_CU(cuLaunchHostFunc(other.s, count_run, nullptr));
  ASSERT_CU(cuEventRecord(outside, other.s));
  ASSERT_CU(cuStreamSynchronize(other.s));
  ASSERT_CU(cuStreamBeginCapture(a.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  conf::info("capture_wait_completed_outside_event", cuStreamWaitEvent(a.s, outside, 0));
  CUgraph g = nullptr;
  conf::info("capture_end_after_completed_outside_wait", cuStreamEndCapture(a.s, &g));
  if (g) cuGraphDestroy(g);
  ASSERT_CU(cuEventDestroy(outside));
}

CONF_TEST(CaptureInfoTracksDependenciesThatUpdateSetsAndAdds) {
  Captured c;
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  cuuint64_t id = 0;
  CUgraph g = nullptr;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  size_t n = 99;
  ASSERT_CU(cuStreamGetCaptureInfo(c.s, &st, &id, &g, &deps, &edges, &n));
  EXPECT_TRUE(st == CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_CU(CUDA_ERROR_ILLEGAL_STATE, cuStreamUpdateCaptureDependencies(c.s, nullptr, nullptr, 0, 0));
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU(cuStreamGetCaptureInfo(c.s, &st, &id, &g, &deps, &edges, &n));
  EXPECT_TRUE(st == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && g != nullptr && n == 0);
  ASSERT_CU(cuLaunchHostFunc(c.s, count_run, nullptr));
  ASSERT_CU(cuStreamGetCaptureInfo(c.s, &st, &id, &g, &deps, &edges, &n));
  EXPECT_TRUE(n == 1 && deps != nullptr);
  EXPECT_TRUE(edges != nullptr);  // returned even when every edge is default
  CUgraphNode first = deps[0];
  // SET to nothing: the next node is a second root.
  ASSERT_CU(cuStreamUpdateCaptureDependencies(c.s, nullptr, nullptr, 0, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  ASSERT_CU(cuLaunchHostFunc(c.s, count_run, nullptr));
  ASSERT_CU(cuStreamGetCaptureInfo(c.s, &st, &id, &g, &deps, &edges, &n));
  CUgraphNode second = deps[0];
  // ADD the first back: the third node joins both.
  ASSERT_CU(cuStreamUpdateCaptureDependencies(c.s, &first, nullptr, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
  ASSERT_CU(cuStreamGetCaptureInfo(c.s, &st, &id, &g, &deps, &edges, &n));
  EXPECT_TRUE(n == 2);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamUpdateCaptureDependencies(c.s, &second, nullptr, 1, 7));
  ASSERT_CU(cuLaunchHostFunc(c.s, count_run, nullptr));
  CUgraph out;
  ASSERT_CU(cuStreamEndCapture(c.s, &out));
  size_t roots = 0;
  ASSERT_CU(cuGraphGetRootNodes(out, nullptr, &roots));
  EXPECT_TRUE(node_count(out) == 3 && roots == 2 && edge_count(out) == 2);
  ASSERT_CU(cuGraphDestroy(out));
}

CONF_TEST(CaptureToAGraphExtendsThatGraph) {
  CUgraph g;
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUgraphNode root;
  ASSERT_CU(cuGraphAddEmptyNode(&root, g, nullptr, 0));
  Captured c;
  ASSERT_CU(cuStreamBeginCaptureToGraph(c.s, g, &root, nullptr, 1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU(cuLaunchHostFunc(c.s, count_run, nullptr));
  CUgraph out = nullptr;
  ASSERT_CU(cuStreamEndCapture(c.s, &out));
  EXPECT_TRUE(out == g);
  EXPECT_TRUE(node_count(g) == 2 && edge_count(g) == 1);
  ASSERT_CU(cuGraphDestroy(g));
}

CONF_TEST(CaptureEndFromAnotherThreadIsRefusedUnlessRelaxed) {
  Captured c;
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUresult r = CUDA_SUCCESS;
  CUgraph g = nullptr;
  std::thread t([&] {
    cuCtxSetCurrent(conf::primary());
    r = cuStreamEndCapture(c.s, &g);
  });
  t.join();
  EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, r);
  EXPECT_CU(CUDA_ERROR_ILLEGAL_STATE, cuStreamEndCapture(c.s, &g));  // the attempt ended it
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_RELAXED));
  std::thread t2([&] {
    cuCtxSetCurrent(conf::primary());
    r = cuStreamEndCapture(c.s, &g);
  });
  t2.join();
  EXPECT_CU(CUDA_SUCCESS, r);
  ASSERT_CU(cuGraphDestroy(g));
}

CONF_TEST(CaptureGraphLaunchRefused) {
  CUgraph inner;
  ASSERT_CU(cuGraphCreate(&inner, 0));
  CUDA_HOST_NODE_PARAMS hp{count_run, nullptr};
  CUgraphNode a;
  ASSERT_CU(cuGraphAddHostNode(&a, inner, nullptr, 0, &hp));
  CUgraphExec inner_exec;
  ASSERT_CU(cuGraphInstantiate(&inner_exec, inner, 0));
  Captured c;
  ASSERT_CU(cuStreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  // Driver 580 refuses a graph launch into a capture and invalidates it.
  EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuGraphLaunch(inner_exec, c.s));
  CUgraph outer = nullptr;
  EXPECT_CU(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, cuStreamEndCapture(c.s, &outer));
  ASSERT_CU(cuGraphExecDestroy(inner_exec));
  ASSERT_CU(cuGraphDestroy(inner));
}
