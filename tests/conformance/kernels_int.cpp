// Integer kernels of tests/kernels/int_ops.cu against host references,
// bit-exact, over edge-value pairs and random operands.
#include <algorithm>
#include <climits>

#include "kernels_util.h"

namespace {

uint32_t popc32(uint32_t v) { return (uint32_t)__builtin_popcount(v); }
uint32_t brev32(uint32_t v) {
  uint32_t r = 0;
  for (int j = 0; j < 32; ++j) r |= ((v >> j) & 1u) << (31 - j);
  return r;
}
uint64_t brev64(uint64_t v) { return (uint64_t)brev32((uint32_t)v) << 32 | brev32((uint32_t)(v >> 32)); }
int clz32(uint32_t v) { return v ? __builtin_clz(v) : 32; }
int clz64(uint64_t v) { return v ? __builtin_clzll(v) : 64; }
int ffs32(uint32_t v) { return v ? __builtin_ctz(v) + 1 : 0; }
int ffs64(uint64_t v) { return v ? __builtin_ctzll(v) + 1 : 0; }
int32_t sext(uint32_t v, int bits) { return (int32_t)(v << (32 - bits)) >> (32 - bits); }
uint32_t byte_of(uint64_t v, unsigned k) { return (uint32_t)(v >> (8 * k)) & 0xff; }

uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t s) {
  uint64_t src = (uint64_t)y << 32 | x;
  uint32_t r = 0;
  for (int k = 0; k < 4; ++k) r |= byte_of(src, (s >> (4 * k)) & 7) << (8 * k);
  return r;
}
uint32_t funnel_l(uint32_t lo, uint32_t hi, uint32_t s) { return (uint32_t)((((uint64_t)hi << 32 | lo) << s) >> 32); }
uint32_t funnel_r(uint32_t lo, uint32_t hi, uint32_t s) { return (uint32_t)(((uint64_t)hi << 32 | lo) >> s); }

uint32_t bfe(uint32_t a, uint32_t pos, uint32_t len, bool is_signed) {
  pos &= 0xff;
  len &= 0xff;
  uint32_t sbit = (!is_signed || len == 0) ? 0 : (a >> std::min(pos + len - 1, 31u)) & 1;
  uint32_t d = 0;
  for (uint32_t i = 0; i < 32; ++i) {
    uint32_t bit = (i < len && pos + i <= 31) ? (a >> (pos + i)) & 1 : sbit;
    d |= bit << i;
  }
  return d;
}
uint32_t bfi(uint32_t a, uint32_t b, uint32_t pos, uint32_t len) {
  pos &= 0xff;
  len &= 0xff;
  uint32_t f = b;
  for (uint32_t i = 0; i < len && pos + i <= 31; ++i) f = (f & ~(1u << (pos + i))) | (((a >> i) & 1) << (pos + i));
  return f;
}

template <int Lanes, bool Signed>
uint32_t simd(uint32_t a, uint32_t b, int64_t (*op)(int64_t, int64_t)) {
  const int w = 32 / Lanes;
  const uint32_t m = w == 32 ? ~0u : (1u << w) - 1;
  uint32_t r = 0;
  for (int k = 0; k < Lanes; ++k) {
    uint32_t ea = (a >> (k * w)) & m, eb = (b >> (k * w)) & m;
    int64_t va = Signed ? (int64_t)sext(ea, w) : (int64_t)ea, vb = Signed ? (int64_t)sext(eb, w) : (int64_t)eb;
    int64_t lo = Signed ? -(int64_t(1) << (w - 1)) : 0, hi = Signed ? (int64_t(1) << (w - 1)) - 1 : (int64_t)m;
    int64_t v = std::min(std::max(op(va, vb), lo), hi);
    r |= ((uint32_t)v & m) << (k * w);
  }
  return r;
}
int64_t op_add(int64_t a, int64_t b) { return a + b; }
int64_t op_sub(int64_t a, int64_t b) { return a - b; }
int64_t op_absdiff(int64_t a, int64_t b) { return a > b ? a - b : b - a; }
int64_t op_avg(int64_t a, int64_t b) { return (a + b + 1) >> 1; }
int64_t op_max(int64_t a, int64_t b) { return std::max(a, b); }
int64_t op_eq(int64_t a, int64_t b) { return a == b ? 255 : 0; }

