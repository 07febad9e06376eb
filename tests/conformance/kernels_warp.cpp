// Warp collectives (tests/kernels/warp.cu), modelled per warp on the host.
// Shuffles follow the PTX ISA's shfl.sync definition, with the clamp/segment
// operand c that cuda's __shfl*_sync pass for a width.
#include <algorithm>

#include "kernels_util.h"

namespace {

enum Shfl { IDX, UP, DOWN, BFLY };

// The source lane shfl.sync reads for `lane`, or lane itself when out of
// the segment.
int shfl_src(Shfl mode, int lane, int b, int width) {
  int c = mode == UP ? (32 - width) << 8 : ((32 - width) << 8) | 0x1f;
  int seg = (c >> 8) & 0x1f, cval = c & 0x1f, bval = b & 0x1f;
  int max_lane = (lane & seg) | (cval & ~seg), min_lane = lane & seg;
  int j;
  bool ok;
  switch (mode) {
    case UP:
      j = lane - bval;
      ok = j >= max_lane;
      break;
    case DOWN:
      j = lane + bval;
      ok = j <= max_lane;
      break;
    case BFLY:
      j = lane ^ bval;
      ok = j <= max_lane;
      break;
    default:
      j = min_lane | (bval & ~seg);
      ok = j <= max_lane;
      break;
  }
  return ok ? j : lane;
}

}  // namespace

CONF_TEST(KernelShufflesFollowTheIsaForEveryWidth) {
  const int n = 128;
  kt::Rng rng(601);
  std::vector<int32_t> in(n);
  for (auto& v : in) v = (int32_t)rng.u32() >> 4;
  struct Case {
    int width, delta, src_add;
  };
  const Case cases[] = {{32, 1, 0}, {32, 17, 9}, {16, 3, 5}, {16, 9, 30}, {8, 5, 2}, {8, 1, 7}, {32, 0, 31}};
  kt::for_each_variant("warp", [&](kt::Module& m) {
    for (const Case& c : cases) {
      kt::Buf<int32_t> din(in);
      kt::Buf<uint64_t> out(16 * n);
      kt::run(m.fn("shuffles"), {n / 64}, {64}, 0, din.p, out.p, c.width, c.delta, c.src_add);
      std::vector<uint64_t> want(16 * n);
      for (int i = 0; i < n; ++i) {
        int lane = i % 32, base = i - lane;
        int src = (lane * 7 + c.src_add) % 32;
        int from[4] = {shfl_src(IDX, lane, src, c.width), shfl_src(UP, lane, c.delta, c.width),
                       shfl_src(DOWN, lane, c.delta, c.width), shfl_src(BFLY, lane, c.delta, c.width)};
        for (int k = 0; k < 4; ++k) {
          int j = base + from[k];
          int v = in[j];
          want[(0 + k) * n + i] = (uint32_t)v;
          want[(4 + k) * n + i] = kt::bits_of(v * 0.5f);
          want[(8 + k) * n + i] = kt::bits_of(v * 0.25 + 1e10);
          want[(12 + k) * n + i] = ((uint64_t)(int64_t)v << 32) ^ (uint64_t)((int64_t)j * 0x10001);
        }
      }
      kt::Checker ck("shuffles width " + std::to_string(c.width) + " delta " + std::to_string(c.delta) + " src+" +
                     std::to_string(c.src_add));
      ck.ops(out.get(), want, n,
             {"idx.i32", "up.i32", "down.i32", "xor.i32", "idx.f32", "up.f32", "down.f32", "xor.f32", "idx.f64",
              "up.f64", "down.f64", "xor.f64", "idx.i64", "up.i64", "down.i64", "xor.i64"});
      ck.done();
    }
  });
}

