// Wake-ups under races: a ready op must get an idle worker even when the
// worker that could have taken it goes on with a long op of its own chain.
#include <gtest/gtest.h>
#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "../common/gate.h"

namespace {

using test_support::Gate;

void CUDA_CB noop(void*) {}

// Makes device 0's primary context current (released by each test).
void use_primary_context() {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUdevice dev;
  CUcontext ctx;
  ASSERT_EQ(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
}

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
  ASSERT_NO_FATAL_FAILURE(use_primary_context());
  CUstream a, b;
  ASSERT_EQ(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  constexpr int kRounds = 20000;
  for (int round = 0; round < kRounds; ++round) {
    Gate flag;
    ASSERT_EQ(cuLaunchHostFunc(a, noop, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuLaunchHostFunc(a, Gate::hold, &flag), CUDA_SUCCESS);
    ASSERT_EQ(cuLaunchHostFunc(b, Gate::release_fn, &flag), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(a), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(b), CUDA_SUCCESS);
  }
  EXPECT_EQ(cuStreamDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(b), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

// Pairs of streams take turns through one word each: in round k, stream A
// waits for 2k and writes 2k+1, stream B waits for 2k+1 and writes 2k+2.
// Every round's work is enqueued up front, so nearly every wait parks with
// the value watcher and is completed from there; any lost or reordered
// completion leaves a pair stuck (the test times out) or a wrong final
// value. Waits never hold a worker, so this passes with one worker too.
TEST(WakeupStress, MemoryWaitHandshakesBetweenStreams) {
  ASSERT_NO_FATAL_FAILURE(use_primary_context());
  constexpr int kPairs = 8, kRounds = 200;
  CUdeviceptr words;
  ASSERT_EQ(cuMemAlloc(&words, kPairs * sizeof(uint32_t)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32(words, 0, kPairs), CUDA_SUCCESS);
  std::vector<CUstream> a(kPairs), b(kPairs);
  for (int p = 0; p < kPairs; ++p) {
    ASSERT_EQ(cuStreamCreate(&a[p], CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&b[p], CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  for (int k = 0; k < kRounds; ++k) {
    for (int p = 0; p < kPairs; ++p) {
      const CUdeviceptr w = words + p * sizeof(uint32_t);
      ASSERT_EQ(cuStreamWaitValue32(a[p], w, 2 * k, CU_STREAM_WAIT_VALUE_GEQ), CUDA_SUCCESS);
      ASSERT_EQ(cuStreamWriteValue32(a[p], w, 2 * k + 1, 0), CUDA_SUCCESS);
      ASSERT_EQ(cuStreamWaitValue32(b[p], w, 2 * k + 1, CU_STREAM_WAIT_VALUE_GEQ), CUDA_SUCCESS);
      ASSERT_EQ(cuStreamWriteValue32(b[p], w, 2 * k + 2, 0), CUDA_SUCCESS);
    }
  }
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  std::vector<uint32_t> final_values(kPairs);
  ASSERT_EQ(cuMemcpyDtoH(final_values.data(), words, kPairs * sizeof(uint32_t)), CUDA_SUCCESS);
  for (uint32_t v : final_values) EXPECT_EQ(v, 2u * kRounds);
  for (int p = 0; p < kPairs; ++p) {
    EXPECT_EQ(cuStreamDestroy(a[p]), CUDA_SUCCESS);
    EXPECT_EQ(cuStreamDestroy(b[p]), CUDA_SUCCESS);
  }
  EXPECT_EQ(cuMemFree(words), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

}  // namespace

namespace {

// One host function of the turn-taking test: checks that it runs right
// after the previous op its thread enqueued on the same stream.
struct TurnStep {
  std::atomic<int>* last;  // the thread's last index run on this stream
  int index;
  static void CUDA_CB run(void* p) {
    auto* step = static_cast<TurnStep*>(p);
    if (step->last->load(std::memory_order_relaxed) == step->index - 1)
      step->last->store(step->index, std::memory_order_relaxed);
    else
      step->last->store(-1000000, std::memory_order_relaxed);  // out of order: poisons the count
  }
};

}  // namespace

// Threads take turns feeding one stream in bursts long enough for the
// first to be granted the stream (lock-free enqueues) and for the next to
// take it back while the first one's ops still run; each round uses a new
// stream and destroys it with work pending. Every thread's ops must run
// once each, in that thread's order.
TEST(WakeupStress, ThreadsTakeTurnsFeedingOneStream) {
  ASSERT_NO_FATAL_FAILURE(use_primary_context());
  CUcontext ctx;
  ASSERT_EQ(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
  constexpr int kThreads = 4, kRounds = 100, kBurst = 48, kBursts = 3;
  for (int round = 0; round < kRounds; ++round) {
    CUstream s;
    ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    std::atomic<int> last[kThreads];
    std::vector<TurnStep> steps(kThreads * kBurst * kBursts);
    std::atomic<int> turn{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      last[t] = -1;
      threads.emplace_back([&, t] {
        cuCtxSetCurrent(ctx);
        for (int b = 0; b < kBursts; ++b) {
          while (turn.load(std::memory_order_acquire) % kThreads != t) std::this_thread::yield();
          for (int i = 0; i < kBurst; ++i) {
            const int index = b * kBurst + i;
            TurnStep& step = steps[(t * kBursts * kBurst) + index];
            step = TurnStep{&last[t], index};
            if (cuLaunchHostFunc(s, TurnStep::run, &step) != CUDA_SUCCESS) std::abort();
          }
          turn.fetch_add(1, std::memory_order_acq_rel);
        }
      });
    }
    for (auto& th : threads) th.join();
    ASSERT_EQ(cuStreamDestroy(s), CUDA_SUCCESS);  // work still pending: it runs anyway
    ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
    for (int t = 0; t < kThreads; ++t) ASSERT_EQ(last[t].load(), kBurst * kBursts - 1) << "round " << round;
  }
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}