int32_t sat32(int64_t v) { return (int32_t)std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX); }

std::vector<int32_t> i32_ref(int32_t x, int32_t y, int32_t z) {
  uint32_t ux = x, uy = y, uz = z;
  int64_t sx = x, sy = y;
  std::vector<int32_t> r;
  auto put = [&](uint64_t v) { r.push_back((int32_t)(uint32_t)v); };
  put(ux + uy);
  put(ux - uy);
  put(ux * uy);
  put((uint64_t)((sx * sy) >> 32));
  put(((uint64_t)ux * uy) >> 32);
  put((uint64_t)((int64_t)sext(ux, 24) * sext(uy, 24)));
  put((uint64_t)(ux & 0xffffff) * (uy & 0xffffff));
  put(ux * uy + uz);
  put((uint32_t)(x / y));
  put((uint32_t)(x % y));
  put(ux / uy);
  put(ux % uy);
  put((uint32_t)std::min(x, y));
  put((uint32_t)std::max(x, y));
  put(std::min(ux, uy));
  put(std::max(ux, uy));
  put(x < 0 ? 0u - ux : ux);
  put(ux << (uy & 31));
  put((uint32_t)(x >> (uy & 31)));
  put(ux >> (uy & 31));
  put(ux & uy);
  put(ux | uy);
  put(ux ^ uy);
  put(~ux);
  put(popc32(ux));
  put((uint32_t)clz32(ux));
  put(brev32(ux));
  put((uint32_t)ffs32(ux));
  put(byte_perm(ux, uy, uz & 0x7777));
  put(funnel_l(ux, uy, uz & 31));
  put(funnel_r(ux, uy, uz & 31));
  put(funnel_l(ux, uy, std::min(uz, 32u)));
  put(funnel_r(ux, uy, std::min(uz, 32u)));
  int64_t dp4s = z, dp4u = uz;
  for (unsigned k = 0; k < 4; ++k) {
    dp4s += (int64_t)(int8_t)byte_of(ux, k) * (int8_t)byte_of(uy, k);
    dp4u += (int64_t)byte_of(ux, k) * byte_of(uy, k);
  }
  put((uint64_t)dp4s);
  put((uint64_t)dp4u);
  int64_t h0 = (int16_t)(ux & 0xffff), h1 = (int16_t)(ux >> 16), uh0 = ux & 0xffff, uh1 = ux >> 16;
  put((uint64_t)(z + h0 * (int8_t)byte_of(uy, 0) + h1 * (int8_t)byte_of(uy, 1)));
  put((uint64_t)(z + h0 * (int8_t)byte_of(uy, 2) + h1 * (int8_t)byte_of(uy, 3)));
  put((uint64_t)(uz + uh0 * byte_of(uy, 0) + uh1 * byte_of(uy, 1)));
  put((uint64_t)(uz + uh0 * byte_of(uy, 2) + uh1 * byte_of(uy, 3)));
  put((uint64_t)((sx + sy) >> 1));
  put((uint64_t)((sx + sy + 1) >> 1));
  put(((uint64_t)ux + uy) >> 1);
  put(((uint64_t)ux + uy + 1) >> 1);
  put((uint64_t)((sx > sy ? sx - sy : sy - sx) + uz));
  put((uint64_t)(ux > uy ? ux - uy : uy - ux) + uz);
  put(simd<2, true>(ux, uy, op_add));
  put(simd<4, false>(ux, uy, op_add));
  put(simd<4, true>(ux, uy, op_sub));
  put(simd<4, false>(ux, uy, op_absdiff));
  put(simd<4, false>(ux, uy, op_avg));
  put(simd<2, true>(ux, uy, op_max));
  put(simd<4, false>(ux, uy, op_eq));
  put((uint32_t)sat32(sx + sy));
  put((uint32_t)sat32(sx - sy));
  put(bfe(ux, uy & 0x3f, (uz >> 8) & 0x3f, false));
  put(bfe(ux, uy & 0x3f, (uz >> 8) & 0x3f, true));
  put(bfi(ux, uy, uz & 0x3f, (uz >> 8) & 0x3f));
  return r;
}

