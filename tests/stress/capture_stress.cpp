// Stress: threads capturing concurrently in each capture mode, and the
// resulting graphs launched concurrently on many streams. Every host node
// must run exactly once per launch, and each graph's memset-then-copy order
// must hold in every launch.
#include <gtest/gtest.h>
#include <cuda.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

std::atomic<long> g_runs{0};
void CUDA_CB count(void*) { g_runs.fetch_add(1, std::memory_order_relaxed); }

void capture_and_launch(CUcontext ctx, int t, std::atomic<int>* failures) {
  cuCtxSetCurrent(ctx);
  const CUstreamCaptureMode modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                       CU_STREAM_CAPTURE_MODE_RELAXED};
  CUstream a, b;
  cuStreamCreate(&a, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&b, CU_STREAM_NON_BLOCKING);
  CUevent fork, join;
  cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING);
  cuEventCreate(&join, CU_EVENT_DISABLE_TIMING);
  CUdeviceptr buf = 0;
  std::vector<unsigned char> out(256);
  // Allocation is not allowed while another thread's GLOBAL capture is
  // active in this thread's GLOBAL mode: allocate in RELAXED mode.
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  cuThreadExchangeStreamCaptureMode(&mode);
  if (cuMemAlloc(&buf, 256) != CUDA_SUCCESS) failures->fetch_add(1);
  cuThreadExchangeStreamCaptureMode(&mode);
  for (int round = 0; round < 20; ++round) {
    if (cuStreamBeginCapture(a, modes[(t + round) % 3]) != CUDA_SUCCESS) failures->fetch_add(1);
    cuMemsetD8Async(buf, static_cast<unsigned char>(round), 256, a);
    cuEventRecord(fork, a);
    cuStreamWaitEvent(b, fork, 0);
    cuLaunchHostFunc(b, count, nullptr);
    cuLaunchHostFunc(a, count, nullptr);
    cuEventRecord(join, b);
    cuStreamWaitEvent(a, join, 0);
    cuMemcpyDtoHAsync(out.data(), buf, 256, a);
    CUgraph g = nullptr;
    if (cuStreamEndCapture(a, &g) != CUDA_SUCCESS || !g) {
      failures->fetch_add(1);
      continue;
    }
    size_t nodes = 0;
    cuGraphGetNodes(g, nullptr, &nodes);
    if (nodes != 4) failures->fetch_add(1);
    CUgraphExec e;
    if (cuGraphInstantiate(&e, g, 0) != CUDA_SUCCESS) failures->fetch_add(1);
    for (int l = 0; l < 10; ++l) cuGraphLaunch(e, (l & 1) ? a : b);
    // Synchronizing is an unsafe call while another thread's GLOBAL capture
    // runs (driver 580 refuses it and invalidates that capture): RELAXED here.
    CUstreamCaptureMode sync_mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    cuThreadExchangeStreamCaptureMode(&sync_mode);
    cuStreamSynchronize(a);
    cuStreamSynchronize(b);
    cuThreadExchangeStreamCaptureMode(&sync_mode);
    if (out[0] != static_cast<unsigned char>(round) || out[255] != static_cast<unsigned char>(round))
      failures->fetch_add(1);
    cuGraphExecDestroy(e);
    cuGraphDestroy(g);
  }
  cuEventDestroy(fork);
  cuEventDestroy(join);
  cuStreamDestroy(a);
  cuStreamDestroy(b);
  mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  cuThreadExchangeStreamCaptureMode(&mode);
  cuMemFree(buf);
}

TEST(CaptureStress, ConcurrentCapturesAndLaunchesRunEveryNode) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
  std::atomic<int> failures{0};
  g_runs = 0;
  std::vector<std::thread> threads;
  const int n = 8;
  for (int t = 0; t < n; ++t) threads.emplace_back(capture_and_launch, ctx, t, &failures);
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(g_runs.load(), static_cast<long>(n) * 20 * 10 * 2);  // two host nodes per launch
  cuDevicePrimaryCtxRelease(0);
}

}  // namespace
