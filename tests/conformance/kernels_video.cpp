// The video instructions of tests/kernels/video.cu against a host model of
// the ISA's definitions: operands extended from the selected byte or half
// word by their type, a 64-bit intermediate, saturation to the destination
// (or its selected part), then a secondary operation with c or a merge into c.
#include "kernels_util.h"

namespace {

enum Op2 { kNone, kAdd, kMin, kMax };

int64_t part(uint32_t v, int sel, bool sgn) {
  if (sel < 0) return sgn ? int64_t{static_cast<int32_t>(v)} : int64_t{v};
  if (sel < 4) {
    const uint8_t x = static_cast<uint8_t>(v >> (8 * sel));
    return sgn ? int64_t{static_cast<int8_t>(x)} : int64_t{x};
  }
  const uint16_t x = static_cast<uint16_t>(v >> (16 * (sel - 4)));
  return sgn ? int64_t{static_cast<int16_t>(x)} : int64_t{x};
}

int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

int64_t saturate(int64_t t, bool sgn, int dsel) {
  if (dsel >= 0 && dsel < 4) return sgn ? clamp(t, INT8_MIN, INT8_MAX) : clamp(t, 0, UINT8_MAX);
  if (dsel >= 4) return sgn ? clamp(t, INT16_MIN, INT16_MAX) : clamp(t, 0, UINT16_MAX);
  return sgn ? clamp(t, INT32_MIN, INT32_MAX) : clamp(t, 0, UINT32_MAX);
}

uint32_t finish(int64_t t, bool sgn, Op2 op2, int dsel, uint32_t c) {
  const int64_t c64 = sgn ? int64_t{static_cast<int32_t>(c)} : int64_t{c};
  if (op2 == kAdd) return static_cast<uint32_t>(t + c64);
  if (op2 == kMin) return static_cast<uint32_t>(t < c64 ? t : c64);
  if (op2 == kMax) return static_cast<uint32_t>(t > c64 ? t : c64);
  if (dsel < 0) return static_cast<uint32_t>(t);
  const int w = dsel < 4 ? 8 : 16, at = dsel < 4 ? 8 * dsel : 16 * (dsel - 4);
  const uint32_t field = (w == 8 ? 0xffu : 0xffffu) << at;
  return (c & ~field) | ((static_cast<uint32_t>(t) << at) & field);
}

// op(ta, tb) with the signedness of (d, a, b), selectors, .sat, op2 or dsel
// (vset: d is unsigned, its result 0 or 1).
template <class F>
uint32_t vop(F f, bool ds, bool as, bool bs, uint32_t a, int asel, uint32_t b, int bsel, bool sat, Op2 op2, int dsel,
             uint32_t c) {
  int64_t t = f(part(a, asel, as), part(b, bsel, bs));
  t = static_cast<int64_t>(static_cast<uint64_t>(t) << 30) >> 30;  // a 34-bit intermediate (driver 580: vshl by 32)
  if (sat) t = saturate(t, ds, dsel);
  return finish(t, ds, op2, dsel, c);
}

int64_t add(int64_t x, int64_t y) { return x + y; }
int64_t sub(int64_t x, int64_t y) { return x - y; }
int64_t absdiff(int64_t x, int64_t y) { return x > y ? x - y : y - x; }
int64_t min(int64_t x, int64_t y) { return x < y ? x : y; }
int64_t max(int64_t x, int64_t y) { return x > y ? x : y; }
int64_t shr_clamp(int64_t x, int64_t s) { return x >> (s > 32 ? 32 : s); }
int64_t shl_clamp(int64_t x, int64_t s) { return x << (s > 32 ? 32 : s); }
int64_t shr_wrap(int64_t x, int64_t s) { return x >> (s & 31); }

uint32_t vmad(bool as, bool bs, uint32_t a, int asel, bool na, uint32_t b, int bsel, uint32_t c, bool po, int shr,
              bool sat) {
  const bool sgn = as || bs || na;
  // A whole operand is signed whatever its type; a selected part follows it (driver 580).
  int64_t p = part(a, asel, as || asel < 0) * part(b, bsel, bs || bsel < 0);
  int64_t c64 = static_cast<int32_t>(c);  // sign-extended whatever the types (driver 580, vmad.u32 .shr15)
  int64_t lsb = 0;
  if (po) lsb = 1;
  else if (na) {
    p = ~p;
    lsb = 1;
  }
  int64_t t = p + c64 + lsb;
  t >>= shr;
  if (sat) t = sgn ? clamp(t, INT32_MIN, INT32_MAX) : clamp(t, 0, UINT32_MAX);
  return static_cast<uint32_t>(t);
}

uint32_t avg_simd(uint32_t a, uint32_t b, int lanes) {
  const int w = 32 / lanes;
  uint32_t out = 0;
  for (int k = 0; k < lanes; ++k) {
    const int64_t x = part(a, w == 8 ? k : 4 + k, true), y = part(b, w == 8 ? k : 4 + k, true);
    const int64_t s = x + y, r = s >= 0 ? (s + 1) >> 1 : s >> 1;
    out |= (static_cast<uint32_t>(r) & (w == 8 ? 0xffu : 0xffffu)) << (k * w);
  }
  return out;
}

}  // namespace

