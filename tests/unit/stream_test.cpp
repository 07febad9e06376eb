// White-box tests of Stream's completion protocols: waiters sleeping for
// different sequence numbers, and a dropped handle outliving its work.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/context.h"
#include "core/runtime.h"
#include "core/stream.h"
#include "exec/op.h"

namespace cucpu {
namespace {

// An op that runs on a worker and holds it until opened.
class GateOp final : public Op {
 public:
  explicit GateOp(std::atomic<bool>* open) : open_(open) {}
  void execute(int) override {
    while (!open_->load(std::memory_order_acquire)) std::this_thread::yield();
  }

 private:
  std::atomic<bool>* open_;
};

class StreamProtocol : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = rt().contexts.create(&rt().devices.at(0), 0u, false);
    stream_ = rt().streams.create(ctx_, StreamKind::kRegular, static_cast<unsigned>(CU_STREAM_NON_BLOCKING), 0);
    ctx_->link_stream(stream_);
  }
  void TearDown() override {
    if (stream_) {
      rt().streams.kill(stream_);
      stream_->drop_handle();
    }
    rt().contexts.kill(ctx_);
    rt().contexts.release(ctx_);
  }
  Context* ctx_ = nullptr;
  Stream* stream_ = nullptr;
};

// Two threads sleep for seq 1 and seq 2. Completing seq 1 must wake the
// first (a lost wake-up hangs here) while the second keeps waiting; seq 2
// then wakes the second.
TEST_F(StreamProtocol, EachWaiterWakesAtItsOwnTarget) {
  std::atomic<bool> first{false}, second{false};
  stream_->enqueue(new GateOp(&first));
  stream_->enqueue(new GateOp(&second));
  std::atomic<bool> early_done{false}, late_done{false};
  std::thread late([&] {
    stream_->wait_for(2);
    late_done = true;
  });
  std::thread early([&] {
    stream_->wait_for(1);
    early_done = true;
  });
  first.store(true, std::memory_order_release);
  early.join();
  EXPECT_TRUE(early_done.load());
  EXPECT_FALSE(late_done.load());  // seq 2 is still held by its gate
  EXPECT_EQ(stream_->completed.load(), 1u);
  second.store(true, std::memory_order_release);
  late.join();
  EXPECT_TRUE(late_done.load());
  EXPECT_TRUE(stream_->idle());
}

// Dropping the handle while work is pending keeps the stream alive and in
// its context until the last op is done. Releasing it then is checked by
// TearDown: destroying the context waits until its streams are released
// (a stream whose handle reference leaked would hang there).
TEST_F(StreamProtocol, DroppedHandleLivesUntilLastOpIsDone) {
  std::atomic<bool> open{false};
  std::atomic<int> runs{0};
  class CountOp final : public Op {
   public:
    explicit CountOp(std::atomic<int>* n) : n_(n) {}
    void execute(int) override { n_->fetch_add(1); }

   private:
    std::atomic<int>* n_;
  };
  Stream* s = stream_;
  s->enqueue(new GateOp(&open));
  s->enqueue(new CountOp(&runs));
  rt().streams.kill(s);
  s->drop_handle();
  stream_ = nullptr;
  int linked = 0;
  ctx_->for_each_stream([&](Stream* x) { linked += x == s; });
  EXPECT_EQ(linked, 1);  // not released: its work is pending
  EXPECT_EQ(s->completed.load(), 0u);
  open.store(true, std::memory_order_release);
  EXPECT_EQ(ctx_->synchronize(), CUDA_SUCCESS);
  EXPECT_EQ(runs.load(), 1);
}

}  // namespace
}  // namespace cucpu
