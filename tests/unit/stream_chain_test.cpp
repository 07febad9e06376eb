// White-box tests of stream links and ownership (core/stream.h): a stream
// granted to the thread that feeds it, taken back by another producer or
// by a follower that gives the stream up, never loses or reorders an op.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "core/context.h"
#include "core/runtime.h"
#include "core/stream.h"
#include "exec/asymmetric_fence.h"
#include "exec/op.h"
#include "exec/spin_lock.h"

namespace cucpu {
namespace {

// Execution log: each op appends its id.
struct Log {
  std::mutex mu;
  std::vector<int> ids;
};

class LogOp final : public Op {
 public:
  LogOp(Log* log, int id) : log_(log), id_(id) {}
  void execute(int) override {
    std::lock_guard<std::mutex> g(log_->mu);
    log_->ids.push_back(id_);
  }

 private:
  Log* log_;
  int id_;
};

class GateOp final : public Op {
 public:
  explicit GateOp(std::atomic<bool>* open) : open_(open) {}
  void execute(int) override {
    while (!open_->load(std::memory_order_acquire)) std::this_thread::yield();
  }

 private:
  std::atomic<bool>* open_;
};

class StreamChain : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = rt().contexts.create(&rt().devices.at(0), 0u, false);
    stream_ = rt().streams.create(ctx_, StreamKind::kRegular, static_cast<unsigned>(CU_STREAM_NON_BLOCKING), 0);
    ctx_->link_stream(stream_);
  }
  void TearDown() override {
    rt().streams.kill(stream_);
    stream_->drop_handle();
    rt().contexts.kill(ctx_);
    rt().contexts.release(ctx_);
  }
  void enqueue_logged(int first, int count) {
    for (int i = first; i < first + count; ++i) stream_->enqueue(new LogOp(&log_, i));
  }
  void expect_in_order(int count) {
    std::lock_guard<std::mutex> g(log_.mu);
    ASSERT_EQ(log_.ids.size(), static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) ASSERT_EQ(log_.ids[i], i) << "op " << i << " ran out of order";
  }
  Context* ctx_ = nullptr;
  Stream* stream_ = nullptr;
  Log log_;
};

// A thread that feeds a stream gets it; another producer takes it back for
// good. Work enqueued by the owner, by the revoker and by the old owner on
// the locked path runs once each, in enqueue order. Held behind a gate, so
// the whole timeline is linked before anything runs.
TEST_F(StreamChain, OwnershipGrantedThenRevokedKeepsOrderBehindAGate) {
  if (!heavy_fence_available()) GTEST_SKIP() << "no membarrier: streams are never granted";
  std::atomic<bool> open{false};
  stream_->enqueue(new GateOp(&open));
  enqueue_logged(0, 100);
  EXPECT_TRUE(stream_->owned_by_caller());
  std::thread other([&] {
    enqueue_logged(100, 100);
    EXPECT_FALSE(stream_->owned_by_caller());
  });
  other.join();
  EXPECT_FALSE(stream_->owned_by_caller());
  enqueue_logged(200, 100);
  EXPECT_FALSE(stream_->owned_by_caller()) << "a stream fed by two threads stays shared";
  open = true;
  stream_->wait_idle();
  expect_in_order(300);
}

// The same hand-overs while a worker runs the ops as they come, so links,
// give-ups and claims race with the enqueues.
TEST_F(StreamChain, OwnershipHandOverWhileRunningKeepsOrder) {
  enqueue_logged(0, 5000);
  std::thread other([&] { enqueue_logged(5000, 5000); });
  other.join();
  enqueue_logged(10000, 5000);
  stream_->wait_idle();
  expect_in_order(15000);
}

// An owner that pauses between enqueues for about as long as a follower
// lingers (a few microseconds): give-ups, claims, and take-backs by
// followers interleave with lock-free enqueues. A lost race leaves an op
// that never runs (wait_idle hangs) or runs twice (the log is too long).
TEST_F(StreamChain, GiveUpsRaceWithOwnerEnqueues) {
  constexpr int kOps = 6000;
  for (int i = 0; i < kOps; ++i) {
    stream_->enqueue(new LogOp(&log_, i));
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds((i * 997) % 9000);
    while (std::chrono::steady_clock::now() < until) cpu_relax();
  }
  stream_->wait_idle();
  expect_in_order(kOps);
}

}  // namespace
}  // namespace cucpu
