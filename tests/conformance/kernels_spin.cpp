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

CONF_TEST(KernelSpinChainBetweenBlocksRunsInReverse) {
  kt::for_each_variant("spin", [&](kt::Module& m) {
   for (int blocks : {8, 96}) {  // one op's blocks, then a launch the workers share
    kt::Buf<int32_t> flags(blocks), order(blocks + 1);
    kt::run(m.fn("spin_chain_between_blocks"), {blocks}, {blocks > 8 ? 256 : 64}, 0, flags.p, order.p);
    std::vector<int32_t> want(blocks + 1);
    for (int b = 0; b < blocks; ++b) want[b] = blocks - 1 - b;
    want[blocks] = blocks;
    kt::Checker ck("spin_chain_between_blocks");
    ck.all(order.get(), want, "finishing places");
    ck.done();
   }
  });
}

CONF_TEST(KernelSoftwareGridBarrierInAnOrdinaryLaunch) {
  kt::for_each_variant("spin", [&](kt::Module& m) {
    for (int blocks : {16, 64}) {  // one op's blocks, then a launch the workers share
      kt::Buf<int32_t> sum(1), arrived(1), out(blocks);
      kt::run(m.fn("software_grid_barrier"), {blocks}, {blocks > 16 ? 256 : 32}, 0, sum.p, arrived.p, out.p);
      kt::Checker ck("software_grid_barrier");
      ck.all(out.get(), std::vector<int32_t>(blocks, blocks * (blocks - 1) / 2), "totals seen after the barrier");
      ck.done();
    }
  });
}
