// Green contexts' partitions of the engine (exec/partition.h): the SM to
// worker mapping, and where each kind of work runs.
#include <gtest/gtest.h>
#include <cuda.h>

#include <atomic>

#include "core/stream.h"
#include "exec/partition.h"
#include "exec/scheduler.h"
#include "test_ops.h"

namespace cucpu {
namespace {

TEST(Partition, EverySmFallsToOneWorkerInOrder) {
  for (size_t workers : {1u, 2u, 16u, 256u}) {
    for (size_t sms : {workers, size_t{132}, size_t{1}}) {
      size_t last = 0;
      std::vector<bool> used(workers, false);
      for (size_t i = 0; i < sms; ++i) {
        const size_t w = worker_of_sm(i, sms, workers);
        ASSERT_LT(w, workers);
        ASSERT_GE(w, last);  // runs of SMs, in order
        last = w;
        used[w] = true;
      }
      if (sms >= workers)
        for (size_t w = 0; w < workers; ++w) EXPECT_TRUE(used[w]) << w << " of " << workers << ", " << sms << " SMs";
    }
  }
  // One SM a worker: the identity.
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(worker_of_sm(i, 16, 16), i);
}

// An op that notes the pool it ran on, and may hold its worker.
class PoolProbe final : public Op {
 public:
  PoolProbe(bool kernel, test_support::Gate* gate = nullptr) : gate_(gate) {
    if (kernel) run_on_sms();
  }
  void execute(int) override {
    ran_on.store(Scheduler::current_pool(), std::memory_order_release);
    if (gate_) test_support::Gate::hold(gate_);
  }
  std::atomic<Scheduler*> ran_on{nullptr};

 private:
  test_support::Gate* gate_;
};

// A green context of `count` SMs starting at SM `first` (of the device's).
struct GreenOf {
  CUgreenCtx g = nullptr;
  CUstream s = nullptr;
  GreenOf(unsigned index) {
    CUdevResource dev{}, groups[kMaxWorkers];
    unsigned n = kMaxWorkers;
    EXPECT_EQ(cuDeviceGetDevResource(0, &dev, CU_DEV_RESOURCE_TYPE_SM), CUDA_SUCCESS);
    EXPECT_EQ(cuDevSmResourceSplitByCount(groups, &n, &dev, nullptr, 0, 1), CUDA_SUCCESS);
    CUdevResourceDesc d = nullptr;
    EXPECT_EQ(cuDevResourceGenerateDesc(&d, &groups[index], 1), CUDA_SUCCESS);
    EXPECT_EQ(cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM), CUDA_SUCCESS);
    EXPECT_EQ(cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
  }
  ~GreenOf() {
    cuStreamDestroy_v2(s);
    cuGreenCtxDestroy(g);
  }
  Stream* stream() const { return reinterpret_cast<Stream*>(s); }
};

class Partitions : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(cuInit(0), CUDA_SUCCESS); }
};

TEST_F(Partitions, KernelWorkRunsOnItsPartitionAndOtherWorkOnTheSharedPool) {
  GreenOf a(0);
  Scheduler* pool = a.stream()->pool;
  ASSERT_NE(pool, &Scheduler::instance());
  EXPECT_EQ(pool->worker_count(), 1u);  // one SM: one worker
  auto* kernel = new PoolProbe(true);
  auto* copy = new PoolProbe(false);
  kernel->retain();
  copy->retain();
  a.stream()->enqueue(kernel);
  a.stream()->enqueue(copy);
  a.stream()->wait_idle();
  EXPECT_EQ(kernel->ran_on.load(), pool);
  EXPECT_EQ(copy->ran_on.load(), &Scheduler::instance());
  kernel->release();
  copy->release();
}

TEST_F(Partitions, DisjointPartitionsDoNotWaitForEachOther) {
  GreenOf a(0), b(1);
  ASSERT_NE(a.stream()->pool, b.stream()->pool);
  // A's only worker is held by a kernel; B's kernel still runs, and so does
  // other work of A's (copies run on the shared pool).
  test_support::Gate gate;
  a.stream()->enqueue(new PoolProbe(true, &gate));
  gate.await_entered();
  auto* other = new PoolProbe(true);
  other->retain();
  b.stream()->enqueue(other);
  b.stream()->wait_idle();
  EXPECT_EQ(other->ran_on.load(), b.stream()->pool);
  CUstream a2 = nullptr;
  ASSERT_EQ(cuGreenCtxStreamCreate(&a2, a.g, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
  auto* queued = new PoolProbe(true);
  queued->retain();
  reinterpret_cast<Stream*>(a2)->enqueue(queued);
  EXPECT_EQ(queued->ran_on.load(), nullptr);  // A's worker is busy: it waits (never runs elsewhere)
  gate.release();
  reinterpret_cast<Stream*>(a2)->wait_idle();
  EXPECT_EQ(queued->ran_on.load(), a.stream()->pool);
  a.stream()->wait_idle();
  other->release();
  queued->release();
  cuStreamDestroy_v2(a2);
}

TEST_F(Partitions, GreenContextsOfOneSetShareAPool) {
  GreenOf a(0), again(0);
  EXPECT_EQ(a.stream()->pool, again.stream()->pool);
}

}  // namespace
}  // namespace cucpu
