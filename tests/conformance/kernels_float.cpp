// Float and double kernels of tests/kernels/float_ops.cu. IEEE-exact
// operations are compared bit for bit (any NaN matches any NaN) against the
// host's arithmetic under the same rounding mode; approximate functions
// against tolerances from the CUDA programming guide's error tables.
#include <cfenv>
#include <climits>
#include <cmath>
#include <limits>

#include "kernels_util.h"

namespace {

const int kModes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};

// Each host op reads its operands through volatiles after switching the
// rounding mode and stores the result through one before switching back, so
// the arithmetic cannot move across the mode change.
template <class T>
T in_mode(int mode, T a, T b, T c, int op) {
  volatile T x = a, y = b, z = c, r;
  std::fesetround(mode);
  switch (op) {
    case 0:
      r = x + y;
      break;
    case 1:
      r = x - y;
      break;
    case 2:
      r = x * y;
      break;
    case 3:
      r = std::fma((T)x, (T)y, (T)z);
      break;
    case 4:
      r = x / y;
      break;
    case 5:
      r = std::sqrt((T)x);
      break;
    default:
      r = T(1) / x;
      break;
  }
  T out = r;
  std::fesetround(FE_TONEAREST);
  return out;
}

template <class T>
std::vector<T> round_ref(T x, T y, T z) {
  std::vector<T> r;
  for (int op = 0; op < 7; ++op)
    for (int m : kModes) r.push_back(in_mode(m, x, y, z, op));
  r.push_back(in_mode(FE_TONEAREST, x, y, z, 4));
  r.push_back(in_mode(FE_TONEAREST, x, y, z, 5));
  r.push_back(in_mode(FE_TONEAREST, x, y, z, 3));
  r.push_back(-x);
  r.push_back(std::fabs(x));
  return r;
}

std::vector<std::string> round_names(const char* suffix) {
  std::vector<std::string> v;
  for (const char* op : {"add", "sub", "mul", "fma", "div", "sqrt", "rcp"})
    for (const char* m : {"_rn", "_rz", "_ru", "_rd"}) v.push_back(std::string(op) + m + suffix);
  for (const char* op : {"div", "sqrt", "fma", "neg", "abs"}) v.push_back(std::string(op) + suffix);
  return v;
}

template <class T>
bool same(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || kt::bits_of(a) == kt::bits_of(b);
}

// Operands: special values paired with each other, then random bit
// patterns, then values of nearby magnitude (where cancellation and
// rounding ties happen).
template <class T, class U>
void make_inputs(int n, uint64_t seed, std::vector<T>& a, std::vector<T>& b, std::vector<T>& c) {
  using L = std::numeric_limits<T>;
  const std::vector<T> sp = {T(0),
                             -T(0),
                             T(1),
                             -T(1),
                             T(0.5),
                             T(3),
                             L::infinity(),
                             -L::infinity(),
                             L::quiet_NaN(),
                             L::denorm_min(),
                             -L::denorm_min(),
                             L::min(),
                             L::max(),
                             -L::max(),
                             L::epsilon(),
                             T(1) + L::epsilon(),
                             T(1e-30),
                             T(7e5)};
  kt::Rng rng(seed);
  a.resize(n);
  b.resize(n);
  c.resize(n);
  const size_t e = sp.size();
  for (int i = 0; i < n; ++i) {
    U ra = (U)rng.u64(), rb = (U)rng.u64(), rc = (U)rng.u64();
    if ((size_t)i < e * e) {
      a[i] = sp[i / e];
      b[i] = sp[i % e];
      c[i] = kt::from_bits<T>(rc);
    } else if (i % 2) {
      a[i] = kt::from_bits<T>(ra);
      b[i] = kt::from_bits<T>(rb);
      c[i] = kt::from_bits<T>(rc);
    } else {
      a[i] = (T)(int)(rng.u32() % 2000000 - 1000000) / T(1024);
      b[i] = a[i] * (T(1) + (T)(int)(rng.u32() % 64 - 32) * L::epsilon()) + T(i % 5);
      c[i] = -a[i] * b[i] * (T(1) + (T)(int)(rng.u32() % 16) * L::epsilon());
    }
  }
}

