// Loops a block's threads go round together (tests/kernels/loops.cu):
// grid- and block-stride loops in every shape nvcc emits them, with grids
// and blocks whose thread counts leave the last trip partial, early exits,
// loops only some threads enter, and loops next to barriers and warp
// collectives. Each launch is checked element by element against a host
// reference.
#include "kernels_util.h"

namespace {

std::vector<int> ramp(size_t n, int mod, int bias = 0) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int>((i * 2654435761u) % static_cast<unsigned>(mod)) + bias;
  return v;
}

struct Shape {
  int blocks, threads, n;
};
// Trips per thread from zero (n below the grid's threads) through one
// partial trip to many.
const Shape kShapes[] = {{1, 32, 20}, {3, 96, 1000}, {7, 128, 4096}, {5, 100, 12345}, {16, 256, 65536}};

}  // namespace

CONF_TEST(KernelLoopsGridStrideMapsEveryElementOnce) {
  kt::for_each_variant("loops", [&](kt::Module& m) {
    for (const Shape& s : kShapes) {
      std::vector<float> in(static_cast<size_t>(s.n));
      for (int i = 0; i < s.n; ++i) in[static_cast<size_t>(i)] = static_cast<float>(i % 977) * 0.5f + 0.25f;
      kt::Buf<float> din(in), dout(static_cast<size_t>(s.n));
      kt::run(m.fn("grid_stride_map"), {s.blocks}, {s.threads}, 0, din.p, dout.p, s.n);
      std::vector<float> want(in.size());
      for (int i = 0; i < s.n; ++i) want[static_cast<size_t>(i)] = std::fma(std::sqrt(in[static_cast<size_t>(i)]), 3.0f, static_cast<float>(i));  // nvcc contracts
      kt::Checker ck("grid_stride_map " + std::to_string(s.blocks) + "x" + std::to_string(s.threads) + " n=" + std::to_string(s.n));
      ck.all(dout.get(), want);
      ck.done();
    }
  });
}

CONF_TEST(KernelLoopsGridStrideInTwoDimensionalBlocks) {
  kt::for_each_variant("loops", [&](kt::Module& m) {
    for (int n : {50, 3000, 40000}) {
      const std::vector<int> in = ramp(static_cast<size_t>(n), 1000);
      kt::Buf<int> din(in), dout(static_cast<size_t>(n));
      kt::run(m.fn("grid_stride_2d_block"), {6}, {16, 6}, 0, din.p, dout.p, n);
      std::vector<int> want(in.size());
      for (int i = 0; i < n; ++i) want[static_cast<size_t>(i)] = in[static_cast<size_t>(i)] * 7 - i;
      kt::Checker ck("grid_stride_2d_block n=" + std::to_string(n));
      ck.all(dout.get(), want);
      ck.done();
    }
  });
}

CONF_TEST(KernelLoopsGridStrideWithA64BitIndex) {
  kt::for_each_variant("loops", [&](kt::Module& m) {
    const uint64_t n = 20011;
    std::vector<long long> in(n);
    for (uint64_t i = 0; i < n; ++i) in[i] = static_cast<long long>(i * i + 3);
    kt::Buf<long long> din(in), dout(n);
    kt::run(m.fn("grid_stride_wide_index"), {9}, {160}, 0, din.p, dout.p, static_cast<unsigned long long>(n));
    std::vector<long long> want(n);
    for (uint64_t i = 0; i < n; ++i) want[i] = in[i] ^ static_cast<long long>(i * 0x9E3779B97F4A7C15ull);
    kt::Checker ck("grid_stride_wide_index");
    ck.all(dout.get(), want);
    ck.done();
  });
}

CONF_TEST(KernelLoopsCountingDownTouchEachElementOnce) {
  kt::for_each_variant("loops", [&](kt::Module& m) {
    for (const Shape& s : kShapes) {
      kt::Buf<int> out(static_cast<size_t>(s.n));
      kt::run(m.fn("countdown_stride"), {s.blocks}, {s.threads}, 0, out.p, s.n);
      std::vector<int> want(static_cast<size_t>(s.n));
      for (int i = 0; i < s.n; ++i) want[static_cast<size_t>(i)] = i + 1;
      kt::Checker ck("countdown_stride n=" + std::to_string(s.n));
      ck.all(out.get(), want);
      ck.done();
    }
  });
}

CONF_TEST(KernelLoopsBlockStrideBeforeABarrierTree) {
  kt::for_each_variant("loops", [&](kt::Module& m) {
    for (int threads : {32, 128, 1024}) {
      const int blocks = 5, n = 3001;
      const std::vector<int> in = ramp(static_cast<size_t>(blocks * n), 100, -50);
      kt::Buf<int> din(in), sums(blocks);
      kt::run(m.fn("block_stride_then_tree"), {blocks}, {threads}, 0, din.p, sums.p, n);
      std::vector<int> want(blocks, 0);
      for (int b = 0; b < blocks; ++b)
        for (int i = 0; i < n; ++i) want[static_cast<size_t>(b)] += in[static_cast<size_t>(b * n + i)] * (i % 5 + 1);
      kt::Checker ck("block_stride_then_tree " + std::to_string(threads) + " threads");
      ck.all(sums.get(), want);
      ck.done();
    }
  });
}

