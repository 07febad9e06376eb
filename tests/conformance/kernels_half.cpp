// Half, bfloat16 and fp8 kernels of tests/kernels/half_ops.cu. The host
// model rounds exact (double) results to each format with one generic
// rounding routine; results are compared bit for bit, any NaN matching any
// NaN, and min/max/saturation accepting a zero of either sign.
#include <cmath>
#include <limits>

#include "kernels_util.h"

namespace {

enum Mode { RN, RZ, RU, RD };

struct Format {
  int p;        // significand bits, the implicit one included
  int emin;     // exponent of the smallest normal
  double maxf;  // largest finite value
};
const Format kHalf{11, -14, 65504.0};
const Format kBf16{8, -126, 0x1.fep127};
const Format kF32{24, -126, 0x1.fffffep127};
const Format kE4m3{4, -6, 448.0};
const Format kE5m2{3, -14, 57344.0};

// Rounds x to the format; with RN, a nonzero tail (the exact remainder of
// x, far below the format's precision) breaks ties.
// Overflow follows IEEE (infinity or the largest finite value, by mode);
// callers that saturate check |result| > maxf themselves.
double round_to(const Format& f, double x, Mode m, double tail = 0) {
  if (x == 0 || std::isnan(x) || std::isinf(x)) return x;
  int e;
  std::frexp(x, &e);
  int E = std::max(e - 1, f.emin);
  double q = std::ldexp(1.0, E - (f.p - 1));
  double r = x / q, ri;
  switch (m) {
    case RN:
      ri = std::nearbyint(r);
      if (tail != 0 && std::fabs(r - std::trunc(r)) == 0.5) ri = tail > 0 ? std::ceil(r) : std::floor(r);
      break;
    case RZ:
      ri = std::trunc(r);
      break;
    case RU:
      ri = std::ceil(r);
      break;
    default:
      ri = std::floor(r);
      break;
  }
  double v = ri * q;
  if (std::fabs(v) > f.maxf) {
    const double inf = std::numeric_limits<double>::infinity();
    bool pos = x > 0;
    switch (m) {
      case RN:
        return pos ? inf : -inf;
      case RZ:
        return pos ? f.maxf : -f.maxf;
      case RU:
        return pos ? inf : -f.maxf;
      default:
        return pos ? f.maxf : -inf;
    }
  }
  return v;
}

// Encodes a value representable in a binary format with `mbits` stored
// mantissa bits and exponent bias `bias`.
uint32_t encode(double v, int mbits, int bias, int ebits) {
  uint32_t sign = std::signbit(v) ? 1u << (mbits + ebits) : 0;
  uint32_t emax_field = (1u << ebits) - 1;
  if (std::isnan(v)) return sign | emax_field << mbits | 1u << (mbits - 1);
  if (std::isinf(v)) return sign | emax_field << mbits;
  double a = std::fabs(v);
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);
  int E = e - 1;
  if (E < 1 - bias) return sign | (uint32_t)(a / std::ldexp(1.0, 1 - bias - mbits));
  return sign | (uint32_t)(E + bias) << mbits | ((uint32_t)(a / std::ldexp(1.0, E - mbits)) - (1u << mbits));
}
uint16_t enc_half(double v) { return (uint16_t)encode(v, 10, 15, 5); }
uint16_t enc_bf16(double v) { return (uint16_t)encode(v, 7, 127, 8); }

double dec(uint32_t b, int mbits, int bias, int ebits, bool ieee_top) {
  uint32_t s = b >> (mbits + ebits) & 1, e = b >> mbits & ((1u << ebits) - 1), m = b & ((1u << mbits) - 1);
  double v;
  if (ieee_top && e == (1u << ebits) - 1)
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (e == 0)
    v = std::ldexp((double)m, 1 - bias - mbits);
  else
    v = std::ldexp(1.0 + std::ldexp((double)m, -mbits), (int)e - bias);
  return s ? -v : v;
}
double dec_half(uint16_t b) { return dec(b, 10, 15, 5, true); }
double dec_bf16(uint16_t b) { return dec(b, 7, 127, 8, true); }
double dec_e4m3(uint8_t b) {
  if ((b & 0x7f) == 0x7f) return std::numeric_limits<double>::quiet_NaN();
  return dec(b, 3, 7, 4, false);
}
double dec_e5m2(uint8_t b) { return dec(b, 2, 15, 5, true); }

