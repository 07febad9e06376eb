// Special registers and block barriers (tests/kernels/sregs_sync.cu).
#include "kernels_util.h"

namespace {

void check_sregs(kt::Module& m, kt::Dim grid, kt::Dim block) {
  const unsigned per_block = block.x * block.y * block.z, blocks = grid.x * grid.y * grid.z;
  const unsigned total = per_block * blocks;
  kt::Buf<uint32_t> out(total * 16);
  kt::run(m.fn("sregs_3d"), grid, block, 0, out.p);
  std::vector<uint32_t> got = out.get(), want(total * 16);
  std::vector<uint32_t> gt(total * 16), wt(total * 16);
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              unsigned tid = tx + block.x * (ty + block.y * tz), bid = bx + grid.x * (by + grid.y * bz);
              unsigned g = bid * per_block + tid, lane = tid % 32;
              uint32_t eq = 1u << lane, lt = eq - 1, le = lt | eq;
              uint32_t w[16] = {tx,
                                ty,
                                tz,
                                bx,
                                by,
                                bz,
                                block.x | block.y << 10 | block.z << 20,
                                grid.x | grid.y << 10 | grid.z << 20,
                                lane,
                                eq,
                                lt,
                                le,
                                ~le,
                                ~lt,
                                1,
                                1};
              for (int k = 0; k < 16; ++k) {
                wt[k * total + g] = w[k];
                gt[k * total + g] = got[g * 16 + k];
              }
            }
  kt::Checker ck("sregs_3d grid " + std::to_string(grid.x) + "x" + std::to_string(grid.y) + "x" +
                 std::to_string(grid.z) + " block " + std::to_string(block.x) + "x" + std::to_string(block.y) + "x" +
                 std::to_string(block.z));
  ck.ops(gt, wt, total,
         {"tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z", "ntid", "nctaid", "laneid", "lanemask_eq",
          "lanemask_lt", "lanemask_le", "lanemask_gt", "lanemask_ge", "warpid < nwarpid", "smid < nsmid"});
  ck.done();
}

}  // namespace

CONF_TEST(KernelSpecialRegistersGiveEachThreadItsPlaceIn3D) {
  kt::for_each_variant("sregs_sync", [&](kt::Module& m) {
    check_sregs(m, {3, 2, 2}, {8, 4, 2});
    check_sregs(m, {2, 1, 3}, {5, 7, 3});  // 105 threads: the last warp is partial
    check_sregs(m, {70000, 1, 1}, {1, 1, 1});
  });
}

CONF_TEST(KernelClocksMonotonic) {
  kt::for_each_variant("sregs_sync", [&](kt::Module& m) {
    const int n = 512, spins = 2000;
    kt::Buf<uint64_t> a(6 * n), b(6 * n);
    kt::run(m.fn("clocks"), {2}, {256}, 0, a.p, spins);
    kt::run(m.fn("clocks"), {2}, {256}, 0, b.p, spins);
    std::vector<uint64_t> ra = a.get(), rb = b.get();
    uint64_t max_end_a = 0, min_start_b = ~0ull;
    for (int i = 0; i < n; ++i) {
      const uint64_t* r = &ra[i * 6];
      uint32_t v = (uint32_t)i;
      for (int j = 0; j < spins; ++j) v = v * 1664525u + 1013904223u;
      if ((int64_t)r[1] < (int64_t)r[0] || r[3] < r[2] || r[2] == 0 || r[4] == 0 || r[4] >= (1ull << 31) || r[5] != v)
        throw conf::Failure{"clocks thread " + std::to_string(i) + ": clock64 " + std::to_string(r[0]) + " -> " +
                            std::to_string(r[1]) + ", globaltimer " + std::to_string(r[2]) + " -> " +
                            std::to_string(r[3]) + ", clock delta " + std::to_string(r[4]) + ", lcg " +
                            std::to_string(r[5]) + " want " + std::to_string(v)};
      max_end_a = std::max(max_end_a, r[3]);
      min_start_b = std::min(min_start_b, rb[i * 6 + 2]);
    }
    // The global timer is one clock for the device: a later launch starts
    // no earlier than an earlier one ended.
    if (min_start_b < max_end_a)
      throw conf::Failure{"globaltimer went back across launches: " + std::to_string(max_end_a) + " then " +
                          std::to_string(min_start_b)};
  });
}

