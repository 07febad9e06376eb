// White-box tests of the scheduler's wake-up bookkeeping (exec/scheduler.h):
// whatever runs on the workers, once every worker sleeps none is counted as
// searching, so the next push wakes one.
#include <gtest/gtest.h>
#include <cuda.h>

#include <atomic>
#include <thread>

#include "exec/scheduler.h"
#include "test_ops.h"

namespace cucpu {
namespace {

// Linked with the library's objects, which see every entry point under its
// versioned name: the _v2/_v4 names are the current ABI.
class SchedulerWakeups : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxCreate_v4(&ctx_, nullptr, 0, 0), CUDA_SUCCESS);
  }
  void TearDown() override { cuCtxDestroy_v2(ctx_); }
  // Waits until every worker sleeps (workers go to sleep on their own once
  // their spin ends: no ordering is assumed, only the state is polled).
  static Scheduler::IdleState all_asleep() {
    Scheduler& s = Scheduler::instance();
    for (;;) {
      Scheduler::IdleState st = s.idle_state();
      if (st.sleepers == static_cast<int>(s.worker_count())) return st;
      std::this_thread::yield();
    }
  }
  CUcontext ctx_ = nullptr;
};

struct Counter {
  std::atomic<int> n{0};
  static void CUDA_CB run(void* p) { static_cast<Counter*>(p)->n.fetch_add(1); }
};

// A bookkeeping op that counts its runs.
class CountingTrivialOp final : public Op {
 public:
  explicit CountingTrivialOp(std::atomic<int>* runs) : runs_(runs) {}
  void execute(int) override { runs_->fetch_add(1); }
  bool trivial() const override { return true; }

 private:
  std::atomic<int>* runs_;
};

// An op whose work submits a ready bookkeeping op, as an API call made from
// a host function may (a cuEventRecord on the legacy stream, a
// cuStreamWaitEvent whose event completes while the wait is being linked).
class SubmitsTrivialOp final : public Op {
 public:
  SubmitsTrivialOp(Stream* s, std::atomic<int>* runs) : s_(s), runs_(runs) {}
  void execute(int) override {
    auto* t = new CountingTrivialOp(runs_);
    t->timeline = s_;  // seq 0: no place in the timeline
    Scheduler::instance().submit(t);
  }

 private:
  Stream* s_;
  std::atomic<int>* runs_;
};

// A ready bookkeeping op submitted from inside a running op once left the
// worker counted as searching for good: pushes then never woke a sleeper,
// and the next synchronous call hung (the fuzzing campaign's hang).
TEST_F(SchedulerWakeups, OpSubmittedFromARunningOpLeavesNoSearcherBehind) {
  test::StreamInOwnContext own(CU_STREAM_NON_BLOCKING);
  std::atomic<int> runs{0};
  for (int i = 0; i < 8; ++i) own.stream->enqueue(new SubmitsTrivialOp(own.stream, &runs));
  own.stream->wait_idle();
  EXPECT_EQ(runs.load(), 8);
  ASSERT_EQ(all_asleep().searching, 0);
  // And the next op runs (a lost wake-up would leave this wait hanging).
  test_support::Gate open;
  open.release();  // the op runs through at once
  own.stream->enqueue(new test::GateOp(&open));
  own.stream->wait_idle();
}

struct WaitFromHostFn {
  CUstream other;
  CUevent done_event;
  CUresult result = CUDA_ERROR_UNKNOWN;
  static void CUDA_CB run(void* p) {
    auto* w = static_cast<WaitFromHostFn*>(p);
    w->result = cuStreamWaitEvent(w->other, w->done_event, 0);
  }
};

// A host function that enqueues a host function: the inner one runs
// exactly once, later, and the outer one stays "inside a host function".
struct NestedHostFn {
  CUstream other;
  Counter* inner;
  CUresult enqueue_result = CUDA_ERROR_UNKNOWN;
  CUresult after_result = CUDA_SUCCESS;
  static void CUDA_CB run(void* p) {
    auto* n = static_cast<NestedHostFn*>(p);
    n->enqueue_result = cuLaunchHostFunc(n->other, Counter::run, n->inner);
    n->after_result = cuStreamSynchronize(n->other);  // refused in here
  }
};

TEST_F(SchedulerWakeups, StreamWaitAndNestedHostFunctionsLeaveNoSearcherBehind) {
  CUstream a, b;
  CUevent ev;
  ASSERT_EQ(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(cuEventRecord(ev, b), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(b), CUDA_SUCCESS);
  Counter inner;
  for (int round = 0; round < 8; ++round) {
    WaitFromHostFn w{b, ev};
    NestedHostFn n{b, &inner};
    ASSERT_EQ(cuLaunchHostFunc(a, WaitFromHostFn::run, &w), CUDA_SUCCESS);
    ASSERT_EQ(cuLaunchHostFunc(a, NestedHostFn::run, &n), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(a), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamSynchronize(b), CUDA_SUCCESS);
    EXPECT_EQ(w.result, CUDA_SUCCESS);
    EXPECT_EQ(n.enqueue_result, CUDA_SUCCESS);
    EXPECT_EQ(n.after_result, CUDA_ERROR_NOT_PERMITTED);
  }
  EXPECT_EQ(inner.n.load(), 8);
  ASSERT_EQ(all_asleep().searching, 0);
  EXPECT_EQ(cuEventDestroy_v2(ev), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(a), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy_v2(b), CUDA_SUCCESS);
}

}  // namespace
}  // namespace cucpu
