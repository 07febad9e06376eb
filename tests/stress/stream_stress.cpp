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

TEST(Stress, ManyThreadsOnManyStreamsRunEachOpOnceInOrder) {
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

// Dependent copies in one batch are undefined on the driver; cucpu runs
// such a batch in list order, so a chain a -> b -> c ends with c == a.
TEST(Batch, DependentBatchRunsInListOrder) {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  const size_t n = size_t{4} << 20;  // large enough that independent copies would be split
  CUdeviceptr a, b, c;
  ASSERT_EQ(cuMemAlloc(&a, n), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&b, n), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&c, n), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(a, 0x11, n), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(b, 0x22, n), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(c, 0x33, n), CUDA_SUCCESS);
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUDA_MEMCPY3D_BATCH_OP ops[2] = {};
  for (auto& op : ops) {
    op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.extent = {n, 1, 1};
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  }
  ops[0].src.op.ptr.ptr = a;
  ops[0].dst.op.ptr.ptr = b;
  ops[1].src.op.ptr.ptr = b;
  ops[1].dst.op.ptr.ptr = c;
  ASSERT_EQ(cuMemcpy3DBatchAsync(2, ops, 0, s), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
  std::vector<unsigned char> out(n);
  ASSERT_EQ(cuMemcpyDtoH(out.data(), c, n), CUDA_SUCCESS);
  EXPECT_EQ(out.front(), 0x11);
  EXPECT_EQ(out.back(), 0x11);
  cuStreamDestroy(s);
  cuMemFree(a);
  cuMemFree(b);
  cuMemFree(c);
  cuDevicePrimaryCtxRelease(0);
}


}  // namespace
