// sm_80+ kernels of tests/kernels/sm80.cu (sm_90 PTX only): cp.async,
// mma.sync m16n8k16, __reduce_*_sync and min/max with NaN.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels_util.h"

CONF_TEST(KernelCpAsyncDataIsInPlaceAfterEachWait) {
  kt::Rng rng(901);
  std::vector<int32_t> in(512), want(1024, 0);
  for (auto& v : in) v = (int32_t)rng.u32();
  for (int j = 0; j < 512; ++j) want[j] = in[j];
  for (int t = 0; t < 128; ++t) want[512 + t] = in[127 - t];
  for (int t = 0; t < 64; ++t) {
    want[640 + 4 * t] = in[4 * t];
    want[640 + 4 * t + 1] = in[4 * t + 1];
  }
  for (int t = 0; t < 128; ++t) want[896 + t] = (int32_t)((uint32_t)in[(t * 37) % 512] + (uint32_t)in[127 - t]);
  kt::for_each_variant("sm80", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in), out(1024);
    ASSERT_CU(cuMemsetD8(out.p, 0xee, 1024 * 4));
    kt::run(m.fn("cp_async_copy"), {1}, {128}, 0, din.p, out.p);
    kt::Checker ck("cp_async_copy", [](size_t i) { return "word " + std::to_string(i); });
    ck.all(out.get(), want, "shared after wait_all; sums after wait_group 1");
    ck.done();
  });
}

CONF_TEST(KernelCpAsyncIgnoreSrcAndCachePolicyOperands) {
  kt::Rng rng(902);
  std::vector<int32_t> in(256), want(768, 0);
  for (auto& v : in) v = (int32_t)rng.u32();
  for (int t = 0; t < 64; ++t)
    for (int k = 0; k < 4; ++k) {
      want[4 * t + k] = t % 3 == 0 ? 0 : in[4 * t + k];
      want[256 + 4 * t + k] = in[4 * t + k];
      want[512 + 4 * t + k] = k == 0 ? in[4 * t] : 0;
    }
  kt::for_each_variant("sm80", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in), out(768);
    ASSERT_CU(cuMemsetD8(out.p, 0xee, 768 * 4));
    kt::run(m.fn("cp_async_operands"), {1}, {64}, 0, din.p, out.p);
    kt::Checker ck("cp_async_operands", [](size_t i) { return "word " + std::to_string(i); });
    ck.all(out.get(), want, "ignore-src, policy, src-size and policy");
    ck.done();
  });
}

namespace {
uint16_t half_of_int(int v) {  // exact for |v| < 2048
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  unsigned a = (unsigned)std::abs(v);
  int e = 31 - __builtin_clz(a);
  return (uint16_t)(sign | (e + 15) << 10 | ((a << (10 - e)) & 0x3ff));
}
}  // namespace

CONF_TEST(KernelMmaSyncM16n8k16MatchesTheHostProduct) {
  kt::Rng rng(911);
  std::vector<int> ai(256), bi(128);
  std::vector<uint16_t> A(256), B(128);
  std::vector<float> C(128), want(128);
  for (int j = 0; j < 256; ++j) A[j] = half_of_int(ai[j] = rng.range(-4, 4));
  for (int j = 0; j < 128; ++j) B[j] = half_of_int(bi[j] = rng.range(-4, 4));
  for (auto& c : C) c = (float)rng.range(-100, 100);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c) {
      int acc = 0;
      for (int k = 0; k < 16; ++k) acc += ai[r * 16 + k] * bi[c * 16 + k];
      want[r * 8 + c] = (float)acc + C[r * 8 + c];
    }
  kt::for_each_variant("sm80", [&](kt::Module& m) {
    kt::Buf<uint16_t> dA(A), dB(B);
    kt::Buf<float> dC(C), dD(128);
    kt::run(m.fn("mma_m16n8k16"), {1}, {32}, 0, dA.p, dB.p, dC.p, dD.p);
    kt::Checker ck("mma_m16n8k16",
                   [](size_t i) { return "row " + std::to_string(i / 8) + " col " + std::to_string(i % 8); });
    ck.all(dD.get(), want, "D");
    ck.done();
  });
}

