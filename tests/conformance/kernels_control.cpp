// Control-flow kernels of tests/kernels/control.cu: predicates and selects,
// divergent branches and loops, recursion, many-parameter and indirect
// calls. Each host function below mirrors its kernel line for line.
#include <cmath>

#include "kernels_util.h"

namespace {

std::vector<int32_t> int_inputs(int n, uint64_t seed) {
  kt::Rng rng(seed);
  std::vector<int32_t> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = i % 4 == 0 ? (int32_t)rng.u32() : i % 4 == 1 ? rng.range(-200, 200) : rng.range(0, 5000);
  v[0] = 0;
  v[1] = -1;
  v[2] = INT32_MIN;
  v[3] = INT32_MAX;
  return v;
}

int collatz_steps(unsigned v) {
  int s = 0;
  while (v != 1 && s < 1000) {
    v = (v & 1) ? 3 * v + 1 : v / 2;
    ++s;
  }
  return s;
}

int fib(int v) { return v < 2 ? v : fib(v - 1) + fib(v - 2); }
unsigned long long ackermann_like(unsigned m, unsigned long long v) {
  if (m == 0) return v + 1;
  if (v == 0) return ackermann_like(m - 1, 1);
  return ackermann_like(m - 1, ackermann_like(m, v - 1));
}

}  // namespace

CONF_TEST(KernelPredicatesAndSelectsMatchTheHost) {
  const int n = 1024;
  std::vector<int32_t> a = int_inputs(n, 201);
  std::vector<float> f(n);
  kt::Rng rng(202);
  for (int i = 0; i < n; ++i) f[i] = i % 17 == 0 ? NAN : i % 13 == 0 ? 0.0f : (float)rng.range(-30, 30) * 0.125f;
  const int nops = 7;
  std::vector<int32_t> want(nops * n);
  for (int i = 0; i < n; ++i) {
    int x = a[i];
    unsigned u = (unsigned)x;
    float y = f[i];
    bool p = x & 8, q = x & 16;
    int r[nops] = {x > 0 ? 7 : -3,
                   (x < 100 && x > -100) ? (int)((unsigned)x * 2u) : x / 2,
                   (u > 1000u) + 2 * (x > 1000) + 4 * (u <= 5u) + 8 * (x <= 5),
                   ((x & 1) || (x & 4)) ? 1 : ((x & 2) ? 2 : 3),
                   (y < 1.0f) + 2 * (y >= 1.0f) + 4 * !(y < 1.0f) + 8 * (y != y) + 16 * (y == 0.0f),
                   (int)((unsigned)(x ^ (x >> 31)) - (unsigned)(x >> 31)),
                   (p ^ q) + 2 * (p && !q) + 4 * (p == q)};
    for (int k = 0; k < nops; ++k) want[k * n + i] = r[k];
  }
  kt::for_each_variant("control", [&](kt::Module& m) {
    kt::Buf<int32_t> da(a), out(nops * n);
    kt::Buf<float> df(f);
    kt::run(m.fn("predicates"), {n / 128}, {128}, 0, da.p, df.p, out.p, n);
    kt::Checker ck("predicates", [&](size_t i) { return std::to_string(a[i]) + "," + std::to_string(f[i]); });
    ck.ops(out.get(), want, n, {"select", "range", "compares", "logic", "float compares", "abs", "bools"});
    ck.done();
  });
}

CONF_TEST(KernelDivergentBranchesAndLoopsMatchTheHost) {
  const int n = 1000;  // not a multiple of the block: the tail block exits early
  std::vector<int32_t> a = int_inputs(n, 211);
  std::vector<int32_t> want(3 * n);
  for (int i = 0; i < n; ++i) {
    int x = a[i], tid = i % 128;
    unsigned r = 0;
    if (tid & 1) {
      if (x % 3 == 0)
        r = (unsigned)x * 3u;
      else
        r = 0u - (unsigned)x;
    } else {
      for (int j = 0; j < (x & 15); ++j) r += (unsigned)j * (unsigned)x;
    }
    switch (x & 7) {
      case 0:
        r += 100;
        break;
      case 1:
        r -= 7;
        break;
      case 2:
      case 3:
        r ^= 0x55;
        break;
      case 5:
        r *= 3;
        break;
      case 6:
        r = r << 2;
        break;
      default:
        r += 1;
        break;
    }
    int acc = 0;
    for (int j = 0; j < 64; ++j) {
      if (((x >> (j & 7)) & 1) == 0) continue;
      acc += j;
      if (acc > (x & 255)) break;
    }
    want[i * 3 + 0] = (int)r;
    want[i * 3 + 1] = acc;
    want[i * 3 + 2] = (x & 3) == 3 ? -1 : collatz_steps((unsigned)(x & 0xffff) + 1);
  }
  kt::for_each_variant("control", [&](kt::Module& m) {
    kt::Buf<int32_t> da(a), out(3 * n);
    kt::run(m.fn("divergent"), {(n + 127) / 128}, {128}, 0, da.p, out.p, n);
    kt::Checker ck("divergent",
                   [&](size_t i) { return std::to_string(a[i / 3]) + " (word " + std::to_string(i % 3) + ")"; });
    ck.all(out.get(), want, "per-thread words");
    ck.done();
  });
}

