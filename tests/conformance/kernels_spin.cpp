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

// Each block waits for the one before it and reads what all 32 of its
// lanes stored before lane 0 raised the flag (tests/kernels/spin.cu).
CONF_TEST(KernelSpinLanesPublishBeforeLaneZeroFlags) {
  const int blocks = 48;
  auto mix = [](uint32_t v, uint32_t b, uint32_t l) {
    for (int i = 0; i < 2000; ++i) v = v * 1664525u + 1013904223u + b * 31u + l;
    return v;
  };
  std::vector<uint32_t> want(blocks * 32);
  for (int b = 0; b < blocks; ++b)
    for (int l = 0; l < 32; ++l) want[b * 32 + l] = mix(b ? want[(b - 1) * 32 + (31 - l)] : 7u, b, l);
  kt::for_each_variant("spin", [&](kt::Module& m) {
    for (int round = 0; round < 4; ++round) {
      kt::Buf<uint32_t> data(blocks * 32);
      kt::Buf<int32_t> flags(blocks);
      kt::run(m.fn("lanes_publish_then_lane0_flags"), {blocks}, {32}, 0, data.p, flags.p);
      kt::Checker ck("lanes_publish_then_lane0_flags");
      ck.all(data.get(), want);
      ck.done();
    }
  });
}
