// Inline-PTX kernels of tests/kernels/asm.cu against host models written
// from the PTX ISA's semantics of each instruction.
#include <algorithm>

#include "kernels_util.h"

namespace {

uint32_t byte_at(uint64_t v, unsigned k) { return (uint32_t)(v >> (8 * (k & 7))) & 0xff; }

// mode: 0 generic, 1 f4e, 2 b4e, 3 rc8, 4 ecl, 5 ecr, 6 rc16.
uint32_t prmt(uint32_t a, uint32_t b, uint32_t c, int mode) {
  uint64_t src = (uint64_t)b << 32 | a;
  uint32_t r = 0;
  unsigned n = c & 3;
  for (unsigned k = 0; k < 4; ++k) {
    uint32_t byte;
    switch (mode) {
      case 0: {
        unsigned sel = (c >> (4 * k)) & 0xf;
        byte = byte_at(src, sel);
        if (sel & 8) byte = (byte & 0x80) ? 0xff : 0;
        break;
      }
      case 1:
        byte = byte_at(src, n + k);
        break;
      case 2:
        byte = byte_at(src, n - k);
        break;
      case 3:
        byte = byte_at(src, n);
        break;
      case 4:
        byte = byte_at(src, std::max(k, n));
        break;
      case 5:
        byte = byte_at(src, std::min(k, n));
        break;
      default:
        byte = byte_at(src, (n & 1) * 2 + (k & 1));
        break;
    }
    r |= byte << (8 * k);
  }
  return r;
}

uint32_t bmsk(uint32_t a, uint32_t b, bool clamp) {
  uint32_t a1 = a & 0x1f, b1 = b & 0x1f, sum = a1 + b1;
  uint32_t mask0 = ~0u << a1, mask1 = sum >= 32 ? 0 : ~0u << sum;
  bool overflow = sum >= 32;
  if (clamp) {
    if (a >= 32) mask0 = 0, overflow = true;
    if (b >= 32) overflow = true;
  }
  if (overflow)
    mask1 = 0;
  else if (b1 == 0)
    mask1 = ~0u;
  return mask0 & ~mask1;
}

uint32_t szext(uint32_t a, uint32_t b, bool clamp, bool is_signed) {
  uint32_t b1 = b & 0x1f;
  bool too_large = b >= 32 && clamp;
  uint32_t mask = too_large ? 0 : ~0u << b1;
  uint32_t sign_pos = (b1 - 1) & 0x1f;
  bool sign = !(b1 == 0 || too_large || !is_signed) && ((a >> sign_pos) & 1);
  return (a & ~mask) | (sign ? mask : 0);
}

uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut) {
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i) {
    unsigned idx = ((a >> i & 1) << 2) | ((b >> i & 1) << 1) | (c >> i & 1);
    r |= ((lut >> idx) & 1) << i;
  }
  return r;
}

uint32_t bfind(uint32_t a, bool is_signed, bool shiftamt) {
  if (is_signed && (a >> 31)) a = ~a;
  uint32_t d = ~0u;
  for (int i = 31; i >= 0; --i)
    if (a >> i & 1) {
      d = (uint32_t)i;
      break;
    }
  if (shiftamt && d != ~0u) d = 31 - d;
  return d;
}

uint32_t fns(uint32_t mask, uint32_t base, int offset) {
  if (offset == 0) return (mask >> base & 1) ? base : ~0u;
  int pos = (int)base, count = std::abs(offset) - 1, inc = offset > 0 ? 1 : -1;
  while (pos >= 0 && pos < 32) {
    if (mask >> pos & 1) {
      if (count == 0) return (uint32_t)pos;
      --count;
    }
    pos += inc;
  }
  return ~0u;
}

std::vector<uint32_t> bit_ref(uint32_t x, uint32_t y, uint32_t z) {
  uint64_t wide = (uint64_t)y << 32 | x;
  uint32_t nl = std::min(z, 32u), nr = z & 31;
  std::vector<uint32_t> r;
  for (int mode = 0; mode < 7; ++mode) r.push_back(prmt(x, y, z, mode));
  r.push_back(bmsk(x, z & 63, true));
  r.push_back(bmsk(x, y, false));
  r.push_back(szext(x, y, true, true));
  r.push_back(szext(x, y, false, true));
  r.push_back(szext(x, y, true, false));
  r.push_back(szext(x, y, false, false));
  for (uint32_t lut : {0x96u, 0xe8u, 0xcau, 0x1eu}) r.push_back(lop3(x, y, z, lut));
  r.push_back((uint32_t)((wide << nl) >> 32));
  r.push_back((uint32_t)(wide >> nr));
  r.push_back(z >= 32 ? 0 : x << z);
  r.push_back(z >= 32 ? ((int32_t)x < 0 ? ~0u : 0) : (uint32_t)((int32_t)x >> z));
  r.push_back(bfind(x, false, false));
  r.push_back(bfind(x, true, true));
  r.push_back(fns(x, y & 31, (int32_t)(z << 26) >> 26));
  return r;
}

}  // namespace