std::vector<int64_t> i64_ref(int64_t x, int64_t y, int64_t z) {
  uint64_t ux = x, uy = y, uz = z;
  std::vector<int64_t> r;
  auto put = [&](uint64_t v) { r.push_back((int64_t)v); };
  put(ux + uy);
  put(ux - uy);
  put(ux * uy);
  put((uint64_t)(((__int128)x * y) >> 64));
  put((uint64_t)(((unsigned __int128)ux * uy) >> 64));
  put(ux * uy + uz);
  put((uint64_t)(x / y));
  put((uint64_t)(x % y));
  put(ux / uy);
  put(ux % uy);
  put((uint64_t)std::min(x, y));
  put((uint64_t)std::max(x, y));
  put(std::min(ux, uy));
  put(std::max(ux, uy));
  put(x < 0 ? 0 - ux : ux);
  put(ux << (uy & 63));
  put((uint64_t)(x >> (uy & 63)));
  put(ux >> (uy & 63));
  put(ux & uy);
  put(ux | uy);
  put(ux ^ uy);
  put(~ux);
  put((uint64_t)__builtin_popcountll(ux));
  put((uint64_t)clz64(ux));
  put(brev64(ux));
  put((uint64_t)ffs64(ux));
  put((uint64_t)((int64_t)(int32_t)x * (int32_t)y));
  put((uint64_t)(uint32_t)ux * (uint32_t)uy);
  put((uint64_t)(int64_t)(int16_t)x);
  put((uint64_t)(int64_t)(int8_t)y);
  put((uint64_t)(uint16_t)x);
  return r;
}

const std::vector<std::string> kI32Names = {"add",
                                            "sub",
                                            "mul",
                                            "mulhi",
                                            "umulhi",
                                            "mul24",
                                            "umul24",
                                            "mad",
                                            "div",
                                            "rem",
                                            "udiv",
                                            "urem",
                                            "min",
                                            "max",
                                            "umin",
                                            "umax",
                                            "abs",
                                            "shl",
                                            "sar",
                                            "shr",
                                            "and",
                                            "or",
                                            "xor",
                                            "not",
                                            "popc",
                                            "clz",
                                            "brev",
                                            "ffs",
                                            "byte_perm",
                                            "funnelshift_l",
                                            "funnelshift_r",
                                            "funnelshift_lc",
                                            "funnelshift_rc",
                                            "dp4a.s",
                                            "dp4a.u",
                                            "dp2a_lo.s",
                                            "dp2a_hi.s",
                                            "dp2a_lo.u",
                                            "dp2a_hi.u",
                                            "hadd",
                                            "rhadd",
                                            "uhadd",
                                            "urhadd",
                                            "sad",
                                            "usad",
                                            "vaddss2",
                                            "vaddus4",
                                            "vsubss4",
                                            "vabsdiffu4",
                                            "vavgu4",
                                            "vmaxs2",
                                            "vcmpeq4",
                                            "add.sat",
                                            "sub.sat",
                                            "bfe.u32",
                                            "bfe.s32",
                                            "bfi"};
const std::vector<std::string> kI64Names = {
    "add",    "sub",   "mul",    "mul64hi", "umul64hi",     "mad",          "div",    "rem",   "udiv",  "urem", "min",
    "max",    "umin",  "umax",   "llabs",   "shl",          "sar",          "shr",    "and",   "or",    "xor",  "not",
    "popcll", "clzll", "brevll", "ffsll",   "mul.wide.s32", "mul.wide.u32", "sext16", "sext8", "zext16"};

}  // namespace

