// Barriers and warp collectives inside functions a kernel calls
// (tests/kernels/calls.cu, __noinline__ so that the PTX keeps the calls).
#include "kernels_util.h"

CONF_TEST(KernelCallsBarriersAndShufflesInsideCalledFunctions) {
  kt::for_each_variant("calls", [&](kt::Module& m) {
    for (int threads : {32, 96, 256}) {
      kt::Buf<int> out(static_cast<size_t>(threads));
      kt::run(m.fn("call_exchange_and_warp_sum"), {1}, {threads}, 0, out.p);
      std::vector<int> want(static_cast<size_t>(threads));
      for (int t = 0; t < threads; ++t) {
        int w = ((t + 1) % threads) * 3;
        if (t % 32 == 0)
          for (int l = 0; l < 32; ++l) w += t + l;
        want[static_cast<size_t>(t)] = w;
      }
      kt::Checker ck("call_exchange_and_warp_sum " + std::to_string(threads) + " threads");
      ck.all(out.get(), want);
      ck.done();
    }
  });
}

CONF_TEST(KernelCallsAFunctionCallingOneWithBarriers) {
  kt::for_each_variant("calls", [&](kt::Module& m) {
    const int threads = 128;
    kt::Buf<int> out(threads);
    kt::run(m.fn("call_nested_exchanges"), {1}, {threads}, 0, out.p);
    std::vector<int> want(threads);
    auto local = [](int t, int i) { return t * 5 + 1 + i; };
    for (int t = 0; t < threads; ++t) {
      // The first exchange gives each thread its next one's value; the
      // second, twice what the next thread got from the first.
      const int n2 = (t + 2) % threads;
      want[static_cast<size_t>(t)] = local(n2, n2 & 3) * 2 + local(t, (t + 1) & 3);
    }
    kt::Checker ck("call_nested_exchanges");
    ck.all(out.get(), want);
    ck.done();
  });
}

CONF_TEST(KernelCallsAWarpCollectiveFunctionFromSomeWarps) {
  kt::for_each_variant("calls", [&](kt::Module& m) {
    for (int warps : {0, 1, 3}) {
      const int threads = 128;
      kt::Buf<int> out(threads);
      kt::run(m.fn("call_warp_sum_in_some_warps"), {1}, {threads}, 0, out.p, warps);
      std::vector<int> want(threads);
      for (int t = 0; t < threads; ++t) {
        int v = t + 1;
        if (t / 32 < warps) {
          // shfl_down sums: lane l ends with the sum of lanes l..31 at offsets that stay in range
          int vals[32];
          for (int l = 0; l < 32; ++l) vals[l] = (t / 32) * 32 + l + 1;
          for (int o = 16; o > 0; o >>= 1)
            for (int l = 0; l < 32; ++l) vals[l] += l + o < 32 ? vals[l + o] : vals[l];
          v = vals[t % 32];
        }
        want[static_cast<size_t>(t)] = v;
      }
      kt::Checker ck("call_warp_sum_in_some_warps warps=" + std::to_string(warps));
      ck.all(out.get(), want);
      ck.done();
    }
  });
}