template <class T, class U>
void check_round(const char* file, const char* kernel, const char* suffix, uint64_t seed) {
  const int n = 2048;
  std::vector<T> a, b, c;
  make_inputs<T, U>(n, seed, a, b, c);
  std::vector<std::vector<T>> per(n);
  for (int i = 0; i < n; ++i) per[i] = round_ref(a[i], b[i], c[i]);
  const size_t nops = per[0].size();
  std::vector<T> want(nops * n);
  for (int i = 0; i < n; ++i)
    for (size_t k = 0; k < nops; ++k) want[k * n + i] = per[i][k];
  kt::for_each_variant(file, [&](kt::Module& m) {
    kt::Buf<T> da(a), db(b), dc(c), out(nops * n);
    kt::run(m.fn(kernel), {n / 256}, {256}, 0, da.p, db.p, dc.p, out.p, n);
    kt::Checker ck(kernel, [&](size_t i) {
      return kt::hex(kt::bits_of(a[i])) + "," + kt::hex(kt::bits_of(b[i])) + "," + kt::hex(kt::bits_of(c[i]));
    });
    ck.ops(out.get(), want, n, round_names(suffix), [](T g, T w, size_t) { return same(g, w); });
    ck.done();
  });
}

}  // namespace

CONF_TEST(KernelF32RoundingModesMatchTheHostBitForBit) { check_round<float, uint32_t>("float_ops", "f32_round", "", 11); }
CONF_TEST(KernelF64RoundingModesMatchTheHostBitForBit) { check_round<double, uint64_t>("float_ops", "f64_round", "", 12); }

namespace {

float saturate(float x) { return std::isnan(x) ? 0.0f : std::fmin(std::fmax(x, 0.0f), 1.0f); }

// fmin/fmax on the device treat a signaling NaN like a quiet one: the other
// operand wins.
template <class T>
T nan_min(T a, T b) {
  return std::isnan(a) ? b : std::isnan(b) ? a : std::fmin(a, b);
}
template <class T>
T nan_max(T a, T b) {
  return std::isnan(a) ? b : std::isnan(b) ? a : std::fmax(a, b);
}

template <class T>
std::vector<T> exact_ref(T x, T y, bool is_float) {
  std::vector<T> r = {nan_min(x, y), nan_max(x, y),     std::copysign(x, y), std::floor(x),  std::ceil(x),
                      std::trunc(x), std::nearbyint(x), std::round(x),       std::fmod(x, y)};
  if (!is_float) return r;
  float fx = (float)x, fy = (float)y;
  r.push_back((T)std::ldexp(fx, (int)(kt::bits_of(fy) % 41) - 20));
  r.push_back((T)saturate(fx));
  r.push_back((T)std::fdim(fx, fy));
  r.push_back((T)(std::isnan(fx) + 2 * std::isinf(fx) + 4 * std::isfinite(fx) + 8 * (std::signbit(fx) != 0)));
  r.push_back((T)((fx < fy) + 2 * (fx <= fy) + 4 * (fx == fy) + 8 * (fx != fy) + 16 * !(fx >= fy) + 32 * !(fx > fy)));
  return r;
}

template <class T, class U>
void check_exact(const char* kernel, uint64_t seed, bool is_float) {
  const int n = 2048;
  std::vector<T> a, b, c;
  make_inputs<T, U>(n, seed, a, b, c);
  for (int i = 0; i < n; i += 7) a[i] = (T)(i % 64 - 32) * T(0.5);  // rounding ties of rint/round
  std::vector<std::vector<T>> per(n);
  for (int i = 0; i < n; ++i) per[i] = exact_ref(a[i], b[i], is_float);
  const size_t nops = per[0].size();
  std::vector<T> want(nops * n);
  for (int i = 0; i < n; ++i)
    for (size_t k = 0; k < nops; ++k) want[k * n + i] = per[i][k];
  const std::vector<std::string> names = {"fmin",  "fmax", "copysign", "floor",    "ceil", "trunc",    "rint",
                                          "round", "fmod", "ldexp",    "saturate", "fdim", "classify", "compare"};
  kt::for_each_variant("float_ops", [&](kt::Module& m) {
    kt::Buf<T> da(a), db(b), out(nops * n);
    kt::run(m.fn(kernel), {n / 256}, {256}, 0, da.p, db.p, out.p, n);
    kt::Checker ck(kernel, [&](size_t i) { return kt::hex(kt::bits_of(a[i])) + "," + kt::hex(kt::bits_of(b[i])); });
    // min, max and saturate may return a zero of either sign for zero inputs.
    ck.ops(out.get(), want, n, names, [](T g, T w, size_t k) {
      if ((k == 0 || k == 1 || k == 10) && g == 0 && w == 0) return true;
      return same(g, w);
    });
    ck.done();
  });
}

}  // namespace

