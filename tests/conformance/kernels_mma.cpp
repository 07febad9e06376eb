// mma.sync of tf32, f64, 8-bit integer and fp8 inputs (tests/kernels/mma.cu):
// the host lays A, B and C out in lanes by the PTX ISA's fragment figures
// (groupID g = lane / 4, threadID_in_group t = lane % 4), reads D back the
// same way, and compares it bit for bit with the host product (integer
// inputs, and fp8 ones of small integers: every sum is exact).
#include <cstring>

#include "kernels_util.h"

namespace {

struct Cell {
  int row, col;
};

enum class Kind { kTF32K8, kTF32K4, kF64, kI8K16, kI8K32, kF8K32 };

// Element i of a lane's A, B or C fragment (in register order, low byte
// first within a register of 8-bit elements).
Cell a_cell(Kind k, int g, int t, int i) {
  switch (k) {
    case Kind::kTF32K8: return {g + 8 * (i & 1), t + 4 * (i >> 1)};
    case Kind::kTF32K4: return {g + 8 * i, t};
    case Kind::kF64: return {g, t};
    case Kind::kI8K16: return {g + 8 * (i >> 2), 4 * t + (i & 3)};
    default: return {g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)};
  }
}
Cell b_cell(Kind k, int g, int t, int i) {
  switch (k) {
    case Kind::kTF32K8: return {t + 4 * i, g};
    case Kind::kTF32K4: case Kind::kF64: return {t, g};
    case Kind::kI8K16: return {4 * t + i, g};
    default: return {4 * t + (i & 3) + 16 * (i >> 2), g};
  }
}
Cell c_cell(Kind k, int g, int t, int i) {
  if (k == Kind::kF64) return {g, 2 * t + i};
  return {g + 8 * (i >> 1), 2 * t + (i & 1)};
}

struct Shape {
  const char* kernel;
  Kind kind;
  int m, n, k;
  int a_elems, b_elems, c_elems;  // per lane
  bool a_signed, b_signed;
  int a_fp8 = -1, b_fp8 = -1;  // fp8 inputs: 0 e4m3, 1 e5m2
};

// Integer v (|v| <= 8, exact in both) as fp8: e4m3 (bias 7, 3 mantissa
// bits) or e5m2 (bias 15, 2 mantissa bits).
uint8_t fp8_of(int v, int kind) {
  if (v == 0) return 0;
  const int mbits = kind == 0 ? 3 : 2, bias = kind == 0 ? 7 : 15;
  int a = v < 0 ? -v : v, e = 0;
  while ((a >> e) > 1) ++e;
  const int mant = ((a << mbits) >> e) & ((1 << mbits) - 1);
  return static_cast<uint8_t>((v < 0 ? 0x80 : 0) | (e + bias) << mbits | mant);
}

// The bits of integer v as an element: a float (tf32 is a float whose low
// 13 bits the tensor core ignores), a double, or a byte.
uint64_t bits_of(Kind k, int v) {
  if (k == Kind::kF64) {
    const double d = v;
    uint64_t b;
    std::memcpy(&b, &d, 8);
    return b;
  }
  if (k == Kind::kTF32K8 || k == Kind::kTF32K4) {
    const float f = static_cast<float>(v);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }
  return static_cast<uint8_t>(v);
}