CONF_TEST(KernelRecursionMatchesTheHost) {
  const int n = 256;
  std::vector<int32_t> a(n);
  for (int i = 0; i < n; ++i) a[i] = i * 7 + 3;
  std::vector<int64_t> want(2 * n);
  for (int i = 0; i < n; ++i) {
    want[2 * i] = fib(a[i] % 16);
    want[2 * i + 1] = (int64_t)ackermann_like((unsigned)(a[i] % 3), (unsigned long long)(a[i] % 4));
  }
  kt::for_each_variant("control", [&](kt::Module& m) {
    kt::Buf<int32_t> da(a);
    kt::Buf<int64_t> out(2 * n);
    kt::run(m.fn("recursion"), {n / 64}, {64}, 0, da.p, out.p, n);
    kt::Checker ck("recursion", [&](size_t i) { return std::to_string(a[i / 2]); });
    ck.all(out.get(), want, "fib/ackermann");
    ck.done();
  });
}

CONF_TEST(KernelCallWithManyParametersPassesEachOne) {
  const int n = 256;
  std::vector<int32_t> a(n);
  for (int i = 0; i < n; ++i) a[i] = i * 37 - 4000;
  std::vector<double> want(2 * n);
  for (int i = 0; i < n; ++i) {
    int x = a[i];
    int pa = x * 3;
    double pb = x * 0.5;
    signed char c = (signed char)x;
    short s = (short)(x * 3);
    long long l = (long long)x * 100000;
    float fl = x * 0.25f;
    double d = x * 0.125;
    unsigned char uc = (unsigned char)(x + 200);
    unsigned short us = (unsigned short)(x + 60000);
    // Same association as the device: a left-to-right sum of products.
    volatile double t = c;
    t = t + 2.0 * s;
    t = t + 3.0 * (x * 5);
    t = t + 4.0 * (double)l;
    t = t + 5.0 * fl;
    t = t + 6.0 * d;
    t = t + 7.0 * a[1];
    t = t + 8.0 * pa;
    t = t + 9.0 * pb;
    t = t + 10.0 * uc;
    t = t + 11.0 * us;
    want[2 * i] = t;
    want[2 * i + 1] = pa + pb;
  }
  kt::for_each_variant("control", [&](kt::Module& m) {
    kt::Buf<int32_t> da(a);
    kt::Buf<double> out(2 * n);
    kt::run(m.fn("calls"), {n / 64}, {64}, 0, da.p, out.p, n);
    std::vector<double> got = out.get();
    // Every term is an exact multiple of 1/8 below 2^40, so any evaluation
    // order (and any fma contraction) gives the same double.
    kt::Checker ck("calls", [&](size_t i) { return std::to_string(a[i / 2]); });
    ck.all(got, want, "many_params/make_pair");
    ck.done();
  });
}

CONF_TEST(KernelIndirectCallsReachTheChosenFunction) {
  const int n = 512;
  std::vector<int32_t> a = int_inputs(n, 221);
  std::vector<int32_t> want(n);
  for (int i = 0; i < n; ++i) {
    unsigned x = (unsigned)a[i], y = (unsigned)i;
    unsigned sel = x % 3;
    want[i] = (int)(sel == 0 ? x + y : sel == 1 ? x * y : x - y);
  }
  kt::for_each_variant("control", [&](kt::Module& m) {
    kt::Buf<int32_t> da(a), out(n);
    kt::run(m.fn("indirect_calls"), {n / 128}, {128}, 0, da.p, out.p, n);
    kt::Checker ck("indirect_calls", [&](size_t i) { return std::to_string(a[i]); });
    ck.all(out.get(), want, "op_table[x % 3](x, i)");
    ck.done();
  });
}