CONF_TEST(KernelVideoInstructionsFollowTheIsa) {
  const int n = 4096;
  kt::Rng rng(7);
  std::vector<uint32_t> a(n), b(n), c(n);
  const uint32_t edges[] = {0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000u, 0xffffffffu, 31, 32, 33};
  for (int i = 0; i < n; ++i) {
    a[i] = i < 196 ? edges[i % 14] : rng.u32();
    b[i] = i < 196 ? edges[i / 14] : rng.u32();
    c[i] = rng.u32();
  }
  const int nops = 24;
  kt::for_each_variant("video", [&](kt::Module& m) {
    kt::Buf<uint32_t> da(a), db(b), dc(c), out(nops * n);
    kt::run(m.fn("video"), {n / 128}, {128}, 0, da.p, db.p, dc.p, out.p, n);
    std::vector<uint32_t> want(nops * n);
    for (int i = 0; i < n; ++i) {
      const uint32_t x = a[i], y = b[i], z = c[i], s = b[i] & 63;
      const uint32_t w[nops] = {
          vop(add, false, false, false, x, -1, y, -1, false, kNone, -1, z),
          vop(add, true, true, true, x, -1, y, -1, true, kNone, -1, z),
          vop(add, true, false, true, x, 0, y, 4, true, kNone, -1, z),
          vop(sub, true, true, false, x, 5, y, 5, true, kNone, -1, z),
          vop(sub, false, true, true, x, -1, y, -1, true, kNone, -1, z),
          vop(absdiff, true, true, true, x, 0, y, 2, true, kNone, 4, z),
          vop(absdiff, false, false, false, x, 5, y, 1, false, kNone, 3, z),
          vop(min, true, true, true, x, -1, y, -1, true, kAdd, -1, z),
          vop(max, false, false, false, x, 1, y, 3, false, kMax, -1, z),
          vop(max, true, true, true, x, 4, y, 5, false, kMin, -1, z),
          vop(shr_clamp, false, false, false, x, -1, s, -1, false, kAdd, -1, z),
          vop(shl_clamp, false, false, false, x, -1, s, -1, false, kAdd, -1, z),
          vop(shr_wrap, true, true, false, x, -1, s, -1, false, kNone, -1, z),
          vop(shr_clamp, true, true, false, x, -1, s, -1, false, kNone, -1, z),
          vop(shl_clamp, true, true, false, x, 4, y, 0, true, kNone, -1, z),
          vop([](int64_t p, int64_t q) -> int64_t { return p < q; }, false, true, false, x, -1, y, -1, false, kNone, -1, z),
          vop([](int64_t p, int64_t q) -> int64_t { return p >= q; }, false, false, false, x, 0, y, 0, false, kAdd, -1, z),
          vop([](int64_t p, int64_t q) -> int64_t { return p != q; }, true, true, true, x, 5, y, 4, false, kNone, 2, z),
          vmad(true, true, x, 4, false, y, 5, z, false, 0, true),
          vmad(false, false, x, -1, false, y, -1, z, false, 15, false),
          vmad(true, true, x, 0, true, y, 1, z, false, 0, false),
          vmad(false, false, x, 4, false, y, 4, z, true, 0, false),
          avg_simd(x, y, 2),
          avg_simd(x, y, 4),
      };
      for (int k = 0; k < nops; ++k) want[k * n + i] = w[k];
    }
    kt::Checker ck("video", [&](size_t i) { return kt::hex(a[i]) + " " + kt::hex(b[i]) + " " + kt::hex(c[i]); });
    ck.ops(out.get(), want, n,
           {"vadd.u32", "vadd.s32.sat", "vadd b0 h0 sat", "vsub h1 h1 sat", "vsub.u32.s32.s32.sat", "vabsdiff merge h0",
            "vabsdiff merge b3", "vmin.sat.add", "vmax.max", "vmax.min", "vshr.clamp.add",
            "vshl.clamp.add", "vshr.s32.wrap", "vshr.s32.clamp", "vshl.sat h0 b0", "vset.lt", "vset.ge.add",
            "vset.ne merge b2", "vmad.sat", "vmad.shr15", "vmad -a", "vmad.po", "vavrg2", "vavrg4"});
    ck.done();
  });
}