void run_shape(kt::Module& mod, const Shape& s, kt::Rng& rng) {
  const bool f64 = s.kind == Kind::kF64, integer = s.kind == Kind::kI8K16 || s.kind == Kind::kI8K32;
  const bool fp8 = s.kind == Kind::kF8K32;
  std::vector<int> A(static_cast<size_t>(s.m * s.k)), B(static_cast<size_t>(s.k * s.n)), C(static_cast<size_t>(s.m * s.n));
  for (int& x : A) x = integer ? (s.a_signed ? rng.range(-128, 127) : rng.range(0, 255)) : rng.range(fp8 ? -8 : -4, fp8 ? 8 : 4);
  for (int& x : B) x = integer ? (s.b_signed ? rng.range(-128, 127) : rng.range(0, 255)) : rng.range(fp8 ? -8 : -4, fp8 ? 8 : 4);
  for (int& x : C) x = integer ? rng.range(-100000, 100000) : rng.range(-30, 30);
  // Registers per lane: 32-bit words (8-bit elements four to a word), or doubles.
  const int per_word = integer || fp8 ? 4 : 1;
  auto element = [&](int v, int fp8_kind) -> uint64_t { return fp8 ? fp8_of(v, fp8_kind) : bits_of(s.kind, v); };
  const int a_regs = s.a_elems / per_word, b_regs = s.b_elems / per_word;
  std::vector<uint64_t> ra(static_cast<size_t>(32 * a_regs)), rb(static_cast<size_t>(32 * b_regs));
  std::vector<uint64_t> rc(static_cast<size_t>(32 * s.c_elems));
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    for (int i = 0; i < s.a_elems; ++i) {
      const Cell e = a_cell(s.kind, g, t, i);
      ra[static_cast<size_t>(l * a_regs + i / per_word)] |= element(A[static_cast<size_t>(e.row * s.k + e.col)], s.a_fp8)
                                                           << (8 * (i % per_word));
    }
    for (int i = 0; i < s.b_elems; ++i) {
      const Cell e = b_cell(s.kind, g, t, i);
      rb[static_cast<size_t>(l * b_regs + i / per_word)] |= element(B[static_cast<size_t>(e.row * s.n + e.col)], s.b_fp8)
                                                           << (8 * (i % per_word));
    }
    for (int i = 0; i < s.c_elems; ++i) {
      const Cell e = c_cell(s.kind, g, t, i);
      const int v = C[static_cast<size_t>(e.row * s.n + e.col)];
      rc[static_cast<size_t>(l * s.c_elems + i)] = integer ? static_cast<uint32_t>(v) : bits_of(f64 ? Kind::kF64 : Kind::kTF32K8, v);
    }
  }
  auto narrow = [](const std::vector<uint64_t>& v) {
    std::vector<uint32_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<uint32_t>(v[i]);
    return out;
  };
  std::vector<uint64_t> got(static_cast<size_t>(32 * s.c_elems));
  if (f64) {
    kt::Buf<uint64_t> da(ra), db(rb), dc(rc), dd(got.size());
    kt::run(mod.fn(s.kernel), {1}, {32}, 0, da.p, db.p, dc.p, dd.p);
    got = dd.get();
  } else {
    kt::Buf<uint32_t> da(narrow(ra)), db(narrow(rb)), dc(narrow(rc)), dd(got.size());
    kt::run(mod.fn(s.kernel), {1}, {32}, 0, da.p, db.p, dc.p, dd.p);
    const std::vector<uint32_t> g32 = dd.get();
    for (size_t i = 0; i < g32.size(); ++i) got[i] = g32[i];
  }
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < s.c_elems; ++i) {
      const Cell e = c_cell(s.kind, l / 4, l % 4, i);
      long long acc = C[static_cast<size_t>(e.row * s.n + e.col)];
      for (int kk = 0; kk < s.k; ++kk)
        acc += static_cast<long long>(A[static_cast<size_t>(e.row * s.k + kk)]) * B[static_cast<size_t>(kk * s.n + e.col)];
      const uint64_t want = integer ? static_cast<uint32_t>(static_cast<int>(acc)) : bits_of(f64 ? Kind::kF64 : Kind::kTF32K8, static_cast<int>(acc));
      if (got[static_cast<size_t>(l * s.c_elems + i)] != want)
        throw conf::Failure{std::string(s.kernel) + ": lane " + std::to_string(l) + " element " + std::to_string(i) +
                            " (row " + std::to_string(e.row) + ", col " + std::to_string(e.col) + ") got " +
                            kt::hex(got[static_cast<size_t>(l * s.c_elems + i)]) + ", want " + kt::hex(want)};
    }
}

}  // namespace

CONF_TEST(KernelMmaTf32F64AndIntegerFragmentsFollowTheIsaLayouts) {
  kt::Module mod("ptx/mma.sm90.ptx");
  kt::Rng rng(9001);
  const Shape shapes[] = {
      {"mma_tf32_m16n8k8", Kind::kTF32K8, 16, 8, 8, 4, 2, 4, true, true},
      {"mma_tf32_m16n8k4", Kind::kTF32K4, 16, 8, 4, 2, 1, 4, true, true},
      {"mma_f64_m8n8k4", Kind::kF64, 8, 8, 4, 1, 1, 2, true, true},
      {"mma_s8_m16n8k16", Kind::kI8K16, 16, 8, 16, 8, 4, 4, true, true},
      {"mma_u8_s8_m16n8k32_satfinite", Kind::kI8K32, 16, 8, 32, 16, 8, 4, false, true},
      {"mma_e4m3_m16n8k32", Kind::kF8K32, 16, 8, 32, 16, 8, 4, true, true, 0, 0},
      {"mma_e5m2_e4m3_m16n8k32", Kind::kF8K32, 16, 8, 32, 16, 8, 4, true, true, 1, 0},
  };
  for (const Shape& s : shapes) run_shape(mod, s, rng);
}
