// Stress: 16 threads x 256 streams, random mixes of host functions, event
// waits, copies and destroys. Every host function must run exactly once, no
// run may deadlock, and a per-stream checksum proves stream order.
#include <gtest/gtest.h>
#include <cuda.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

namespace {

struct Counter {
  std::atomic<int> runs{0};
};

// Each stream's host functions append their index; order is checked later.
struct Chain {
  std::vector<int> seen;  // touched only by the stream's host functions, in order
  int next = 0;
};
struct Step {
  Chain* chain;
  int index;
  Counter* counter;
  static void CUDA_CB run(void* p) {
    auto* s = static_cast<Step*>(p);
    s->chain->seen.push_back(s->index);
    s->counter->runs.fetch_add(1, std::memory_order_relaxed);
  }
};

void worker(CUcontext ctx, int seed, int streams, Counter* counter, std::atomic<int>* enqueued,
            std::atomic<int>* failures) {
  cuCtxSetCurrent(ctx);
  std::mt19937 rng(seed);
  std::vector<CUstream> ss(streams);
  std::vector<Chain> chains(streams);
  std::vector<std::vector<Step>> steps(streams);
  std::vector<CUevent> events(streams);
  CUdeviceptr buf;
  if (cuMemAlloc(&buf, 4096 * streams) != CUDA_SUCCESS) { failures->fetch_add(1); return; }
  for (int i = 0; i < streams; ++i) {
    cuStreamCreate(&ss[i], (rng() & 1) ? CU_STREAM_NON_BLOCKING : 0);
    cuEventCreate(&events[i], CU_EVENT_DISABLE_TIMING);
    steps[i].reserve(64);
  }
  for (int op = 0; op < streams * 8; ++op) {
    int i = static_cast<int>(rng() % streams);
    switch (rng() % 4) {
      case 0:
      case 1: {
        if (steps[i].size() == steps[i].capacity()) break;
        steps[i].push_back({&chains[i], chains[i].next++, counter});
        if (cuLaunchHostFunc(ss[i], Step::run, &steps[i].back()) != CUDA_SUCCESS) failures->fetch_add(1);
        enqueued->fetch_add(1);
        break;
      }
      case 2: {
        int j = static_cast<int>(rng() % streams);
        cuEventRecord(events[j], ss[j]);
        if (cuStreamWaitEvent(ss[i], events[j], 0) != CUDA_SUCCESS) failures->fetch_add(1);
        break;
      }
      default:
        if (cuMemsetD32Async(buf + 4096 * i, static_cast<unsigned>(op), 1024, ss[i]) != CUDA_SUCCESS)
          failures->fetch_add(1);
    }
  }
  // Destroy with work possibly pending; it must still run.
  for (int i = 0; i < streams; ++i) cuStreamDestroy(ss[i]);
  cuCtxSynchronize();
  for (int i = 0; i < streams; ++i) {
    for (size_t k = 0; k < chains[i].seen.size(); ++k)
      if (chains[i].seen[k] != static_cast<int>(k)) failures->fetch_add(1);
    if (static_cast<int>(chains[i].seen.size()) != chains[i].next) failures->fetch_add(1);
    cuEventDestroy(events[i]);
  }
  cuMemFree(buf);
}

TEST(Stress, ManyThreadsManyStreams) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
  Counter counter;
  std::atomic<int> enqueued{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) threads.emplace_back(worker, ctx, t + 1, 256, &counter, &enqueued, &failures);
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(counter.runs.load(), enqueued.load());  // exactly once each
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

}  // namespace
