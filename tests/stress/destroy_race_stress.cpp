// Stress: several threads destroy the same handle at once. Exactly one
// destroy succeeds; the others get the handle error, and the handle pools
// never hand one object out twice.
#include <gtest/gtest.h>
#include <cuda.h>

#include <atomic>
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