CONF_TEST(KernelF32ExactFunctionsMatchTheHostBitForBit) { check_exact<float, uint32_t>("f32_exact", 21, true); }
CONF_TEST(KernelF64ExactFunctionsMatchTheHostBitForBit) { check_exact<double, uint64_t>("f64_exact", 22, false); }

namespace {

struct Tol {
  const char* name;
  double abs, rel;
  double (*ref)(double x, double y);
};

// Inputs: x in [-4, 4], y in [0.5, 8] (the kernels scale x further).
const Tol kF32Fast[] = {
    {"__expf", 0, 2e-6, [](double x, double) { return std::exp(x); }},
    {"__exp10f", 0, 2e-6, [](double x, double) { return std::pow(10.0, (double)(float)(x * 0.25f)); }},
    {"__logf", 1e-6, 1e-6, [](double, double y) { return std::log(y); }},
    {"__log2f", 1e-6, 1e-6, [](double, double y) { return std::log2(y); }},
    {"__log10f", 1e-6, 1e-6, [](double, double y) { return std::log10(y); }},
    {"__sinf", 1e-6, 0, [](double x, double) { return std::sin((double)(float)(x * 0.75f)); }},
    {"__cosf", 1e-6, 0, [](double x, double) { return std::cos((double)(float)(x * 0.75f)); }},
    {"__tanf", 2e-6, 2e-6, [](double x, double) { return std::tan((double)(float)(x * 0.25f)); }},
    {"__powf", 0, 1e-5, [](double x, double y) { return std::pow(y, (double)(float)(x * 0.5f)); }},
    {"rsqrtf", 0, 1e-6, [](double, double y) { return 1.0 / std::sqrt(y); }},
    {"__fdividef", 0, 1e-6, [](double x, double y) { return x / y; }},
    {"expf", 0, 1e-6, [](double x, double) { return std::exp(x); }},
    {"logf", 1e-7, 1e-6, [](double, double y) { return std::log(y); }},
    {"sinf", 1e-7, 1e-6, [](double x, double) { return std::sin(x); }},
    {"cosf", 1e-7, 1e-6, [](double x, double) { return std::cos(x); }},
    {"exp2f", 0, 1e-6, [](double x, double) { return std::exp2(x); }},
    {"tanhf", 1e-7, 1e-6, [](double x, double) { return std::tanh(x); }},
    {"atan2f", 1e-7, 1e-6, [](double x, double y) { return std::atan2(x, y); }},
    {"cbrtf", 0, 1e-6, [](double, double y) { return std::cbrt(y); }},
    {"powf", 0, 2e-6, [](double x, double y) { return std::pow(y, x); }},
};
const Tol kF64Fast[] = {
    {"exp", 0, 1e-15, [](double x, double) { return std::exp(x); }},
    {"log", 1e-16, 1e-15, [](double, double y) { return std::log(y); }},
    {"sin", 1e-16, 1e-15, [](double x, double) { return std::sin(x); }},
    {"cos", 1e-16, 1e-15, [](double x, double) { return std::cos(x); }},
    {"pow", 0, 1e-15, [](double x, double y) { return std::pow(y, x); }},
    {"rsqrt", 0, 1e-15, [](double, double y) { return 1.0 / std::sqrt(y); }},
};

template <class T, size_t N>
void check_fast(const char* kernel, const Tol (&tols)[N], uint64_t seed) {
  const int n = 1024;
  std::vector<T> a(n), b(n);
  kt::Rng rng(seed);
  for (int i = 0; i < n; ++i) {
    a[i] = (T)(-4.0 + 8.0 * (rng.u32() / 4294967296.0));
    b[i] = (T)(0.5 + 7.5 * (rng.u32() / 4294967296.0));
  }
  kt::for_each_variant("float_ops", [&](kt::Module& m) {
    kt::Buf<T> da(a), db(b), out(N * n);
    kt::run(m.fn(kernel), {n / 256}, {256}, 0, da.p, db.p, out.p, n);
    std::vector<T> got = out.get();
    std::string bad;
    for (size_t k = 0; k < N; ++k) {
      int count = 0;
      for (int i = 0; i < n; ++i) {
        double ref = tols[k].ref(a[i], b[i]), g = got[k * n + i];
        if (std::fabs(g - ref) <= tols[k].abs + tols[k].rel * std::fabs(ref)) continue;
        if (!count++)
          bad += std::string(" [") + tols[k].name + " x=" + std::to_string(a[i]) + " y=" + std::to_string(b[i]) +
                 " got " + std::to_string(g) + " want " + std::to_string(ref);
      }
      if (count) bad += " (" + std::to_string(count) + " elements)]";
    }
    if (!bad.empty()) throw conf::Failure{std::string(kernel) + " outside tolerance:" + bad};
  });
}

}  // namespace

