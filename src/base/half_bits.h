// IEEE half-precision and bfloat16 bits to and from float, by hand (portable: no
// _Float16, which older compilers lack on x86). Round to nearest even;
// NaNs become the quiet NaN of the target format.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace cucpu {

inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);  // zero or subnormal, exact
    std::memcpy(&bits, &v, 4);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// fp8 bits to float: kind 0 is e4m3 (bias 7, no infinity, S.1111.111 is
// NaN), kind 1 is e5m2 (bias 15, IEEE-like).
inline float fp8_to_float(uint8_t v, int kind) {
  const int mbits = kind == 0 ? 3 : 2, bias = kind == 0 ? 7 : 15;
  const bool neg = v & 0x80;
  const int exp = (v & 0x7f) >> mbits, mant = v & ((1 << mbits) - 1);
  if (kind == 0 && (v & 0x7f) == 0x7f) return std::nanf("");
  if (kind == 1 && exp == 31) return mant ? std::nanf("") : (neg ? -INFINITY : INFINITY);
  const float r = exp == 0 ? std::ldexp(static_cast<float>(mant), 1 - bias - mbits)
                           : std::ldexp(static_cast<float>(mant + (1 << mbits)), exp - bias - mbits);
  return neg ? -r : r;
}

inline uint16_t float_to_half_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return sign | 0x7e00u;           // NaN
  if (x >= 0x477ff000u) return sign | 0x7c00u;          // rounds to infinity (65520 and up)
  if (x < 0x38800000u) {                                // below 2^-14: subnormal half or zero
    const float v = std::fabs(f) * 16777216.0f;         // in units of 2^-24, exact
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(v)));
  }
  const uint32_t mant = x & 0x7fffffu;
  uint32_t h = ((((x >> 23) & 0xffu) - 127 + 15) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;  // a carry moves into the exponent correctly
  return static_cast<uint16_t>(sign | h);
}

// bfloat16 bits to and from float (round to nearest even; a NaN stays a
// quiet NaN).
inline float bf16_bits_to_float(uint16_t h) {
  const uint32_t x = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

}  // namespace cucpu