bool half_nan(uint16_t b) { return (b & 0x7c00) == 0x7c00 && (b & 0x3ff); }
bool bf16_nan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f); }

// Exact a*b + c rounded once (two-sum keeps the low part as a tie breaker).
double fma_to(const Format& f, double a, double b, double c) {
  double p = a * b;  // exact: both factors have at most 11 significant bits
  double s = p + c, bb = s - p, err = (p - (s - bb)) + (c - bb);
  return round_to(f, s, RN, err);
}

double sat01(double v) { return std::isnan(v) ? 0.0 : std::fmin(std::fmax(v, 0.0), 1.0); }
double hmin(double a, double b) { return std::isnan(a) ? b : std::isnan(b) ? a : std::fmin(a, b); }
double hmax(double a, double b) { return std::isnan(a) ? b : std::isnan(b) ? a : std::fmax(a, b); }

// Random bit patterns, every third one a value in (-2, -1] or [1, 2).
std::vector<uint16_t> half_inputs(int n, uint64_t seed, bool bf) {
  kt::Rng rng(seed);
  std::vector<uint16_t> v(n);
  for (int i = 0; i < n; ++i) {
    uint16_t r = (uint16_t)rng.u32();
    if (i % 3 == 0) r = (uint16_t)(((bf ? 0x3f80 : 0x3c00) + (r & (bf ? 0x7f : 0x3ff))) | (r & 0x8000));
    v[i] = r;
  }
  return v;
}

// Puts every ordered pair of special values first in a and b.
void pair_specials(std::vector<uint16_t>& a, std::vector<uint16_t>& b, bool bf) {
  const std::vector<uint16_t> sp = bf ? std::vector<uint16_t>{0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0,
                                                              0x0001, 0x8001, 0x0080, 0x7f7f, 0xff7f, 0x3f81, 0x4040}
                                      : std::vector<uint16_t>{0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00,
                                                              0x0001, 0x8001, 0x0400, 0x7bff, 0xfbff, 0x3c01, 0x4200};
  const size_t e = sp.size();
  for (size_t i = 0; i < e * e && i < a.size(); ++i) {
    a[i] = sp[i / e];
    b[i] = sp[i % e];
  }
}

bool same16(uint16_t g, uint16_t w, bool (*isnan16)(uint16_t), bool zero_any_sign) {
  if (isnan16(g) && isnan16(w)) return true;
  if (zero_any_sign && (g & 0x7fff) == 0 && (w & 0x7fff) == 0) return true;
  return g == w;
}

}  // namespace

CONF_TEST(KernelHalfArithmeticMatchesTheHostBitForBit) {
  const int n = 1024;
  std::vector<uint16_t> a = half_inputs(n, 61, false), b = half_inputs(n, 62, false), c = half_inputs(n, 63, false);
  pair_specials(a, b, false);
  const std::vector<std::string> names = {"hadd",     "hsub",  "hmul",      "hfma",      "hdiv",
                                          "hneg",     "habs",  "hmin",      "hmax",      "hadd_sat",
                                          "hmul_sat", "hsqrt", "operator+", "operator*", "compare"};
  const size_t nops = names.size();
  std::vector<uint16_t> want(nops * n);
  for (int i = 0; i < n; ++i) {
    double x = dec_half(a[i]), y = dec_half(b[i]), z = dec_half(c[i]);
    auto h = [](double v) { return enc_half(round_to(kHalf, v, RN)); };
    bool un = std::isnan(x) || std::isnan(y);
    std::vector<uint16_t> r = {
        h(x + y),
        h(x - y),
        h(x * y),
        enc_half(fma_to(kHalf, x, y, z)),
        h(x / y),
        (uint16_t)(a[i] ^ 0x8000),
        (uint16_t)(a[i] & 0x7fff),
        h(hmin(x, y)),
        h(hmax(x, y)),
        h(sat01(round_to(kHalf, x + y, RN))),
        h(sat01(round_to(kHalf, x * y, RN))),
        h(std::sqrt(x)),
        h(x + y),
        h(x * y),
        (uint16_t)((x == y) | (x < y) << 1 | (x <= y) << 2 | (x > y) << 3 | (!un && x != y) << 4 | (un || x == y) << 5 |
                   (un || x < y) << 6 | std::isnan(x) << 7 | std::isinf(x) << 8)};
    for (size_t k = 0; k < nops; ++k) want[k * n + i] = r[k];
  }
  kt::for_each_variant("half_ops", [&](kt::Module& m) {
    kt::Buf<uint16_t> da(a), db(b), dc(c), out(nops * n);
    kt::run(m.fn("half_arith"), {n / 256}, {256}, 0, da.p, db.p, dc.p, out.p, n);
    kt::Checker ck("half_arith", [&](size_t i) { return kt::hex(a[i]) + "," + kt::hex(b[i]) + "," + kt::hex(c[i]); });
    ck.ops(out.get(), want, n, names, [](uint16_t g, uint16_t w, size_t k) {
      return same16(g, w, half_nan, k == 7 || k == 8 || k == 9 || k == 10);
    });
    ck.done();
  });
}

