// Arithmetic with a directed rounding mode (.rz, .rm, .rp), for compiled
// kernels. No floating-point environment is touched: each operation is
// computed to nearest, the sign of its exact error is found with
// error-free transformations (TwoSum, an exact product or remainder), and
// the result is moved one unit in the last place where the mode asks.
#include <cmath>
#include <cstdint>

namespace {

enum : int32_t { kNearest, kTowardZero, kDown, kUp };

// r: the nearest value; dir: the sign of (exact - r).
template <class T>
T directed(T r, double dir, int32_t mode) {
  if (!(dir < 0 || dir > 0) || std::isnan(r)) return r;  // exact (or NaN)
  switch (mode) {
    case kTowardZero:
      if ((r > 0 && dir < 0) || (r < 0 && dir > 0)) return std::nextafter(r, T(0));
      return r;
    case kDown: return dir < 0 ? std::nextafter(r, -INFINITY) : r;
    case kUp: return dir > 0 ? std::nextafter(r, INFINITY) : r;
    default: return r;
  }
}

// The exact error of r = fl(a + b) (TwoSum): 0 when finite and exact.
template <class T>
T sum_error(T a, T b, T r) {
  if (!std::isfinite(r)) return std::isfinite(a) && std::isfinite(b) ? (r > 0 ? T(-1) : T(1)) : T(0);
  const T bb = r - a;
  return (a - (r - bb)) + (b - bb);
}

template <class T>
T add(T a, T b, int32_t m) {
  const T r = a + b;
  // An exact zero is -0 when rounding down, unless both operands are +0.
  if (r == 0 && m == kDown && !(a == 0 && b == 0 && !std::signbit(a) && !std::signbit(b))) return -T(0);
  return directed(r, static_cast<double>(sum_error(a, b, r)), m);
}

// An fma whose exact result is zero, rounded down: -0 unless a*b and c are
// both +0 (IEEE 754).
template <class T>
T down_zero(T a, T b, T c) {
  const bool product_positive_zero = (a == 0 || b == 0) && std::signbit(a) == std::signbit(b);
  return product_positive_zero && c == 0 && !std::signbit(c) ? T(0) : -T(0);
}

}  // namespace