CONF_TEST(KernelLoopsUniformTripCountPerColumn) {
  kt::for_each_variant("loops", [&](kt::Module& m) {
    for (int rows : {0, 1, 3, 7, 64, 131}) {
      const int cols = 333;
      std::vector<float> a(static_cast<size_t>(rows * cols));
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 17) * 0.125f - 1.0f;
      kt::Buf<float> da(a.empty() ? std::vector<float>(1) : a), out(cols);
      kt::run(m.fn("column_sums"), {3}, {128}, 0, da.p, out.p, rows, cols);
      std::vector<float> want(cols, 0.0f);
      for (int c = 0; c < cols; ++c)
        for (int r = 0; r < rows; ++r) want[static_cast<size_t>(c)] += a[static_cast<size_t>(r * cols + c)];
      kt::Checker ck("column_sums rows=" + std::to_string(rows));
      ck.all(out.get(), want);
      ck.done();
    }
  });
}

CONF_TEST(KernelLoopsThreadsLeavingEarly) {
  kt::for_each_variant("loops", [&](kt::Module& m) {
    const int blocks = 4, threads = 64, n = 9000, stop = 7;
    const std::vector<int> in = ramp(static_cast<size_t>(n), 40);
    kt::Buf<int> din(in), out(blocks * threads);
    kt::run(m.fn("stride_with_break"), {blocks}, {threads}, 0, din.p, out.p, n, stop);
    std::vector<int> want(blocks * threads, 0);
    for (int g = 0; g < blocks * threads; ++g)
      for (int i = g; i < n; i += blocks * threads) {
        if (in[static_cast<size_t>(i)] == stop) break;
        want[static_cast<size_t>(g)] += in[static_cast<size_t>(i)];
      }
    kt::Checker ck("stride_with_break");
    ck.all(out.get(), want);
    ck.done();
  });
}

CONF_TEST(KernelLoopsOnlySomeThreadsEnter) {
  kt::for_each_variant("loops", [&](kt::Module& m) {
    for (int active : {0, 1, 33, 64}) {
      const int blocks = 3, threads = 64, n = 5000;
      const std::vector<int> in = ramp(static_cast<size_t>(n), 1000);
      kt::Buf<int> din(in), out(static_cast<size_t>(n));
      kt::run(m.fn("stride_some_threads"), {blocks}, {threads}, 0, din.p, out.p, n, active);
      std::vector<int> want(static_cast<size_t>(n), 0);
      for (int g = 0; g < blocks * threads; ++g)
        if (g % threads < active)
          for (int i = g; i < n; i += blocks * threads) want[static_cast<size_t>(i)] = in[static_cast<size_t>(i)] + 1;
      kt::Checker ck("stride_some_threads active=" + std::to_string(active));
      ck.all(out.get(), want);
      ck.done();
    }
  });
}

CONF_TEST(KernelLoopsStrideThenWarpShuffles) {
  kt::for_each_variant("loops", [&](kt::Module& m) {
    for (const Shape& s : kShapes) {
      if (s.threads % 32) continue;
      const std::vector<int> in = ramp(static_cast<size_t>(s.n), 100);
      kt::Buf<int> din(in), out(1);
      kt::run(m.fn("stride_then_shuffle"), {s.blocks}, {s.threads}, 0, din.p, out.p, s.n);
      long long want = 0;
      for (int v : in) want += v;
      EXPECT_TRUE(out.get()[0] == static_cast<int>(want));
    }
  });
}

CONF_TEST(KernelLoopsAfterADivergentVote) {
  kt::for_each_variant("loops", [&](kt::Module& m) {
    const int blocks = 3, threads = 96, n = 7000;
    const std::vector<int> in = ramp(static_cast<size_t>(n), 6);
    kt::Buf<int> din(in), out(blocks * threads);
    kt::run(m.fn("stride_after_divergent_vote"), {blocks}, {threads}, 0, din.p, out.p, n);
    std::vector<int> want(blocks * threads, 0);
    for (int g = 0; g < blocks * threads; ++g) {
      int acc = 0;
      if (g % 2) {
        const int warp0 = g / 32 * 32;
        for (int l = 1; l < 32; l += 2) acc += in[static_cast<size_t>((warp0 + l) % n)] > 2;
      }
      for (int i = g; i < n; i += blocks * threads) acc += in[static_cast<size_t>(i)];
      want[static_cast<size_t>(g)] = acc;
    }
    kt::Checker ck("stride_after_divergent_vote");
    ck.all(out.get(), want);
    ck.done();
  });
}

CONF_TEST(KernelLoopsOverCooperativeGroupsGridRanks) {
  kt::for_each_variant("loops", [&](kt::Module& m) {
    for (const Shape& s : kShapes) {
      std::vector<float> in(static_cast<size_t>(s.n));
      for (int i = 0; i < s.n; ++i) in[static_cast<size_t>(i)] = static_cast<float>(i % 101) * 0.75f;
      const int threads = s.blocks * s.threads;
      kt::Buf<float> din(in), partial(static_cast<size_t>(threads));
      kt::run(m.fn("grid_rank_sums"), {s.blocks}, {s.threads}, 0, din.p, partial.p, s.n);
      std::vector<float> want(static_cast<size_t>(threads), 0.0f);
      for (int g = 0; g < threads; ++g)
        for (int i = g; i < s.n; i += threads) want[static_cast<size_t>(g)] += in[static_cast<size_t>(i)];
      kt::Checker ck("grid_rank_sums n=" + std::to_string(s.n));
      ck.all(partial.get(), want);
      ck.done();
    }
  });
}