CONF_TEST(KernelHalf2ArithmeticMatchesTheHostBitForBit) {
  const int n = 512;  // __half2 elements
  std::vector<uint16_t> a = half_inputs(2 * n, 71, false), b = half_inputs(2 * n, 72, false),
                        c = half_inputs(2 * n, 73, false);
  const int nops = 14;
  std::vector<uint16_t> want(nops * 2 * n);
  auto h = [](double v) { return enc_half(round_to(kHalf, v, RN)); };
  for (int i = 0; i < n; ++i)
    for (int l = 0; l < 2; ++l) {
      int j = 2 * i + l;
      double x = dec_half(a[j]), y = dec_half(b[j]), z = dec_half(c[j]);
      uint16_t r[nops] = {h(x + y),
                          h(x - y),
                          h(x * y),
                          enc_half(fma_to(kHalf, x, y, z)),
                          h(x / y),
                          (uint16_t)(a[j] ^ 0x8000),
                          (uint16_t)(a[j] & 0x7fff),
                          h(hmin(x, y)),
                          h(hmax(x, y)),
                          a[2 * i + 1 - l],
                          l ? b[j] : a[j],
                          l ? b[2 * i] : a[2 * i],
                          l ? b[2 * i + 1] : a[2 * i + 1],
                          l ? h(dec_half(b[2 * i + 1]) * 0.5) : h(dec_half(a[2 * i]) * 2.0)};
      for (int k = 0; k < nops; ++k) want[(k * n + i) * 2 + l] = r[k];
    }
  const std::vector<std::string> names = {
      "hadd2", "hsub2", "hmul2",           "hfma2",        "h2div",      "hneg2",       "habs2",
      "hmin2", "hmax2", "lowhigh2highlow", "halves2half2", "lows2half2", "highs2half2", "floats2half2_rn"};
  kt::for_each_variant("half_ops", [&](kt::Module& m) {
    kt::Buf<uint16_t> da(a), db(b), dc(c), out(nops * 2 * n);
    kt::run(m.fn("half2_arith"), {n / 128}, {128}, 0, da.p, db.p, dc.p, out.p, n);
    kt::Checker ck("half2_arith",
                   [&](size_t i) { return "lane " + std::to_string(i % 2) + " of " + std::to_string(i / 2); });
    ck.ops(out.get(), want, 2 * n, names,
           [](uint16_t g, uint16_t w, size_t k) { return same16(g, w, half_nan, k == 7 || k == 8); });
    ck.done();
  });
}