CONF_TEST(KernelF32FastMathStaysWithinTheGuideTolerances) { check_fast<float>("f32_fast", kF32Fast, 31); }
CONF_TEST(KernelF64FunctionsStayWithinTheGuideTolerances) { check_fast<double>("f64_fast", kF64Fast, 32); }

namespace {

// Float -> integer: out-of-range values saturate. NaN gives 0 from float to
// a 32-bit integer and the destination's sign bit alone otherwise
// (0x80000000 from double, 0x8000000000000000 to 64 bits), as the sm_90
// hardware returns.
template <class I>
I to_int(double v, int mode, bool from_float) {
  if (std::isnan(v)) return (from_float && sizeof(I) == 4) ? I(0) : (I)(1ull << (8 * sizeof(I) - 1));
  double r = mode == 0 ? std::nearbyint(v) : mode == 1 ? std::trunc(v) : mode == 2 ? std::ceil(v) : std::floor(v);
  if (r <= (double)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
  if (r >= (double)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
  return (I)r;
}

template <class F>
std::vector<F> cvt_inputs(uint64_t seed) {
  std::vector<F> v = {0.0,
                      -0.0,
                      0.5,
                      1.5,
                      2.5,
                      -0.5,
                      -1.5,
                      -2.5,
                      0.49999997,
                      1e-40,
                      -1e-40,
                      123456.7,
                      -99.99,
                      2147483520.0,
                      2147483648.0,
                      -2147483648.0,
                      -2147483904.0,
                      4294967040.0,
                      4294967296.0,
                      2147483647.5,
                      4294967295.5,
                      -2147483648.5,
                      9.2233715e18,
                      9223372036854775808.0,
                      -9223372036854775808.0,
                      1.8446743e19,
                      18446744073709551616.0,
                      1e20,
                      -1e20,
                      std::numeric_limits<F>::infinity(),
                      -std::numeric_limits<F>::infinity(),
                      std::numeric_limits<F>::quiet_NaN()};
  kt::Rng rng(seed);
  while (v.size() < 1024) {
    double mag = std::ldexp(1.0, rng.range(-4, 66));
    v.push_back((F)(mag * (rng.u32() / 4294967296.0 - 0.5)));
  }
  return v;
}

template <class F>
void check_f2i(const char* kernel, uint64_t seed) {
  std::vector<F> x = cvt_inputs<F>(seed);
  const int n = (int)x.size();
  std::vector<int32_t> wi(4 * n);
  std::vector<uint32_t> wu(4 * n);
  std::vector<int64_t> wll(4 * n);
  std::vector<uint64_t> wull(4 * n);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < n; ++i) {
      const bool f = sizeof(F) == 4;
      wi[k * n + i] = to_int<int32_t>(x[i], k, f);
      wu[k * n + i] = to_int<uint32_t>(x[i], k, f);
      wll[k * n + i] = to_int<int64_t>(x[i], k, f);
      wull[k * n + i] = to_int<uint64_t>(x[i], k, f);
    }
  kt::for_each_variant("float_ops", [&](kt::Module& m) {
    kt::Buf<F> dx(x);
    kt::Buf<int32_t> oi(4 * n);
    kt::Buf<uint32_t> ou(4 * n);
    kt::Buf<int64_t> oll(4 * n);
    kt::Buf<uint64_t> oull(4 * n);
    kt::run(m.fn(kernel), {n / 256}, {256}, 0, dx.p, oi.p, ou.p, oll.p, oull.p, n);
    kt::Checker ck(kernel, [&](size_t i) { return std::to_string((double)x[i]); });
    ck.ops(oi.get(), wi, n, {"int_rn", "int_rz", "int_ru", "int_rd"});
    ck.ops(ou.get(), wu, n, {"uint_rn", "uint_rz", "uint_ru", "uint_rd"});
    ck.ops(oll.get(), wll, n, {"ll_rn", "ll_rz", "ll_ru", "ll_rd"});
    ck.ops(oull.get(), wull, n, {"ull_rn", "ull_rz", "ull_ru", "ull_rd"});
    ck.done();
  });
}

template <class To, class From>
To convert_in_mode(From v, int mode) {
  volatile From x = v;
  std::fesetround(mode);
  volatile To r = (To)x;
  To out = r;
  std::fesetround(FE_TONEAREST);
  return out;
}

}  // namespace

CONF_TEST(KernelFloatToIntRoundsAndSaturates) { check_f2i<float>("cvt_f2i", 41); }
CONF_TEST(KernelDoubleToIntRoundsAndSaturates) { check_f2i<double>("cvt_d2i", 42); }

CONF_TEST(KernelIntToFloatRoundsInEveryModeLikeTheHost) {
  std::vector<int64_t> v = {0,
                            1,
                            -1,
                            (1 << 24) + 1,
                            (1 << 24) + 3,
                            -((1 << 24) + 1),
                            INT32_MAX,
                            INT32_MIN,
                            UINT32_MAX,
                            (1ll << 53) + 1,
                            -((1ll << 53) + 1),
                            INT64_MAX,
                            INT64_MIN,
                            -2,
                            (int64_t)0x8000000000000001ull,
                            (int64_t)0xfffffffffffff801ull,
                            0x7fffff8000000001ll};
  std::vector<double> d = {0.0,
                           -0.0,
                           1.0 / 3,
                           -1.0 / 3,
                           1e39,
                           -1e39,
                           1e-45,
                           1e-46,
                           -1e-46,
                           3.4028235677973366e38,
                           1.401298464324817e-45,
                           0.5 * 1.401298464324817e-45,
                           1e300,
                           std::nan(""),
                           std::numeric_limits<double>::infinity(),
                           1.0000000596046448,
                           1.0000000894069672};
  kt::Rng rng(51);
  while (v.size() < 1024) {
    int kind = (int)(v.size() % 3);
    v.push_back(kind == 0 ? (int64_t)rng.u64() : kind == 1 ? (int64_t)(int32_t)rng.u32() : (int64_t)rng.u32());
  }
  while (d.size() < v.size()) d.push_back(kt::from_bits<double>(rng.u64() >> (d.size() % 2 ? 2 : 1)));
  const int n = (int)v.size();
  std::vector<float> wf(20 * n);
  std::vector<double> wd(11 * n);
  for (int i = 0; i < n; ++i) {
    for (int m = 0; m < 4; ++m) {
      wf[(0 + m) * n + i] = convert_in_mode<float>((int32_t)v[i], kModes[m]);
      wf[(4 + m) * n + i] = convert_in_mode<float>((uint32_t)v[i], kModes[m]);
      wf[(8 + m) * n + i] = convert_in_mode<float>(v[i], kModes[m]);
      wf[(12 + m) * n + i] = convert_in_mode<float>((uint64_t)v[i], kModes[m]);
      wf[(16 + m) * n + i] = convert_in_mode<float>(d[i], kModes[m]);
      wd[(2 + m) * n + i] = convert_in_mode<double>(v[i], kModes[m]);
      wd[(6 + m) * n + i] = convert_in_mode<double>((uint64_t)v[i], kModes[m]);
    }
    wd[0 * n + i] = (double)(int32_t)v[i];
    wd[1 * n + i] = (double)(uint32_t)v[i];
    wd[10 * n + i] = (double)convert_in_mode<float>(d[i], FE_TONEAREST);
  }
  kt::for_each_variant("float_ops", [&](kt::Module& m) {
    kt::Buf<int64_t> dv(v);
    kt::Buf<double> dd(d);
    kt::Buf<float> of(20 * n);
    kt::Buf<double> od(11 * n);
    kt::run(m.fn("cvt_i2f"), {n / 256}, {256}, 0, dv.p, dd.p, of.p, od.p, n);
    kt::Checker ck("cvt_i2f", [&](size_t i) { return kt::hex((uint64_t)v[i]) + " / " + kt::hex(kt::bits_of(d[i])); });
    ck.ops(of.get(), wf, n,
           {"int2float_rn",  "int2float_rz",    "int2float_ru",    "int2float_rd",    "uint2float_rn",
            "uint2float_rz", "uint2float_ru",   "uint2float_rd",   "ll2float_rn",     "ll2float_rz",
            "ll2float_ru",   "ll2float_rd",     "ull2float_rn",    "ull2float_rz",    "ull2float_ru",
            "ull2float_rd",  "double2float_rn", "double2float_rz", "double2float_ru", "double2float_rd"},
           [](float g, float w, size_t) { return same(g, w); });
    ck.ops(od.get(), wd, n,
           {"int2double", "uint2double", "ll2double_rn", "ll2double_rz", "ll2double_ru", "ll2double_rd",
            "ull2double_rn", "ull2double_rz", "ull2double_ru", "ull2double_rd", "double(float)"},
           [](double g, double w, size_t) { return same(g, w); });
    ck.done();
  });
}

// Driver 580 on an H100 (tools/probes/isa_edges_probe.cpp): an f32
// arithmetic result that is NaN has the bits 0x7fffffff, whatever NaN or
// invalid operation made it; a NaN a kernel only moves keeps its payload.
CONF_TEST(KernelF32ArithmeticNaNsAreCanonicalAndMovedNaNsKeepTheirPayload) {
  kt::for_each_variant("float_ops", [&](kt::Module& m) {
    const uint32_t payload = 0x7fc00001u;
    std::vector<float> in(4);
    std::memcpy(&in[0], &payload, 4);
    in[1] = INFINITY;
    in[2] = -1.0f;
    in[3] = 0.0f;
    kt::Buf<float> din(in);
    kt::Buf<uint32_t> out(16);
    kt::Buf<uint64_t> wide(1);
    kt::run(m.fn("nan_bits"), {1}, {2}, 0, din.p, out.p, wide.p);
    const uint32_t c = 0x7fffffffu;
    const std::vector<uint32_t> want = {c, c, c, c, c, payload, c, payload,   // thread 0
                                        c, c, c, c, c, payload, c, c};        // thread 1: its last adds
    kt::Checker ck("nan_bits");
    ck.all(out.get(), want);
    ck.done();
    const uint64_t w = wide.get()[0];
    conf::info_value("nan_widened_to_f64", static_cast<long long>(w));
    EXPECT_TRUE((w >> 63) == 0);  // printf shows "nan", not "-nan"
  });
}