CONF_TEST(KernelSyncthreadsCountAndOrSeeTheWholeBlock) {
  const int blocks = 4, n = blocks * 256;
  std::vector<int32_t> pred(n, 0);
  for (int t = 0; t < 256; ++t) {
    pred[t] = 5;
    pred[2 * 256 + t] = (t * 37) % 7 == 0 ? -1 : 0;
  }
  pred[3 * 256 + 255] = 1;
  std::vector<int32_t> want(3 * blocks);
  for (int b = 0; b < blocks; ++b) {
    int cnt = 0;
    for (int t = 0; t < 256; ++t) cnt += pred[b * 256 + t] != 0;
    want[b * 3] = cnt;
    want[b * 3 + 1] = cnt == 256;
    want[b * 3 + 2] = cnt > 0;
  }
  kt::for_each_variant("sregs_sync", [&](kt::Module& m) {
    kt::Buf<int32_t> dp(pred), out(3 * blocks);
    kt::run(m.fn("sync_votes"), {blocks}, {256}, 0, dp.p, out.p);
    std::vector<int32_t> got = out.get();
    // _and and _or return nonzero for true: normalize before comparing.
    for (int b = 0; b < blocks; ++b) {
      got[b * 3 + 1] = got[b * 3 + 1] != 0;
      got[b * 3 + 2] = got[b * 3 + 2] != 0;
    }
    kt::Checker ck("sync_votes", [](size_t i) { return "block " + std::to_string(i / 3); });
    ck.all(got, want, "count/and/or per block");
    ck.done();
  });
}

CONF_TEST(KernelBarrierInALoopKeepsTheBlockInStep) {
  const int blocks = 3, bs = 256, n = blocks * bs, iters = 12;
  kt::Rng rng(501);
  std::vector<int32_t> in(n), want(n);
  for (auto& v : in) v = rng.range(-100000, 100000);
  for (int b = 0; b < blocks; ++b) {
    std::vector<uint32_t> cur(in.begin() + b * bs, in.begin() + (b + 1) * bs), next(bs);
    for (int r = 0; r < iters; ++r) {
      for (int t = 0; t < bs; ++t) {
        int32_t left = (int32_t)cur[(t + bs - 1) % bs], right = (int32_t)cur[(t + 1) % bs], v = (int32_t)cur[t];
        next[t] = (t & 1) ? (uint32_t)v + (uint32_t)left - (uint32_t)(right >> 1) : (uint32_t)(v ^ right) + (uint32_t)r;
      }
      cur.swap(next);
    }
    for (int t = 0; t < bs; ++t) want[b * bs + t] = (int32_t)cur[t];
  }
  kt::for_each_variant("sregs_sync", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in), out(n);
    kt::run(m.fn("barrier_loop"), {blocks}, {bs}, 0, din.p, out.p, iters);
    kt::Checker ck("barrier_loop");
    ck.all(out.get(), want);
    ck.done();
  });
}

CONF_TEST(KernelBarrierReachedFromTwoPathsSyncsTheBlock) {
  const int blocks = 2, bs = 128, n = blocks * bs;
  kt::Rng rng(511);
  std::vector<int32_t> in(n), want(n);
  for (auto& v : in) v = rng.range(-100000, 100000);
  for (int b = 0; b < blocks; ++b) {
    std::vector<int32_t> s(bs);
    for (int t = 0; t < bs; ++t) {
      int v = in[b * bs + t];
      s[t] = (v & 1) ? v * 3 : v - 9;
    }
    for (int t = 0; t < bs; ++t) {
      int v = in[b * bs + t];
      want[b * bs + t] = (v & 1) ? s[(t + 5) % bs] : s[(t + 11) % bs];
    }
  }
  kt::for_each_variant("sregs_sync", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in), out(n);
    kt::run(m.fn("barrier_paths"), {blocks}, {bs}, 0, din.p, out.p);
    kt::Checker ck("barrier_paths");
    ck.all(out.get(), want);
    ck.done();
  });
}