namespace {
template <class I>
I sat_int(double v, Mode m) {
  if (std::isnan(v)) return 0;
  double r = m == RN ? std::nearbyint(v) : m == RZ ? std::trunc(v) : m == RU ? std::ceil(v) : std::floor(v);
  if (r <= (double)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
  if (r >= (double)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
  return (I)r;
}
}  // namespace

CONF_TEST(KernelHalfConversionsMatchTheHostBitForBit) {
  std::vector<float> f = {0.0f,
                          -0.0f,
                          1.0f,
                          65504.0f,
                          65519.996f,
                          65520.0f,
                          -65520.0f,
                          1e10f,
                          -1e10f,
                          5.9604645e-8f,
                          2.9802322e-8f,
                          2.9802326e-8f,
                          1e-10f,
                          0.33333334f,
                          -2.5f,
                          2.5f,
                          3.5f,
                          1.00048828125f,
                          1.000732421875f,
                          std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          32767.5f,
                          40000.0f,
                          -40000.0f};
  kt::Rng rng(81);
  while (f.size() < 1024) f.push_back(std::ldexp((float)(rng.u32() / 4294967296.0 - 0.5), rng.range(-26, 18)));
  const int n = (int)f.size();
  std::vector<int32_t> v(n);
  std::vector<double> d(n);
  for (int i = 0; i < n; ++i) {
    v[i] = i % 4 == 0 ? (int32_t)rng.u32() : i % 4 == 1 ? rng.range(-70000, 70000) : rng.range(-3000, 3000);
    d[i] = i % 2 ? (double)f[i] * (1.0 + std::ldexp(1.0, -30)) : (double)f[i];
  }
  v[0] = 65520;
  v[1] = -65520;
  v[2] = 2049;
  v[3] = 2051;
  const Mode modes[4] = {RN, RZ, RU, RD};
  std::vector<uint16_t> wh(11 * n);
  std::vector<int32_t> wi(7 * n);
  std::vector<float> wf(n);
  for (int i = 0; i < n; ++i) {
    for (int m = 0; m < 4; ++m) {
      wh[m * n + i] = enc_half(round_to(kHalf, f[i], modes[m]));
      wh[(5 + m) * n + i] = enc_half(round_to(kHalf, v[i], modes[m]));
    }
    wh[4 * n + i] = enc_half(round_to(kHalf, d[i], RN));
    wh[9 * n + i] = enc_half(round_to(kHalf, (int16_t)v[i], RN));
    wh[10 * n + i] = enc_half(round_to(kHalf, (uint32_t)v[i], RN));
    double hx = round_to(kHalf, f[i], RN);
    for (int m = 0; m < 4; ++m) wi[m * n + i] = sat_int<int32_t>(hx, modes[m]);
    wi[4 * n + i] = sat_int<int16_t>(hx, RZ);
    wi[5 * n + i] = (int32_t)sat_int<uint32_t>(hx, RZ);
    wi[6 * n + i] = sat_int<uint16_t>(hx, RN);
    wf[i] = (float)dec_half((uint16_t)v[i]);
  }
  kt::for_each_variant("half_ops", [&](kt::Module& m) {
    kt::Buf<float> df(f), of(n);
    kt::Buf<int32_t> dv(v), oi(7 * n);
    kt::Buf<double> dd(d);
    kt::Buf<uint16_t> oh(11 * n);
    kt::run(m.fn("half_cvt"), {n / 256}, {256}, 0, df.p, dv.p, dd.p, oh.p, oi.p, of.p, n);
    kt::Checker ck("half_cvt", [&](size_t i) {
      return std::to_string(f[i]) + " / " + std::to_string(v[i]) + " / " + kt::hex(kt::bits_of(d[i]));
    });
    ck.ops(oh.get(), wh, n,
           {"float2half_rn", "float2half_rz", "float2half_ru", "float2half_rd", "double2half", "int2half_rn",
            "int2half_rz", "int2half_ru", "int2half_rd", "short2half_rn", "uint2half_rn"},
           [](uint16_t g, uint16_t w, size_t) { return same16(g, w, half_nan, false); });
    ck.ops(oi.get(), wi, n,
           {"half2int_rn", "half2int_rz", "half2int_ru", "half2int_rd", "half2short_rz", "half2uint_rz",
            "half2ushort_rn"});
    ck.ops(of.get(), wf, n, {"half2float"}, [](float g, float w, size_t) {
      return (std::isnan(g) && std::isnan(w)) || kt::bits_of(g) == kt::bits_of(w);
    });
    ck.done();
  });
}

CONF_TEST(KernelBf16ArithmeticAndConversionsMatchTheHostBitForBit) {
  const int n = 1024;
  std::vector<uint16_t> a = half_inputs(n, 91, true), b = half_inputs(n, 92, true), c = half_inputs(n, 93, true);
  pair_specials(a, b, true);
  std::vector<float> f(n);
  kt::Rng rng(94);
  for (int i = 0; i < n; ++i)
    f[i] = i < 8 ? std::vector<float>{0.0f,    -0.0f,    1.00390625f, 1.01171875f,
                                      3.4e38f, -3.4e38f, 1e-40f,      std::numeric_limits<float>::quiet_NaN()}[i]
                 : kt::from_bits<float>(rng.u32());
  const std::vector<std::string> names = {
      "hadd",     "hsub",     "hmul",          "hfma",          "hneg",          "habs",
      "hmin",     "hmax",     "float2bf16_rn", "float2bf16_rz", "float2bf16_ru", "float2bf16_rd",
      "hadd2.lo", "hadd2.hi", "hmul2.lo",      "hmul2.hi",      "hfma2.lo",      "hfma2.hi"};
  const size_t nops = names.size();
  auto bfr = [](double v) { return enc_bf16(round_to(kBf16, v, RN)); };
  // Targets without a bf16 fma round the float fma to bf16 (half_ops.cu).
  auto fma_sm90 = [](double x, double y, double z) { return enc_bf16(fma_to(kBf16, x, y, z)); };
  auto fma_sm75 = [](double x, double y, double z) { return enc_bf16(round_to(kBf16, fma_to(kF32, x, y, z), RN)); };
  auto reference = [&](bool old_target) {
    std::vector<uint16_t> want(nops * n);
    for (int i = 0; i < n; ++i) {
      double x = dec_bf16(a[i]), y = dec_bf16(b[i]), z = dec_bf16(c[i]);
      auto fm = [&](double p, double q, double r) { return old_target ? fma_sm75(p, q, r) : fma_sm90(p, q, r); };
      uint16_t r[] = {bfr(x + y),
                      bfr(x - y),
                      bfr(x * y),
                      fm(x, y, z),
                      (uint16_t)(a[i] ^ 0x8000),
                      (uint16_t)(a[i] & 0x7fff),
                      bfr(hmin(x, y)),
                      bfr(hmax(x, y)),
                      enc_bf16(round_to(kBf16, f[i], RN)),
                      enc_bf16(round_to(kBf16, f[i], RZ)),
                      enc_bf16(round_to(kBf16, f[i], RU)),
                      enc_bf16(round_to(kBf16, f[i], RD)),
                      bfr(x + z),
                      bfr(y + x),
                      bfr(x * z),
                      bfr(y * x),
                      fm(x, z, x),
                      fm(y, x, y)};
      for (size_t k = 0; k < nops; ++k) want[k * n + i] = r[k];
    }
    return want;
  };
  std::vector<float> wf(n);
  for (int i = 0; i < n; ++i) wf[i] = (float)dec_bf16(a[i]);
  kt::for_each_variant("half_ops", [&](kt::Module& m) {
    std::vector<uint16_t> want = reference(m.image.find("sm75") != std::string::npos);
    kt::Buf<uint16_t> da(a), db(b), dc(c), out(nops * n);
    kt::Buf<float> df(f), of(n);
    kt::run(m.fn("bf16_ops"), {n / 256}, {256}, 0, da.p, db.p, dc.p, df.p, out.p, of.p, n);
    kt::Checker ck("bf16_ops", [&](size_t i) {
      return kt::hex(a[i]) + "," + kt::hex(b[i]) + "," + kt::hex(c[i]) + " f=" + kt::hex(kt::bits_of(f[i]));
    });
    ck.ops(out.get(), want, n, names,
           [](uint16_t g, uint16_t w, size_t k) { return same16(g, w, bf16_nan, k == 6 || k == 7); });
    ck.ops(of.get(), wf, n, {"bfloat162float"}, [](float g, float w, size_t) {
      return (std::isnan(g) && std::isnan(w)) || kt::bits_of(g) == kt::bits_of(w);
    });
    ck.done();
  });
}

CONF_TEST(KernelFp8DecodeMatchesTheHostForEveryCode) {
  std::vector<uint16_t> w4(256), w5(256);
  for (int i = 0; i < 256; ++i) {
    w4[i] = enc_half(dec_e4m3((uint8_t)i));
    w5[i] = enc_half(dec_e5m2((uint8_t)i));
  }
  kt::for_each_variant("half_ops", [&](kt::Module& m) {
    kt::Buf<uint16_t> o4(256), o5(256);
    kt::run(m.fn("fp8_decode"), {1}, {256}, 0, o4.p, o5.p);
    kt::Checker ck("fp8_decode", [](size_t i) { return kt::hex(i); });
    auto eq = [](uint16_t g, uint16_t w, size_t) { return same16(g, w, half_nan, false); };
    ck.ops(o4.get(), w4, 256, {"e4m3->half"}, eq);
    ck.ops(o5.get(), w5, 256, {"e5m2->half"}, eq);
    ck.done();
  });
}

namespace {
uint8_t to_fp8(double x, bool e4m3, bool satfinite) {
  const Format& f = e4m3 ? kE4m3 : kE5m2;
  uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (std::isnan(x)) return 0x7f;
  double v = std::isinf(x) ? x : round_to(f, x, RN);
  if (std::isinf(v) || std::fabs(v) > f.maxf) {
    if (satfinite)
      v = std::copysign(f.maxf, x);
    else
      return e4m3 ? (uint8_t)(sign | 0x7f) : (uint8_t)(sign | 0x7c);
  }
  return e4m3 ? (uint8_t)encode(v, 3, 7, 4) : (uint8_t)encode(v, 2, 15, 5);
}
bool fp8_nan(uint8_t b, bool e4m3) { return e4m3 ? (b & 0x7f) == 0x7f : (b & 0x7c) == 0x7c && (b & 3); }
}  // namespace

CONF_TEST(KernelFp8EncodeRoundsAndSaturatesLikeTheHost) {
  std::vector<float> f = {0.0f,
                          -0.0f,
                          448.0f,
                          464.0f,
                          464.5f,
                          480.0f,
                          -500.0f,
                          57344.0f,
                          61439.0f,
                          61440.0f,
                          -70000.0f,
                          0.001953125f,
                          0.0009765625f,
                          0.00146484375f,
                          0.0009765626f,
                          7.62939453125e-06f,
                          1.52587890625e-05f,
                          1e-9f,
                          -1e-9f,
                          1.0625f,
                          1.1875f,
                          1.125f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  kt::Rng rng(101);
  while (f.size() < 1024) {
    float base = std::ldexp(1.0f + (rng.u32() % 64) / 64.0f, rng.range(-20, 17));
    if (f.size() % 3 == 0) base = std::ldexp(1.0f + (2 * (rng.u32() % 8) + 1) / 16.0f, rng.range(-6, 8));  // ties
    f.push_back(f.size() % 2 ? -base : base);
  }
  const int n = (int)f.size();
  std::vector<uint8_t> want(8 * n);
  for (int i = 0; i < n; ++i) {
    double x = f[i], hx = round_to(kHalf, x, RN);
    uint8_t r[8] = {to_fp8(x, true, true),  to_fp8(x, false, true), to_fp8(x, true, false),  to_fp8(x, false, false),
                    to_fp8(hx, true, true), to_fp8(x, false, true), to_fp8(-x, false, true), to_fp8(x, true, true)};
    for (int k = 0; k < 8; ++k) want[k * n + i] = r[k];
  }
  kt::for_each_variant("half_ops", [&](kt::Module& m) {
    kt::Buf<float> df(f);
    kt::Buf<uint8_t> out(8 * n);
    kt::run(m.fn("fp8_encode"), {n / 256}, {256}, 0, df.p, out.p, n);
    kt::Checker ck("fp8_encode", [&](size_t i) { return std::to_string(f[i]) + " " + kt::hex(kt::bits_of(f[i])); });
    const bool kind[8] = {true, false, true, false, true, false, false, true};
    ck.ops(out.get(), want, n,
           {"e4m3.satfinite", "e5m2.satfinite", "e4m3.nosat", "e5m2.nosat", "half->e4m3", "e5m2x2.lo", "e5m2x2.hi",
            "__nv_fp8_e4m3(float)"},
           [&](uint8_t g, uint8_t w, size_t k) { return (fp8_nan(g, kind[k]) && fp8_nan(w, kind[k])) || g == w; });
    ck.done();
  });
}
