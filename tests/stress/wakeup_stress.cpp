// Wake-ups under races: a ready op must get an idle worker even when the
// worker that could have taken it goes on with a long op of its own chain.
#include <gtest/gtest.h>
#include <cuda.h>

#include <atomic>
#include <cstdlib>
#include <thread>

namespace {

struct Flag {
  std::atomic<bool> set{false};
  static void CUDA_CB raise(void* p) { static_cast<Flag*>(p)->set.store(true, std::memory_order_release); }
  static void CUDA_CB await(void* p) {
    while (!static_cast<Flag*>(p)->set.load(std::memory_order_acquire)) std::this_thread::yield();
  }
};

void CUDA_CB noop(void*) {}

// Each round: stream A runs a no-op, then a host function that waits for a
// flag; stream B, enqueued just after, raises it. The worker finishing A's
// no-op goes straight on to A's waiting function, so B's function has to
// get another worker. If that worker is not woken, the round never ends and
// the test times out. (NVIDIA's driver runs host functions on one thread
// and would never finish even one round: this is cucpu's own guarantee, that
// ready work never waits behind unrelated work while a worker is idle.)
TEST(WakeupStress, ReadyWorkGetsAnIdleWorkerWhileAnotherChainRuns) {
  const char* w = std::getenv("CUCPU_WORKERS");
  if (w && std::atoi(w) < 2) GTEST_SKIP() << "needs two workers";
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUdevice dev;
  CUcontext ctx;
  ASSERT_EQ(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  CUstream a, b;
  ASSERT_EQ(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  constexpr int kRounds = 20000;
  for (int round = 0; round < kRounds; ++round) {
    Flag flag;
    ASSERT_EQ(cuLaunchHostFunc(a, noop, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuLaunchHostFunc(a, Flag::await, &flag), CUDA_SUCCESS);
    ASSERT_EQ(cuLaunchHostFunc(b, Flag::raise, &flag), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(a), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(b), CUDA_SUCCESS);
  }
  EXPECT_EQ(cuStreamDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(b), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
}

}  // namespace
