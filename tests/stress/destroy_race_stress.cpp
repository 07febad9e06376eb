// Stress: several threads destroy the same handle at once. Exactly one
// destroy succeeds; the others get the handle error, and the handle pools
// never hand one object out twice.
#include <gtest/gtest.h>
#include <cuda.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

// Runs `destroy` from `threads` threads released together; returns how many
// succeeded.
template <class F>
int race(int threads, F destroy) {
  std::atomic<int> ready{0}, ok{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      if (destroy() == CUDA_SUCCESS) ok.fetch_add(1);
    });
  while (ready.load() != threads) std::this_thread::yield();
  go.store(true);
  for (auto& t : ts) t.join();
  return ok.load();
}

TEST(DestroyRace, ExactlyOneDestroyOfAHandleSucceeds) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUdevice dev;
  ASSERT_EQ(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  for (int round = 0; round < 200; ++round) {
    CUstream s;
    CUevent e;
    CUgraph g;
    CUgraphExec x;
    ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(cuEventCreate(&e, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphCreate(&g, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphInstantiate(&x, g, 0), CUDA_SUCCESS);
    ASSERT_EQ(race(4, [&] { return cuStreamDestroy(s); }), 1);
    ASSERT_EQ(race(4, [&] { return cuEventDestroy(e); }), 1);
    ASSERT_EQ(race(4, [&] { return cuGraphExecDestroy(x); }), 1);
    ASSERT_EQ(race(4, [&] { return cuGraphDestroy(g); }), 1);
    CUcontext c;
    ASSERT_EQ(cuCtxCreate(&c, nullptr, 0, dev), CUDA_SUCCESS);
    ASSERT_EQ(race(4, [&] { return cuCtxDestroy(c); }), 1);
    ASSERT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  }
  // Two live streams are never one handle.
  CUstream a, b;
  ASSERT_EQ(cuStreamCreate(&a, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreate(&b, 0), CUDA_SUCCESS);
  EXPECT_NE(a, b);
  EXPECT_EQ(cuStreamDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(b), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
}

}  // namespace

namespace {

// A read on stream b and a stream-ordered free of its memory on stream a,
// with nothing ordering the two: a program bug (cucpu check reports it).
// The free lands while the copy runs; the copy must fault the context
// (CUDA_ERROR_ILLEGAL_ADDRESS, as a GPU's access to unmapped memory does)
// or finish, and never take the process down.
TEST(FreeRace, AFreeUnderARunningCopyFaultsTheContextNotTheProcess) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  constexpr size_t kBytes = size_t{32} << 20;
  int faulted = 0;
  for (int round = 0; round < 8; ++round) {
    CUcontext ctx;
    ASSERT_EQ(cuCtxCreate(&ctx, nullptr, 0, 0), CUDA_SUCCESS);
    CUstream a, b;
    ASSERT_EQ(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    CUdeviceptr src, dst;
    ASSERT_EQ(cuMemAllocAsync(&src, kBytes, a), CUDA_SUCCESS);
    ASSERT_EQ(cuMemAlloc(&dst, kBytes), CUDA_SUCCESS);
    ASSERT_EQ(cuMemsetD8Async(src, 1, kBytes, a), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(a), CUDA_SUCCESS);
    std::atomic<bool> copy_next{false};
    ASSERT_EQ(cuLaunchHostFunc(b, [](void* f) { static_cast<std::atomic<bool>*>(f)->store(true); }, &copy_next),
              CUDA_SUCCESS);
    ASSERT_EQ(cuMemcpyDtoDAsync(dst, src, kBytes, b), CUDA_SUCCESS);
    while (!copy_next.load()) std::this_thread::yield();
    ASSERT_EQ(cuMemFreeAsync(src, a), CUDA_SUCCESS);  // unordered with the copy
    const CUresult r = cuCtxSynchronize();
    ASSERT_TRUE(r == CUDA_SUCCESS || r == CUDA_ERROR_ILLEGAL_ADDRESS) << r;
    faulted += r == CUDA_ERROR_ILLEGAL_ADDRESS;
    ASSERT_EQ(cuCtxDestroy(ctx), CUDA_SUCCESS);
  }
  std::printf("%d of 8 copies faulted\n", faulted);
}

}  // namespace