extern "C" {

float cucpu_rt_add_f32(float a, float b, int32_t m) { return add(a, b, m); }
float cucpu_rt_sub_f32(float a, float b, int32_t m) { return add(a, -b, m); }
double cucpu_rt_add_f64(double a, double b, int32_t m) { return add(a, b, m); }
double cucpu_rt_sub_f64(double a, double b, int32_t m) { return add(a, -b, m); }

// f32: products and quotients checked exactly in f64 (24-bit factors).
float cucpu_rt_mul_f32(float a, float b, int32_t m) {
  const float r = a * b;
  if (!std::isfinite(r)) return directed(r, std::isfinite(a) && std::isfinite(b) ? -static_cast<double>(r) : 0.0, m);
  return directed(r, static_cast<double>(a) * b - r, m);
}
float cucpu_rt_div_f32(float a, float b, int32_t m) {
  const float r = a / b;
  if (!std::isfinite(r) || b == 0) return directed(r, std::isfinite(r) || !std::isfinite(a) || b == 0 ? 0.0 : -static_cast<double>(r), m);
  // exact - r has the sign of (a - r*b) / b; r*b is exact in f64.
  const double rem = static_cast<double>(a) - static_cast<double>(r) * b;
  return directed(r, b > 0 ? rem : -rem, m);
}
float cucpu_rt_sqrt_f32(float a, int32_t m) {
  const float r = std::sqrt(a);
  if (!std::isfinite(r) || a <= 0) return r;
  return directed(r, static_cast<double>(a) - static_cast<double>(r) * r, m);
}
float cucpu_rt_fma_f32(float a, float b, float c, int32_t m) {
  const float r = std::fma(a, b, c);
  if (r == 0 && m == kDown && static_cast<double>(a) * b + c == 0) return down_zero(a, b, c);
  if (!std::isfinite(r)) return directed(r, std::isfinite(a) && std::isfinite(b) && std::isfinite(c) ? -static_cast<double>(r) : 0.0, m);
  const double p = static_cast<double>(a) * b;  // exact
  const double s = p + c;
  const double e = sum_error(p, static_cast<double>(c), s);  // exact = s + e
  return directed(r, (s - static_cast<double>(r)) + e, m);
}

// f64: the exact error from fma (exact barring underflow of the error).
// Near the bottom of the range an fma's error may itself underflow: there
// the smaller operand and the result are scaled up (exactly) first.
constexpr double kTiny = 0x1p-900;
constexpr int kScale = 200;

// exact - r for r = fma(a, b, c) (no underflow in the parts): exact =
// p + ep + c, with p + ep = a*b exactly, summed with TwoSum.
static double fma_error(double a, double b, double c, double r) {
  const double p = a * b, ep = std::fma(a, b, -p);
  const double s1 = p + c, e1 = sum_error(p, c, s1);
  const double s2 = e1 + ep, e2 = sum_error(e1, ep, s2);
  return ((s1 - r) + s2) + e2;
}

double cucpu_rt_mul_f64(double a, double b, int32_t m) {
  const double r = a * b;
  if (!std::isfinite(r)) return directed(r, std::isfinite(a) && std::isfinite(b) ? -r : 0.0, m);
  if (r == 0 && a != 0 && b != 0) return directed(r, std::signbit(a) != std::signbit(b) ? -1.0 : 1.0, m);
  if (std::fabs(r) < kTiny && a != 0 && b != 0) {
    double x = a, y = b;
    if (std::fabs(x) < std::fabs(y)) x = std::ldexp(x, kScale);
    else y = std::ldexp(y, kScale);
    return directed(r, std::fma(x, y, -std::ldexp(r, kScale)), m);
  }
  return directed(r, std::fma(a, b, -r), m);
}
double cucpu_rt_div_f64(double a, double b, int32_t m) {
  const double r = a / b;
  if (!std::isfinite(r) || b == 0) return directed(r, std::isfinite(r) || !std::isfinite(a) || b == 0 ? 0.0 : -r, m);
  double rem;
  if (std::fabs(r) < kTiny || std::fabs(a) < kTiny) rem = std::fma(-std::ldexp(r, kScale), b, std::ldexp(a, kScale));
  else rem = std::fma(-r, b, a);
  return directed(r, b > 0 ? rem : -rem, m);
}
double cucpu_rt_sqrt_f64(double a, int32_t m) {
  const double r = std::sqrt(a);
  if (!std::isfinite(r) || a <= 0) return r;
  // a - r*r is exact unless it underflows: below kTiny, both scaled by 2^(2 kScale).
  if (a < kTiny) return directed(r, std::fma(-std::ldexp(r, kScale), std::ldexp(r, kScale), std::ldexp(a, 2 * kScale)), m);
  return directed(r, std::fma(-r, r, a), m);
}
double cucpu_rt_fma_f64(double a, double b, double c, int32_t m) {
  const double r = std::fma(a, b, c);
  if (r == 0 && m == kDown) [[unlikely]] {
    // With a*b nonzero, only a c of the opposite sign cancels it exactly.
    bool exact = c == 0;
    if (a != 0 && b != 0 && c != 0) {
      double x = a, y = b, z = c;
      if (std::fabs(a * b) < kTiny) {  // as below: the error's parts scaled up first
        if (std::fabs(x) < std::fabs(y)) x = std::ldexp(x, kScale);
        else y = std::ldexp(y, kScale);
        z = std::ldexp(c, kScale);
      }
      exact = fma_error(x, y, z, 0.0) == 0;
    } else if (a != 0 && b != 0) {
      exact = false;
    }
    if (exact) return down_zero(a, b, c);
  }
  if (!std::isfinite(r)) return directed(r, std::isfinite(a) && std::isfinite(b) && std::isfinite(c) ? -r : 0.0, m);
  // r == c: the product alone decides (it may be far below c's last place).
  if (r == c) return directed(r, a == 0 || b == 0 ? 0.0 : (std::signbit(a) != std::signbit(b) ? -1.0 : 1.0), m);
  // A product near the bottom of the range loses bits of its error: then the
  // smaller factor, c and r are scaled up (exactly) first.
  if (std::fabs(a * b) < kTiny) {
    double x = a, y = b;
    if (std::fabs(x) < std::fabs(y)) x = std::ldexp(x, kScale);
    else y = std::ldexp(y, kScale);
    return directed(r, fma_error(x, y, std::ldexp(c, kScale), std::ldexp(r, kScale)), m);
  }
  return directed(r, fma_error(a, b, c, r), m);
}

// Integer to float: the nearest value compared with the integer exactly.
float cucpu_rt_i2f_f32(int64_t v, int32_t is_signed, int32_t m) {
  const __int128 x = is_signed ? static_cast<__int128>(v) : static_cast<__int128>(static_cast<uint64_t>(v));
  const float r = is_signed ? static_cast<float>(v) : static_cast<float>(static_cast<uint64_t>(v));
  const __int128 back = static_cast<__int128>(r);
  return directed(r, x > back ? 1.0 : x < back ? -1.0 : 0.0, m);
}
double cucpu_rt_i2f_f64(int64_t v, int32_t is_signed, int32_t m) {
  const __int128 x = is_signed ? static_cast<__int128>(v) : static_cast<__int128>(static_cast<uint64_t>(v));
  const double r = is_signed ? static_cast<double>(v) : static_cast<double>(static_cast<uint64_t>(v));
  const __int128 back = static_cast<__int128>(r);
  return directed(r, x > back ? 1.0 : x < back ? -1.0 : 0.0, m);
}
float cucpu_rt_d2f(double d, int32_t m) {
  const float r = static_cast<float>(d);
  if (std::isinf(r) && std::isfinite(d)) return directed(r, r > 0 ? -1.0 : 1.0, m);
  return directed(r, d - static_cast<double>(r), m);
}

}  // extern "C"