CONF_TEST(KernelReduceSyncGivesEveryLaneTheWarpsResult) {
  const int n = 128;
  kt::Rng rng(921);
  std::vector<uint32_t> in(n);
  for (int i = 0; i < n; ++i) in[i] = i / 32 == 1 ? rng.u32() % 100 : rng.u32();
  const int nops = 9;
  std::vector<uint32_t> want(nops * n);
  for (int w = 0; w < n / 32; ++w) {
    const uint32_t* v = &in[w * 32];
    uint32_t add = 0, umin = ~0u, umax = 0, band = ~0u, bor = 0, bxor = 0, odd = 0;
    int32_t smin = INT32_MAX, smax = INT32_MIN;
    for (int l = 0; l < 32; ++l) {
      add += v[l];
      umin = std::min(umin, v[l]);
      umax = std::max(umax, v[l]);
      smin = std::min(smin, (int32_t)v[l]);
      smax = std::max(smax, (int32_t)v[l]);
      band &= v[l];
      bor |= v[l];
      bxor ^= v[l];
      if (l & 1) odd += v[l];
    }
    for (int l = 0; l < 32; ++l) {
      uint32_t r[nops] = {add, umin, umax, (uint32_t)smin, (uint32_t)smax, band, bor, bxor, (l & 1) ? odd : 0u};
      for (int k = 0; k < nops; ++k) want[k * n + w * 32 + l] = r[k];
    }
  }
  kt::for_each_variant("sm80", [&](kt::Module& m) {
    kt::Buf<uint32_t> din(in), out(nops * n);
    kt::run(m.fn("warp_reduce"), {2}, {64}, 0, din.p, out.p);
    kt::Checker ck("warp_reduce");
    ck.ops(out.get(), want, n,
           {"add", "min.u32", "max.u32", "min.s32", "max.s32", "and", "or", "xor", "add (odd lanes)"});
    ck.done();
  });
}

namespace {
// Half bits of a float that is exactly representable in half, or NaN/inf.
uint16_t half_exact(float f) {
  if (std::isnan(f)) return 0x7e00;
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  float a = std::fabs(f);
  if (std::isinf(a)) return sign | 0x7c00;
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);
  return (uint16_t)(sign | (e - 1 + 15) << 10 | ((uint32_t)std::ldexp(a, 11 - e) & 0x3ff));
}
float min_nan(float a, float b) {
  return (std::isnan(a) || std::isnan(b)) ? std::numeric_limits<float>::quiet_NaN() : std::fmin(a, b);
}
float max_nan(float a, float b) {
  return (std::isnan(a) || std::isnan(b)) ? std::numeric_limits<float>::quiet_NaN() : std::fmax(a, b);
}
bool eq32(uint32_t g, uint32_t w) {
  float fg = kt::from_bits<float>(g), fw = kt::from_bits<float>(w);
  return (std::isnan(fg) && std::isnan(fw)) || (fg == 0 && fw == 0) || g == w;
}
bool eq16(uint16_t g, uint16_t w) {
  bool ng = (g & 0x7c00) == 0x7c00 && (g & 0x3ff), nw = (w & 0x7c00) == 0x7c00 && (w & 0x3ff);
  return (ng && nw) || ((g & 0x7fff) == 0 && (w & 0x7fff) == 0) || g == w;
}
}  // namespace

CONF_TEST(KernelMinMaxNaNVariantsPropagateNaNAndPlainOnesDoNot) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> sp = {0.0f, -0.0f, 1.0f, -2.5f, nan, inf, -inf, 0.25f, 1000.0f};
  std::vector<float> a, b;
  for (float x : sp)
    for (float y : sp) a.push_back(x), b.push_back(y);
  kt::Rng rng(931);
  while (a.size() < 256) {
    a.push_back((float)rng.range(-400, 400) * 0.25f);
    b.push_back((float)rng.range(-400, 400) * 0.25f);
  }
  const int n = (int)a.size();
  std::vector<uint32_t> want(6 * n);
  for (int i = 0; i < n; ++i) {
    float x = a[i], y = b[i];
    want[0 * n + i] = kt::bits_of(min_nan(x, y)) & 0xffffffffu;
    want[1 * n + i] = kt::bits_of(max_nan(x, y)) & 0xffffffffu;
    want[2 * n + i] = kt::bits_of(std::fmin(x, y)) & 0xffffffffu;
    want[3 * n + i] = kt::bits_of(std::fmax(x, y)) & 0xffffffffu;
    want[4 * n + i] = half_exact(min_nan(x, y)) | (uint32_t)half_exact(min_nan(y, x)) << 16;
    want[5 * n + i] = half_exact(max_nan(x, y)) | (uint32_t)half_exact(max_nan(y, x)) << 16;
  }
  kt::for_each_variant("sm80", [&](kt::Module& m) {
    kt::Buf<float> da(a), db(b);
    kt::Buf<uint32_t> out(6 * n);
    kt::run(m.fn("minmax_nan"), {n / 64}, {64}, 0, da.p, db.p, out.p, n);
    kt::Checker ck("minmax_nan", [&](size_t i) { return std::to_string(a[i]) + "," + std::to_string(b[i]); });
    ck.ops(out.get(), want, n, {"min.NaN.f32", "max.NaN.f32", "min.f32", "max.f32", "hmin2_nan", "hmax2_nan"},
           [](uint32_t g, uint32_t w, size_t k) {
             if (k < 4) return eq32(g, w);
             return eq16((uint16_t)g, (uint16_t)w) && eq16((uint16_t)(g >> 16), (uint16_t)(w >> 16));
           });
    ck.done();
  });
}