CONF_TEST(KernelAsmBitOpsMatchTheIsaModels) {
  const int n = 1024;
  kt::Rng rng(801);
  std::vector<uint32_t> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = i % 3 == 0 ? rng.u32() % 40 : rng.u32();
    b[i] = i % 3 == 1 ? rng.u32() % 40 : rng.u32();
    c[i] = i % 2 == 0 ? rng.u32() % 70 : rng.u32();
  }
  a[0] = 0, a[1] = ~0u, a[2] = 0x80000000u, a[3] = 1;
  std::vector<std::vector<uint32_t>> per(n);
  for (int i = 0; i < n; ++i) per[i] = bit_ref(a[i], b[i], c[i]);
  const size_t nops = per[0].size();
  std::vector<uint32_t> want(nops * n);
  for (int i = 0; i < n; ++i)
    for (size_t k = 0; k < nops; ++k) want[k * n + i] = per[i][k];
  kt::for_each_variant("asm", [&](kt::Module& m) {
    kt::Buf<uint32_t> da(a), db(b), dc(c), out(nops * n);
    kt::run(m.fn("bit_asm"), {n / 256}, {256}, 0, da.p, db.p, dc.p, out.p, n);
    kt::Checker ck("bit_asm", [&](size_t i) { return kt::hex(a[i]) + "," + kt::hex(b[i]) + "," + kt::hex(c[i]); });
    ck.ops(out.get(), want, n,
           {"prmt",           "prmt.f4e",   "prmt.b4e",      "prmt.rc8",        "prmt.ecl",           "prmt.ecr",
            "prmt.rc16",      "bmsk.clamp", "bmsk.wrap",     "szext.clamp.s32", "szext.wrap.s32",     "szext.clamp.u32",
            "szext.wrap.u32", "lop3 0x96",  "lop3 0xe8",     "lop3 0xca",       "lop3 0x1e",          "shf.l.clamp",
            "shf.r.wrap",     "shl >= 32",  "shr.s32 >= 32", "bfind.u32",       "bfind.shiftamt.s32", "fns"});
    ck.done();
  });
}

CONF_TEST(KernelAsmCarryChainsAndWideMultipliesMatchTheIsaModels) {
  const int n = 512;
  kt::Rng rng(811);
  std::vector<uint64_t> a(n), b(n), want(5 * n);
  for (int i = 0; i < n; ++i) {
    a[i] = rng.u64();
    b[i] = i % 4 == 0 ? ~0ull - (rng.u32() % 4) : rng.u64();
  }
  for (int i = 0; i < n; ++i) {
    uint32_t al = (uint32_t)a[i], bl = (uint32_t)b[i], bh = (uint32_t)(b[i] >> 32);
    want[i] = a[i] + b[i];
    want[n + i] = a[i] * b[i];
    want[2 * n + i] = (uint64_t)al * bh;
    want[3 * n + i] = (uint64_t)((int64_t)(int32_t)al * (int32_t)bl) + b[i];
    want[4 * n + i] = a[i] - b[i];
  }
  kt::for_each_variant("asm", [&](kt::Module& m) {
    kt::Buf<uint64_t> da(a), db(b), out(5 * n);
    kt::run(m.fn("carry_chain"), {n / 128}, {128}, 0, da.p, db.p, out.p, n);
    kt::Checker ck("carry_chain", [&](size_t i) { return kt::hex(a[i]) + "," + kt::hex(b[i]); });
    ck.ops(out.get(), want, n, {"add.cc/addc", "mul.lo/hi + mad", "mul.wide.u32", "mad.wide.s32", "sub.cc/subc"});
    ck.done();
  });
}

