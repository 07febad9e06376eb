// Spin-waits between the threads of a block (tests/kernels/spin.cu): with
// independent thread scheduling a waiting thread never keeps the thread it
// waits for from running, so each of these kernels finishes.
#include "kernels_util.h"

CONF_TEST(KernelSpinOnASharedFlagSeesTheStore) {
  kt::for_each_variant("spin", [&](kt::Module& m) {
    for (int setter : {1, 33, 255}) {  // a lane of the waiter's warp, another warp, the last warp
      kt::Buf<int> out(2);
      kt::run(m.fn("spin_on_shared_flag"), {1}, {256}, 0, out.p, setter);
      const std::vector<int> h = out.get();
      if (h[0] != 7 || h[1] != 256)
        throw conf::Failure{"setter " + std::to_string(setter) + ": saw " + std::to_string(h[0]) + ", " +
                            std::to_string(h[1]) + " threads passed"};
    }
  });
}

CONF_TEST(KernelSpinChainBetweenWarpsRunsInReverse) {
  kt::for_each_variant("spin", [&](kt::Module& m) {
    const int warps = 8;
    kt::Buf<int> tokens(warps), order(warps + 1);
    kt::run(m.fn("spin_chain_between_warps"), {1}, {warps * 32}, 0, tokens.p, order.p);
    const std::vector<int> t = tokens.get(), o = order.get();
    for (int w = 0; w < warps; ++w) {
      EXPECT_TRUE(t[w] == w + 1);
      EXPECT_TRUE(o[w] == warps - 1 - w);  // the last warp first
    }
    EXPECT_TRUE(o[warps] == warps);
  });
}

CONF_TEST(KernelSpinLockHolderLetsTheOthersRun) {
  kt::for_each_variant("spin", [&](kt::Module& m) {
    for (int threads : {2, 64}) {
      kt::Buf<int> lock(1), counter(1), flag(1);
      kt::run(m.fn("spin_lock_counter"), {1}, {threads}, 0, lock.p, counter.p, flag.p);
      EXPECT_TRUE(counter.get()[0] == threads);
      EXPECT_TRUE(lock.get()[0] == 0);
    }
  });
}
