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
#include "test_ops.h"

namespace cucpu {
namespace {

// Execution log: each op appends its id.
struct Log {
  std::mutex mu;
  std::vector<int> ids;
  size_t size() {
    std::lock_guard<std::mutex> g(mu);
    return ids.size();
  }
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

using test::GateOp;

class StreamChain : public ::testing::Test {
 protected:
  void enqueue_logged(int first, int count) {
    for (int i = first; i < first + count; ++i) stream_->enqueue(new LogOp(&log_, i));
  }
  void expect_in_order(int count) {
    std::lock_guard<std::mutex> g(log_.mu);
    ASSERT_EQ(log_.ids.size(), static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) ASSERT_EQ(log_.ids[i], i) << "op " << i << " ran out of order";
  }
  test::StreamInOwnContext own_{static_cast<unsigned>(CU_STREAM_NON_BLOCKING)};
  Stream* const stream_ = own_.stream;
  Log log_;
};

// A blocking stream (cuStreamCreate's default flags) and its context's
// legacy stream.
class StreamChainLegacy : public ::testing::Test {
 protected:
  test::StreamInOwnContext own_{0u};
  Stream* const blocking = own_.stream;
  Stream* const legacy = own_.ctx->legacy_stream();
};

// A thread that feeds a stream gets it; another producer takes it back for
// good. Work enqueued by the owner, by the revoker and by the old owner on
// the locked path runs once each, in enqueue order. Held behind a gate, so
// the whole timeline is linked before anything runs.
TEST_F(StreamChain, OwnershipGrantedThenRevokedKeepsOrderBehindAGate) {
  if (!wait_for_heavy_fence()) GTEST_SKIP() << "no membarrier: streams are never granted";
  test_support::Gate open;
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
  open.release();
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

// The owner enqueues while the worker that ran its last op lingers and
// then gives the stream up: after every third op the owner waits until
// that op has run (the log says so) before it enqueues the next, so its
// enqueue meets a follower that just finished; the other ops go back to
// back. Give-ups, claims and take-backs interleave with lock-free enqueues.
// What it cannot force: which side of each hand-over wins (6000 of them
// make each likely; the deterministic cases are the tests above). A lost
// op hangs wait_idle; a repeated one makes the log too long.
TEST_F(StreamChain, GiveUpsRaceWithOwnerEnqueues) {
  constexpr int kOps = 6000;
  for (int i = 0; i < kOps; ++i) {
    stream_->enqueue(new LogOp(&log_, i));
    if (i % 3 == 2)
      while (log_.size() <= static_cast<size_t>(i)) cpu_relax();
  }
  stream_->wait_idle();
  expect_in_order(kOps);
}

// When an op ran: its start and its end as steps of one counter that every
// IntervalOp of a test shares. Two ops that overlapped interleave there.
struct Interval {
  uint64_t begin = 0, end = 0;
};

class IntervalOp final : public Op {
 public:
  IntervalOp(std::atomic<uint64_t>* clock, Interval* at) : clock_(clock), at_(at) {}
  void execute(int) override {
    at_->begin = clock_->fetch_add(1);
    at_->end = clock_->fetch_add(1);
  }

 private:
  std::atomic<uint64_t>* clock_;
  Interval* at_;
};

// The legacy stream and a blocking stream are ordered both ways, also while
// one thread owns the blocking stream (lock-free enqueues) and another
// enqueues on the legacy stream meanwhile (each legacy enqueue takes the
// blocking stream back). The owner asks for a legacy op at ten points and
// goes on enqueueing without waiting, so each legacy enqueue races with
// the owner's. Each legacy op must start after every blocking op whose
// enqueue returned before its own began, and end before every blocking op
// enqueued after its own returned; the ops between overlap it in no way;
// and the blocking ops run in their order. The check reads the ops'
// intervals, not the time, so an order that went wrong fails it whenever
// it happens.
TEST_F(StreamChainLegacy, OwnedBlockingStreamStaysOrderedWithLegacyStream) {
  constexpr int kBlockingOps = 4000, kLegacyOps = 10;
  std::atomic<uint64_t> clock{0};
  std::vector<Interval> ran(kBlockingOps), legacy_ran(kLegacyOps);
  // Per legacy op: how many blocking enqueues had returned when its own
  // enqueue began, and when it returned.
  std::vector<int> before(kLegacyOps), after(kLegacyOps);
  std::atomic<int> enqueued{0}, asked{0};
  std::thread legacy_feeder([&] {
    for (int k = 0; k < kLegacyOps; ++k) {
      while (asked.load(std::memory_order_acquire) <= k) std::this_thread::yield();
      before[k] = enqueued.load(std::memory_order_acquire);
      legacy->enqueue(new IntervalOp(&clock, &legacy_ran[k]));
      after[k] = enqueued.load(std::memory_order_acquire);
    }
  });
  for (int i = 0; i < kBlockingOps; ++i) {
    if (i >= 64 && (i - 64) % 400 == 0 && asked.load() < kLegacyOps) asked.fetch_add(1, std::memory_order_release);
    blocking->enqueue(new IntervalOp(&clock, &ran[i]));
    enqueued.store(i + 1, std::memory_order_release);
  }
  legacy_feeder.join();
  blocking->wait_idle();
  legacy->wait_idle();
  for (int i = 0; i + 1 < kBlockingOps; ++i)
    ASSERT_LT(ran[i].end, ran[i + 1].begin) << "blocking ops " << i << " and " << i + 1 << " out of order";
  for (int k = 0; k < kLegacyOps; ++k) {
    const Interval& l = legacy_ran[k];
    for (int i = 0; i < kBlockingOps; ++i) {
      const bool earlier = i < before[k], later = i > after[k];  // op after[k] may still have been enqueueing
      if (earlier) ASSERT_LT(ran[i].end, l.begin) << "legacy op " << k << " started before blocking op " << i;
      else if (later) ASSERT_GT(ran[i].begin, l.end) << "blocking op " << i << " started before legacy op " << k << " ended";
      else ASSERT_TRUE(ran[i].end < l.begin || ran[i].begin > l.end) << "blocking op " << i << " overlapped legacy op " << k;
    }
  }
}

// Sets `ran` when it runs, and `early` when `after` was not yet released
// then (it ran before the op it must follow).
class OrderCheckOp final : public Op {
 public:
  OrderCheckOp(const test_support::Gate* after, std::atomic<bool>* ran, std::atomic<bool>* early)
      : after_(after), ran_(ran), early_(early) {}
  void execute(int) override {
    if (!after_->open.load(std::memory_order_acquire)) early_->store(true);
    ran_->store(true, std::memory_order_release);
  }

 private:
  const test_support::Gate* after_;
  std::atomic<bool>* ran_;
  std::atomic<bool>* early_;
};

// The owner of a blocking stream enqueues behind a legacy op that is still
// pending. The legacy enqueue must take the stream back, so the owner's
// next op waits for the legacy op; linked lock-free, it would be ready as
// soon as the stream's earlier ops are done, while the legacy op is held.
// The op checks its order itself. What the test cannot force: that a
// worker takes a wrongly ready op before the legacy op is released; it
// waits until the earlier ops have run, which gives a worker that chance.
TEST_F(StreamChainLegacy, LegacyEnqueueTakesBlockingStreamBack) {
  if (!wait_for_heavy_fence()) GTEST_SKIP() << "no membarrier: streams are never granted";
  test_support::Gate stream_gate, legacy_gate;
  std::atomic<bool> after_ran{false}, early{false};
  blocking->enqueue(new GateOp(&stream_gate));
  Log log;
  for (int i = 0; i < 100; ++i) blocking->enqueue(new LogOp(&log, i));
  ASSERT_TRUE(blocking->owned_by_caller());
  legacy->enqueue(new GateOp(&legacy_gate));
  EXPECT_FALSE(blocking->owned_by_caller()) << "the legacy enqueue took the stream back";
  blocking->enqueue(new OrderCheckOp(&legacy_gate, &after_ran, &early));
  stream_gate.release();
  legacy_gate.await_entered();
  while (log.size() < 100) std::this_thread::yield();  // the blocking stream's earlier ops have run
  legacy_gate.release();
  blocking->wait_idle();
  legacy->wait_idle();
  EXPECT_TRUE(after_ran.load());
  EXPECT_FALSE(early.load()) << "the blocking stream's later op ran before the legacy op finished";
}

}  // namespace
}  // namespace cucpu
