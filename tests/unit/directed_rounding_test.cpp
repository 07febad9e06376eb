// The directed roundings compiled kernels call (devrt/directed_rounding.cpp),
// checked bit for bit against the host's own IEEE 754 arithmetic under
// fesetround, over random operands weighted toward the bottom of the range
// (where an operation's error underflows) and over exact cancellations
// (whose zero is -0 rounding down).
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

extern "C" {
double cucpu_rt_fma_f64(double, double, double, int32_t);
double cucpu_rt_sqrt_f64(double, int32_t);
double cucpu_rt_div_f64(double, double, int32_t);
float cucpu_rt_fma_f32(float, float, float, int32_t);
}

namespace {

constexpr int kModes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};  // PTX's .rn .rz .rm .rp

// A finite double; half of them with exponents near the bottom of the range.
double random_double(std::mt19937_64& g) {
  for (;;) {
    uint64_t bits = g();
    if (g() & 1) bits = (bits & 0x800fffffffffffffull) | uint64_t{g() % 240} << 52;
    double v;
    std::memcpy(&v, &bits, 8);
    if (std::isfinite(v)) return v;
  }
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

// What the host computes under rounding mode m: op() on volatile copies of
// the operands (no folding or moving across fesetround).
template <class Op>
auto under_mode(int m, Op op) {
  std::fesetround(kModes[m]);
  const auto r = op();
  std::fesetround(FE_TONEAREST);
  return r;
}
double host_fma(double a, double b, double c, int m) {
  volatile double x = a, y = b, z = c;
  return under_mode(m, [&] { return std::fma(x, y, z); });
}
double host_sqrt(double a, int m) {
  volatile double x = a;
  return under_mode(m, [&] { return std::sqrt(x); });
}
float host_fma(float a, float b, float c, int m) {
  volatile float x = a, y = b, z = c;
  return under_mode(m, [&] { return std::fma(x, y, z); });
}

TEST(DirectedRounding, SqrtF64OfTinyOperandsRoundsEachWay) {
  std::mt19937_64 g(1);
  int wrong = 0;
  for (int i = 0; i < 200000; ++i) {
    const double a = std::fabs(random_double(g));
    for (int m = 1; m <= 3; ++m) wrong += !same_bits(cucpu_rt_sqrt_f64(a, m), host_sqrt(a, m));
  }
  EXPECT_EQ(wrong, 0);
}

TEST(DirectedRounding, FmaF64WithTinyProductsRoundsEachWay) {
  std::mt19937_64 g(2);
  int wrong = 0;
  for (int i = 0; i < 200000; ++i) {
    const double a = random_double(g), b = random_double(g), c = random_double(g);
    for (int m = 1; m <= 3; ++m) wrong += !same_bits(cucpu_rt_fma_f64(a, b, c, m), host_fma(a, b, c, m));
  }
  EXPECT_EQ(wrong, 0);
}

TEST(DirectedRounding, AnExactZeroRoundedDownIsNegative) {
  const double vals[] = {0.0, -0.0, 1.5, -1.5, 2.0, -3.0, 0x1p-1074, -0x1p-1074, 0x1p-600, 0x1.8p-537, -0x1p-537};
  int wrong = 0;
  for (double a : vals)
    for (double b : vals)
      for (double c : vals)
        for (double cc : {c, -(a * b)})
          for (int m = 1; m <= 3; ++m) {
            wrong += !same_bits(cucpu_rt_fma_f64(a, b, cc, m), host_fma(a, b, cc, m));
            const float fa = static_cast<float>(a), fb = static_cast<float>(b), fc = static_cast<float>(cc);
            wrong += !same_bits(cucpu_rt_fma_f32(fa, fb, fc, m), host_fma(fa, fb, fc, m));
          }
  EXPECT_EQ(wrong, 0);
  EXPECT_TRUE(std::signbit(cucpu_rt_fma_f64(1.5, 2.0, -3.0, 2)));
  EXPECT_FALSE(std::signbit(cucpu_rt_fma_f64(1.5, 2.0, -3.0, 3)));
}

}  // namespace