CONF_TEST(KernelVotesMatchAndSyncwarpFollowTheActiveLanes) {
  const int n = 128;
  kt::Rng rng(611);
  std::vector<int32_t> in(n);
  for (int i = 0; i < n; ++i) {
    int w = i / 32, lane = i % 32;
    in[i] = w == 0 ? rng.range(0, 999) : w == 1 ? 0x5007 : w == 2 ? rng.range(-300, 300) : 0x3000 | (lane % 4);
  }
  in[5] = 7;
  const int nops = 12;
  std::vector<uint32_t> want(nops * n);
  for (int w = 0; w < 4; ++w) {
    const int* v = &in[w * 32];
    auto ballot = [&](auto pred, uint32_t mask) {
      uint32_t r = 0;
      for (int l = 0; l < 32; ++l)
        if ((mask >> l & 1) && pred(v[l])) r |= 1u << l;
      return r;
    };
    uint32_t b1 = ballot([](int x) { return (x & 1) != 0; }, ~0u);
    uint32_t any7 = ballot([](int x) { return x == 7; }, ~0u) != 0;
    uint32_t allpos = ballot([](int x) { return x >= 0; }, ~0u) == ~0u;
    uint32_t taken = ballot([](int x) { return (x & 2) != 0; }, ~0u);
    uint32_t b8 = ballot([](int x) { return (x & 8) != 0; }, ~0u);
    bool same_hi = std::all_of(v, v + 32, [&](int x) { return (x >> 12) == (v[0] >> 12); });
    for (int l = 0; l < 32; ++l) {
      int i = w * 32 + l;
      uint32_t half_mask = l < 16 ? 0x0000ffffu : 0xffff0000u;
      uint32_t r[nops] = {b1,
                          any7,
                          allpos,
                          taken,  // each branch reports (or inverts back) the taken set
                          ballot([](int x) { return (x & 4) != 0; }, half_mask),
                          (uint32_t)__builtin_popcount(b8),
                          (uint32_t)v[(l + 1) & 31],
                          (l & 1) ? (uint32_t)(v[(l + 2) & 31] * 3) : 0u,
                          ballot([&](int x) { return x % 5 == v[l] % 5; }, ~0u),
                          same_hi ? ~0u : 0u,
                          same_hi,
                          ballot([&](int x) { return x % 3 == v[l] % 3; }, ~0u)};
      for (int k = 0; k < nops; ++k) want[k * n + i] = r[k];
    }
  }
  kt::for_each_variant("warp", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in);
    kt::Buf<uint32_t> out(nops * n);
    kt::run(m.fn("votes"), {2}, {64}, 0, din.p, out.p);
    kt::Checker ck("votes", [](size_t i) { return "thread " + std::to_string(i); });
    ck.ops(out.get(), want, n,
           {"ballot", "any", "all", "activemask (divergent)", "ballot (half-warp masks)", "popc(ballot)",
            "syncwarp exchange", "syncwarp(odd lanes)", "match_any", "match_all", "match_all pred", "match_any.b64"});
    ck.done();
  });
}

CONF_TEST(KernelActivemaskOfAPartialWarpHasOnlyItsLanes) {
  std::vector<uint32_t> want(96);
  for (int t = 0; t < 48; ++t) {
    want[t] = t < 32 ? ~0u : 0xffffu;
    want[48 + t] = t < 32 ? 0xaaaaaaaau : 0xaaaau;
  }
  kt::for_each_variant("warp", [&](kt::Module& m) {
    kt::Buf<uint32_t> out(96);
    kt::run(m.fn("activemask_partial"), {1}, {48}, 0, out.p);
    kt::Checker ck("activemask_partial");
    ck.ops(out.get(), want, 48, {"activemask", "ballot(activemask)"});
    ck.done();
  });
}

CONF_TEST(KernelWarpReduceAndScanMatchTheHost) {
  const int n = 256;
  kt::Rng rng(621);
  std::vector<int32_t> in(n), wsum(n), wscan(n);
  for (auto& v : in) v = rng.range(-10000, 10000);
  for (int w = 0; w < n / 32; ++w) {
    int s = 0;
    for (int l = 0; l < 32; ++l) wscan[w * 32 + l] = s += in[w * 32 + l];
    for (int l = 0; l < 32; ++l) wsum[w * 32 + l] = s;
  }
  kt::for_each_variant("warp", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in), sum(n), scan(n);
    kt::run(m.fn("warp_reduce_scan"), {2}, {128}, 0, din.p, sum.p, scan.p);
    kt::Checker ck("warp_reduce_scan");
    ck.all(sum.get(), wsum, "butterfly sum");
    ck.all(scan.get(), wscan, "shfl_up scan");
    ck.done();
  });
}

// Driver 580's rule (KernelF32ArithmeticNaNsAreCanonical...): an f32
// arithmetic result that is NaN has the bits 0x7fffffff (x86 makes
// 0xffc00000 of -inf * 0), also once shuffles have moved it (a shuffle
// moves bits) or summed it. Lane 31 of the sum adds only zeros.
CONF_TEST(KernelShuffledComputedNaNsAreTheCanonicalNaN) {
  std::vector<float> in(32, 1.0f);
  in[7] = -INFINITY;
  kt::for_each_variant("warp", [&](kt::Module& m) {
    kt::Buf<float> din(in);
    kt::Buf<uint32_t> out(64);
    kt::run(m.fn("shfl_of_a_computed_nan"), {1}, {32}, 0, din.p, out.p);
    const std::vector<uint32_t> got = out.get();
    kt::Checker ck("shfl_of_a_computed_nan");
    ck.all(std::vector<uint32_t>{got[0], got[31]}, std::vector<uint32_t>{0x7fffffffu, 0u}, "sum");
    ck.all(std::vector<uint32_t>(got.begin() + 32, got.end()), std::vector<uint32_t>(32, 0x7fffffffu), "moved");
    ck.done();
  });
}