CONF_TEST(KernelInt32OpsMatchTheHostBitForBit) {
  const std::vector<int32_t> edge = {0,
                                     1,
                                     -1,
                                     2,
                                     INT32_MAX,
                                     INT32_MIN,
                                     INT32_MIN + 1,
                                     0x7fff,
                                     0x8000,
                                     0xffff,
                                     0x10000,
                                     0x00ff00ff,
                                     (int32_t)0x80000001u,
                                     12345,
                                     -12345,
                                     31,
                                     32,
                                     33,
                                     64};
  const int n = 1024;
  std::vector<int32_t> a(n), b(n), c(n);
  kt::Rng rng(1);
  for (int i = 0; i < n; ++i) {
    size_t e = edge.size();
    if ((size_t)i < e * e) {
      a[i] = edge[i / e];
      b[i] = edge[i % e];
    } else {
      a[i] = (int32_t)rng.u32();
      b[i] = i % 3 ? (int32_t)rng.u32() : rng.range(-70, 70);
    }
    c[i] = i % 2 ? (int32_t)rng.u32() : rng.range(0, 0x2828);
    if (b[i] == 0 || (a[i] == INT32_MIN && b[i] == -1)) b[i] = 3;
  }
  std::vector<int32_t> want;
  std::vector<std::vector<int32_t>> per(n);
  for (int i = 0; i < n; ++i) per[i] = i32_ref(a[i], b[i], c[i]);
  const size_t nops = per[0].size();
  want.resize(nops * n);
  for (int i = 0; i < n; ++i)
    for (size_t k = 0; k < nops; ++k) want[k * n + i] = per[i][k];
  kt::for_each_variant("int_ops", [&](kt::Module& m) {
    kt::Buf<int32_t> da(a), db(b), dc(c), out(nops * n);
    kt::run(m.fn("i32_ops"), {n / 256}, {256}, 0, da.p, db.p, dc.p, out.p, n);
    kt::Checker ck("i32_ops", [&](size_t i) {
      return kt::hex((uint32_t)a[i]) + "," + kt::hex((uint32_t)b[i]) + "," + kt::hex((uint32_t)c[i]);
    });
    ck.ops(out.get(), want, n, kI32Names);
    ck.done();
  });
}

CONF_TEST(KernelInt64OpsMatchTheHostBitForBit) {
  const std::vector<int64_t> edge = {0,
                                     1,
                                     -1,
                                     2,
                                     INT64_MAX,
                                     INT64_MIN,
                                     INT64_MIN + 1,
                                     INT32_MAX,
                                     INT32_MIN,
                                     0xffffffffll,
                                     0x100000000ll,
                                     0x7fffffffffffll,
                                     -0x123456789abll,
                                     63,
                                     64,
                                     65};
  const int n = 512;
  std::vector<int64_t> a(n), b(n), c(n);
  kt::Rng rng(2);
  for (int i = 0; i < n; ++i) {
    size_t e = edge.size();
    if ((size_t)i < e * e) {
      a[i] = edge[i / e];
      b[i] = edge[i % e];
    } else {
      a[i] = (int64_t)rng.u64();
      b[i] = i % 3 ? (int64_t)rng.u64() : (int64_t)rng.range(-130, 130);
    }
    c[i] = (int64_t)rng.u64();
    if (b[i] == 0 || (a[i] == INT64_MIN && b[i] == -1)) b[i] = 7;
  }
  std::vector<std::vector<int64_t>> per(n);
  for (int i = 0; i < n; ++i) per[i] = i64_ref(a[i], b[i], c[i]);
  const size_t nops = per[0].size();
  std::vector<int64_t> want(nops * n);
  for (int i = 0; i < n; ++i)
    for (size_t k = 0; k < nops; ++k) want[k * n + i] = per[i][k];
  kt::for_each_variant("int_ops", [&](kt::Module& m) {
    kt::Buf<int64_t> da(a), db(b), dc(c), out(nops * n);
    kt::run(m.fn("i64_ops"), {n / 128}, {128}, 0, da.p, db.p, dc.p, out.p, n);
    kt::Checker ck("i64_ops", [&](size_t i) { return kt::hex((uint64_t)a[i]) + "," + kt::hex((uint64_t)b[i]); });
    ck.ops(out.get(), want, n, kI64Names);
    ck.done();
  });
}