CONF_TEST(KernelAsm64BitAtomicsAndReductionsMatchTheIsaModels) {
  const int N = 256;
  const std::vector<uint64_t> init = {100, 12345, 0x500, 7, 0xabcdef00fffffff0ull, ~0ull, 0};
  std::vector<uint64_t> want = init;
  for (uint64_t i = 0; i < (uint64_t)N; ++i) {
    want[0] += i + 1;
    want[2] = std::max<uint64_t>(want[2], i * 0x1000000001ull);
    want[3] += i << 20;
    want[4] = (want[4] & 0xffffffff00000000ull) | (uint32_t)((uint32_t)want[4] + (uint32_t)i);
    want[5] &= ~(1ull << (i % 64));
    want[6] |= 1ull << ((i * 3) % 64);
  }
  kt::for_each_variant("asm", [&](kt::Module& m) {
    kt::Buf<uint64_t> slots(init), olds(N);
    kt::run(m.fn("atom64_asm"), {2}, {128}, 0, slots.p, olds.p);
    std::vector<uint64_t> got = slots.get();
    uint64_t exch_final = got[1];
    got[1] = want[1] = 0;
    kt::Checker ck("atom64_asm");
    ck.ops(got, want, 1,
           {"atom.add.u64", "atom.exch.b64", "atom.cas.b64 max", "red.add.u64", "red.add.u32", "atom.and.b64",
            "red.or.b64"});
    std::vector<uint64_t> ex = olds.get(), ids = {12345};
    ex.push_back(exch_final);
    for (int i = 0; i < N; ++i) ids.push_back((uint64_t)i);
    std::sort(ex.begin(), ex.end());
    std::sort(ids.begin(), ids.end());
    ck.all(ex, ids, "exch chain (sorted)");
    ck.done();
  });
}

CONF_TEST(KernelAsmLdmatrixGivesEachLaneItsFragments) {
  std::vector<uint32_t> want(512, 0);
  for (uint32_t lane = 0; lane < 32; ++lane)
    for (uint32_t k = 0; k < 4; ++k) {
      uint32_t lo = k * 64 + (lane / 4) * 8 + 2 * (lane % 4);
      want[lane * 8 + k] = lo | (lo + 1) << 16;
      uint32_t tlo = k * 64 + (2 * (lane % 4)) * 8 + lane / 4;
      want[256 + lane * 8 + k] = tlo | (tlo + 8) << 16;
      if (k == 0) want[lane * 8 + 4] = want[lane * 8];
    }
  kt::for_each_variant("asm", [&](kt::Module& m) {
    kt::Buf<uint32_t> out(512);
    kt::run(m.fn("ldmatrix_x4"), {1}, {32}, 0, out.p);
    kt::Checker ck("ldmatrix_x4", [](size_t i) {
      return (i >= 256 ? "trans " : "") + std::string("lane ") + std::to_string(i % 256 / 8) + " reg " +
             std::to_string(i % 8);
    });
    ck.all(out.get(), want, "fragments (reg 4: the x1 load)");
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

CONF_TEST(KernelWmma16x16x16MatchesTheHostProduct) {
  kt::Rng rng(821);
  std::vector<int> ai(256), bi(256);
  std::vector<uint16_t> A(256), B(256);
  std::vector<float> C(256), want(256);
  for (int j = 0; j < 256; ++j) {
    ai[j] = rng.range(-3, 3);
    bi[j] = rng.range(-3, 3);
    A[j] = half_of_int(ai[j]);
    B[j] = half_of_int(bi[j]);
    C[j] = (float)rng.range(-50, 50);
  }
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) {
      int acc = 0;
      for (int k = 0; k < 16; ++k) acc += ai[r * 16 + k] * bi[c * 16 + k];  // B is column-major
      want[r * 16 + c] = (float)acc + C[r * 16 + c];
    }
  kt::for_each_variant("asm", [&](kt::Module& m) {
    kt::Buf<uint16_t> dA(A), dB(B);
    kt::Buf<float> dC(C), dD(256);
    kt::run(m.fn("wmma_16x16x16"), {1}, {32}, 0, dA.p, dB.p, dC.p, dD.p);
    kt::Checker ck("wmma_16x16x16",
                   [](size_t i) { return "row " + std::to_string(i / 16) + " col " + std::to_string(i % 16); });
    ck.all(dD.get(), want, "D");
    ck.done();
  });
}

CONF_TEST(KernelAsmSharedAddressesWrapAt32Bits) {
  std::vector<int32_t> want(128);
  for (int t = 0; t < 64; ++t) {
    want[t] = t * 3 + 1;
    want[64 + t] = 2 * ((63 - t) * 3 + 1);
  }
  kt::for_each_variant("asm", [&](kt::Module& m) {
    kt::Buf<int32_t> out(128);
    kt::run(m.fn("asm_shared_address_wraps"), {1}, {64}, 0, out.p);
    kt::Checker ck("asm_shared_address_wraps");
    ck.all(out.get(), want);
    ck.done();
  });
}
