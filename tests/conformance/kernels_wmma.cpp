// Warp matrix products of tests/kernels/wmma.cu, every shape and type:
// integer-valued inputs, so that every product and sum is exact in the
// accumulator's type and D is compared bit for bit with the host's product.
#include <cstdlib>
#include <cstring>

#include "kernels_util.h"

namespace {

enum class Elem { kF16, kBF16, kF32, kF64, kS8, kU8, kS32 };

size_t elem_bytes(Elem e) {
  switch (e) {
    case Elem::kF16: case Elem::kBF16: return 2;
    case Elem::kF32: case Elem::kS32: return 4;
    case Elem::kF64: return 8;
    default: return 1;
  }
}

// The bytes of integer v (|v| < 2048 for halves) as an element of type e.
void put(Elem e, int v, unsigned char* out) {
  switch (e) {
    case Elem::kF16: {
      uint16_t h = 0;
      if (v != 0) {
        const unsigned a = static_cast<unsigned>(std::abs(v));
        const int x = 31 - __builtin_clz(a);
        h = static_cast<uint16_t>((v < 0 ? 0x8000 : 0) | (x + 15) << 10 | ((a << (10 - x)) & 0x3ff));
      }
      std::memcpy(out, &h, 2);
      break;
    }
    case Elem::kBF16: {
      const float f = static_cast<float>(v);
      uint32_t w;
      std::memcpy(&w, &f, 4);
      const uint16_t h = static_cast<uint16_t>(w >> 16);  // exact: small integers need 8 bits
      std::memcpy(out, &h, 2);
      break;
    }
    case Elem::kF32: {
      const float f = static_cast<float>(v);
      std::memcpy(out, &f, 4);
      break;
    }
    case Elem::kF64: {
      const double d = v;
      std::memcpy(out, &d, 8);
      break;
    }
    case Elem::kS32: std::memcpy(out, &v, 4); break;
    default: *out = static_cast<unsigned char>(v); break;
  }
}

struct Product {
  const char* kernel;
  int m, n, k;
  Elem in, acc;
  bool a_row, b_row, d_row;
};

const Product kProducts[] = {
    {"wmma_f16_f32_m32n8k16_rc", 32, 8, 16, Elem::kF16, Elem::kF32, true, false, true},
    {"wmma_f16_f32_m8n32k16_rc", 8, 32, 16, Elem::kF16, Elem::kF32, true, false, true},
    {"wmma_f16_f32_m32n8k16_cr_dc", 32, 8, 16, Elem::kF16, Elem::kF32, false, true, false},
    {"wmma_f16_f16_m16n16k16_rr", 16, 16, 16, Elem::kF16, Elem::kF16, true, true, true},
    {"wmma_f16_f16_m32n8k16_rc", 32, 8, 16, Elem::kF16, Elem::kF16, true, false, true},
    {"wmma_bf16_f32_m16n16k16_rc", 16, 16, 16, Elem::kBF16, Elem::kF32, true, false, true},
    {"wmma_bf16_f32_m32n8k16_rc", 32, 8, 16, Elem::kBF16, Elem::kF32, true, false, true},
    {"wmma_bf16_f32_m8n32k16_cr", 8, 32, 16, Elem::kBF16, Elem::kF32, false, true, true},
    {"wmma_f64_m8n8k4_rc", 8, 8, 4, Elem::kF64, Elem::kF64, true, false, true},
    {"wmma_f64_m8n8k4_cr_dc", 8, 8, 4, Elem::kF64, Elem::kF64, false, true, false},
    {"wmma_s8_m16n16k16_rc", 16, 16, 16, Elem::kS8, Elem::kS32, true, false, true},
    {"wmma_s8_m32n8k16_rc", 32, 8, 16, Elem::kS8, Elem::kS32, true, false, true},
    {"wmma_s8_m8n32k16_rr", 8, 32, 16, Elem::kS8, Elem::kS32, true, true, true},
    {"wmma_u8_m16n16k16_rc", 16, 16, 16, Elem::kU8, Elem::kS32, true, false, true},
    {"wmma_tf32_m16n16k8_rc", 16, 16, 8, Elem::kF32, Elem::kF32, true, false, true},
};

// The range of the inputs: every sum of K products plus C stays exact
// (below 2048 in magnitude for f16 accumulators).
void input_range(Elem e, int* lo, int* hi) {
  switch (e) {
    case Elem::kS8: *lo = -128, *hi = 127; break;
    case Elem::kU8: *lo = 0, *hi = 255; break;
    default: *lo = -3, *hi = 3; break;
  }
}

}  // namespace

