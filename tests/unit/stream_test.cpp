// White-box tests of Stream's completion protocols: waiters sleeping for
// different sequence numbers, and a dropped handle outliving its work.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/context.h"
#include "core/runtime.h"
#include "core/stream.h"
#include "exec/op.h"
#include "test_ops.h"

namespace cucpu {
namespace {

using test::GateOp;

class StreamProtocol : public ::testing::Test {
 protected:
  test::StreamInOwnContext own_{static_cast<unsigned>(CU_STREAM_NON_BLOCKING)};
  Context* const ctx_ = own_.ctx;
  Stream*& stream_ = own_.stream;  // a test that drops the handle itself clears it
};

// Two threads sleep for seq 1 and seq 2. Completing seq 1 must wake the
// first (a lost wake-up hangs here) while the second keeps waiting; seq 2
// then wakes the second.
TEST_F(StreamProtocol, EachWaiterWakesAtItsOwnTarget) {
  test_support::Gate first, second;
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
  first.release();
  early.join();
  EXPECT_TRUE(early_done.load());
  EXPECT_FALSE(late_done.load());  // seq 2 is still held by its gate
  EXPECT_EQ(stream_->completed.load(), 1u);
  second.release();
  late.join();
  EXPECT_TRUE(late_done.load());
  EXPECT_TRUE(stream_->idle());
}

// Dropping the handle while work is pending keeps the stream alive and in
// its context until the last op is done. Releasing it then is checked by
// TearDown: destroying the context waits until its streams are released
// (a stream whose handle reference leaked would hang there).
TEST_F(StreamProtocol, DroppedHandleLivesUntilLastOpIsDone) {
  test_support::Gate open;
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
  open.release();
  EXPECT_EQ(ctx_->synchronize(), CUDA_SUCCESS);
  EXPECT_EQ(runs.load(), 1);
}

}  // namespace
}  // namespace cucpu
