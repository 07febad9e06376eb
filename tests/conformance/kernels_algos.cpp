// Typical kernels (tests/kernels/algos.cu) against host versions. Inputs
// are small integers or multiples of 1/8, so float results are exact in any
// summation order and with or without fma contraction.
#include <algorithm>

#include "kernels_util.h"

namespace {
std::vector<float> small_floats(size_t n, uint64_t seed, int lo, int hi, float scale) {
  kt::Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = (float)rng.range(lo, hi) * scale;
  return v;
}
}  // namespace

CONF_TEST(KernelSaxpyMatchesTheHostLoop) {
  const int n = 100003;
  std::vector<float> x = small_floats(n, 701, -4000, 4000, 0.25f), y = small_floats(n, 702, -1000, 1000, 1.0f);
  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = 2.5f * x[i] + y[i];
  kt::for_each_variant("algos", [&](kt::Module& m) {
    kt::Buf<float> dx(x), dy(y);
    kt::run(m.fn("saxpy"), {(n + 255) / 256}, {256}, 0, 2.5f, dx.p, dy.p, n);
    kt::Checker ck("saxpy");
    ck.all(dy.get(), want, "y");
    ck.done();
  });
}

CONF_TEST(KernelBlockReductionSumsExactly) {
  const int n = (1 << 20) + 37;
  kt::Rng rng(711);
  std::vector<int32_t> in(n);
  long long total = 0;
  for (auto& v : in) total += (v = rng.range(-1000, 1000));
  kt::for_each_variant("algos", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in);
    kt::Buf<int64_t> sum(1);
    kt::run(m.fn("reduce_sum"), {64}, {256}, 0, din.p, n, sum.p);
    kt::Checker ck("reduce_sum");
    ck.all(sum.get(), std::vector<int64_t>{total}, "total");
    ck.done();
  });
}

CONF_TEST(KernelFloatBlockReductionMatchesTheHostMaxAndSum) {
  const int blocks = 16;
  std::vector<float> in = small_floats(blocks * 256, 721, -100, 100, 1.0f), wmax(blocks), wsum(blocks);
  for (int b = 0; b < blocks; ++b) {
    wmax[b] = *std::max_element(in.begin() + b * 256, in.begin() + (b + 1) * 256);
    float s = 0;
    for (int t = 0; t < 256; ++t) s += in[b * 256 + t];
    wsum[b] = s;
  }
  kt::for_each_variant("algos", [&](kt::Module& m) {
    kt::Buf<float> din(in), bmax(blocks), bsum(blocks);
    kt::run(m.fn("reduce_float"), {blocks}, {256}, 0, din.p, bmax.p, bsum.p);
    kt::Checker ck("reduce_float");
    ck.all(bmax.get(), wmax, "max");
    ck.all(bsum.get(), wsum, "sum");
    ck.done();
  });
}

CONF_TEST(KernelTiledSgemmMatchesTheHostProduct) {
  const int n = 64;
  std::vector<float> A = small_floats(n * n, 731, -4, 4, 1.0f), B = small_floats(n * n, 732, -4, 4, 1.0f),
                     C = small_floats(n * n, 733, -8, 8, 1.0f), want(n * n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      float acc = 0;
      for (int k = 0; k < n; ++k) acc += A[r * n + k] * B[k * n + c];
      want[r * n + c] = 2.0f * acc - C[r * n + c];
    }
  kt::for_each_variant("algos", [&](kt::Module& m) {
    kt::Buf<float> dA(A), dB(B), dC(C);
    kt::run(m.fn("sgemm_tiled"), {n / 16, n / 16}, {16, 16}, 0, n, 2.0f, dA.p, dB.p, -1.0f, dC.p);
    kt::Checker ck("sgemm_tiled",
                   [](size_t i) { return "row " + std::to_string(i / 64) + " col " + std::to_string(i % 64); });
    ck.all(dC.get(), want, "C");
    ck.done();
  });
}

CONF_TEST(KernelPrefixScanMatchesTheHostScan) {
  const int blocks = 8, n = blocks * 512;
  kt::Rng rng(741);
  std::vector<int32_t> in(n), want(n);
  for (auto& v : in) v = rng.range(-50, 100);
  int s = 0;
  for (int i = 0; i < n; ++i) want[i] = s += in[i];
  kt::for_each_variant("algos", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in), out(n), totals(512), scanned(512), dummy(1);
    kt::run(m.fn("scan_block"), {blocks}, {512}, 0, din.p, out.p, totals.p);
    kt::run(m.fn("scan_block"), {1}, {512}, 0, totals.p, scanned.p, dummy.p);
    kt::run(m.fn("scan_add"), {blocks}, {512}, 0, out.p, scanned.p);
    kt::Checker ck("scan");
    ck.all(out.get(), want, "inclusive scan");
    ck.done();
  });
}

CONF_TEST(KernelPaddedTransposeMovesEveryElement) {
  const int rows = 96, cols = 80;
  std::vector<float> in = small_floats(rows * cols, 751, -100000, 100000, 0.5f), want(rows * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) want[c * rows + r] = in[r * cols + c];
  kt::for_each_variant("algos", [&](kt::Module& m) {
    kt::Buf<float> din(in), out(rows * cols);
    kt::run(m.fn("transpose"), {(cols + 31) / 32, (rows + 31) / 32}, {32, 8}, 0, din.p, out.p, rows, cols);
    kt::Checker ck("transpose");
    ck.all(out.get(), want, "out");
    ck.done();
  });
}

CONF_TEST(KernelStencil2DMatchesTheHostStencil) {
  const int w = 64, h = 48;
  std::vector<float> in = small_floats(w * h, 761, -8, 8, 1.0f), want(w * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float* p = &in[y * w + x];
      want[y * w + x] =
          (x == 0 || y == 0 || x == w - 1 || y == h - 1) ? *p : 0.5f * *p + 0.125f * (p[-w] + p[w] + p[-1] + p[1]);
    }
  kt::for_each_variant("algos", [&](kt::Module& m) {
    kt::Buf<float> din(in), out(w * h);
    kt::run(m.fn("stencil2d"), {w / 16, h / 16}, {16, 16}, 0, din.p, out.p, w, h);
    kt::Checker ck("stencil2d");
    ck.all(out.get(), want, "out");
    ck.done();
  });
}