CONF_TEST(KernelWmmaEveryShapeAndTypeMatchesTheHostProduct) {
  kt::Module mod("ptx/wmma.sm90.ptx");
  kt::Rng rng(4242);
  for (const Product& p : kProducts) {
    int lo, hi;
    input_range(p.in, &lo, &hi);
    std::vector<int> a(static_cast<size_t>(p.m * p.k)), b(static_cast<size_t>(p.k * p.n)), c(static_cast<size_t>(p.m * p.n));
    for (int& x : a) x = rng.range(lo, hi);
    for (int& x : b) x = rng.range(lo, hi);
    for (int& x : c) x = p.acc == Elem::kS32 ? rng.range(-1000000, 1000000) : rng.range(-40, 40);
    const size_t ib = elem_bytes(p.in), ab = elem_bytes(p.acc);
    std::vector<unsigned char> A(a.size() * ib), B(b.size() * ib), C(c.size() * ab), want(c.size() * ab);
    for (int i = 0; i < p.m; ++i)
      for (int kk = 0; kk < p.k; ++kk)
        put(p.in, a[static_cast<size_t>(i * p.k + kk)], &A[ib * static_cast<size_t>(p.a_row ? i * p.k + kk : kk * p.m + i)]);
    for (int kk = 0; kk < p.k; ++kk)
      for (int j = 0; j < p.n; ++j)
        put(p.in, b[static_cast<size_t>(kk * p.n + j)], &B[ib * static_cast<size_t>(p.b_row ? kk * p.n + j : j * p.k + kk)]);
    for (int i = 0; i < p.m; ++i)
      for (int j = 0; j < p.n; ++j) {
        const size_t at = static_cast<size_t>(p.d_row ? i * p.n + j : j * p.m + i);
        long long acc = c[static_cast<size_t>(i * p.n + j)];
        for (int kk = 0; kk < p.k; ++kk)
          acc += static_cast<long long>(a[static_cast<size_t>(i * p.k + kk)]) * b[static_cast<size_t>(kk * p.n + j)];
        put(p.acc, c[static_cast<size_t>(i * p.n + j)], &C[ab * at]);
        put(p.acc, static_cast<int>(acc), &want[ab * at]);
      }
    kt::Buf<unsigned char> dA(A), dB(B), dC(C), dD(want.size());
    kt::run(mod.fn(p.kernel), {1}, {32}, 0, dA.p, dB.p, dC.p, dD.p);
    const std::vector<unsigned char> got = dD.get();
    for (size_t e = 0; e < c.size(); ++e)
      if (std::memcmp(&got[e * ab], &want[e * ab], ab) != 0)
        throw conf::Failure{std::string(p.kernel) + ": element " + std::to_string(e) + " of D differs"};
  }
}

// Element-wise work on an accumulator fragment between products (every
// element scaled, whatever the layout) and a fill.
CONF_TEST(KernelWmmaFragmentsTakeElementWiseWork) {
  kt::Module mod("ptx/wmma.sm90.ptx");
  kt::Rng rng(77);
  std::vector<int> a(256), b(256);
  std::vector<unsigned char> A(512), B(512);
  for (int i = 0; i < 256; ++i) {
    a[static_cast<size_t>(i)] = rng.range(-3, 3);
    b[static_cast<size_t>(i)] = rng.range(-3, 3);
    put(Elem::kF16, a[static_cast<size_t>(i)], &A[2 * static_cast<size_t>(i)]);
    put(Elem::kF16, b[static_cast<size_t>(i)], &B[2 * static_cast<size_t>(i)]);  // column-major B: (k, n) at n * 16 + k
  }
  kt::Buf<unsigned char> dA(A), dB(B);
  kt::Buf<float> dD(256);
  kt::run(mod.fn("wmma_f16_f32_m16n16k16_scaled"), {1}, {32}, 0, dA.p, dB.p, dD.p, 0.5f);
  const std::vector<float> got = dD.get();
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      int acc = 1;
      for (int kk = 0; kk < 16; ++kk) acc += a[static_cast<size_t>(i * 16 + kk)] * b[static_cast<size_t>(j * 16 + kk)];
      EXPECT_TRUE(got[static_cast<size_t>(i * 16 + j)] == 0.5f * static_cast<float>(acc));
    }
}
