// Overflow-checked arithmetic for sizes, offsets, pitches, extents and
// counts that come from a caller. Every such computation in the runtime
// goes through these helpers: one place, one contract.
//
// Contract:
// - Each checked_* helper computes the exact mathematical result (the
//   compiler builtins work in infinite precision, so operands of mixed
//   unsigned or signed types are fine) and stores it in *out only when it
//   fits *out's type. It returns true when it fits, false on overflow; on
//   false, *out is unspecified and must not be used.
// - The results are [[nodiscard]]: a caller must turn `false` into the
//   error the driver gives for that call (usually CUDA_ERROR_INVALID_VALUE).
// - All helpers are constexpr and free of side effects beyond *out.
//
// Typical use:
//   size_t bytes;
//   if (!checked_mul(n, sizeof(uint32_t), &bytes)) return CUDA_ERROR_INVALID_VALUE;
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace cucpu {

// *out = a + b.
template <class A, class B, class R>
[[nodiscard]] constexpr bool checked_add(A a, B b, R* out) {
  static_assert(std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<R>);
  return !__builtin_add_overflow(a, b, out);
}

// *out = a * b.
template <class A, class B, class R>
[[nodiscard]] constexpr bool checked_mul(A a, B b, R* out) {
  static_assert(std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<R>);
  return !__builtin_mul_overflow(a, b, out);
}

// *out = a - b (for unsigned R: false when b > a).
template <class A, class B, class R>
[[nodiscard]] constexpr bool checked_sub(A a, B b, R* out) {
  static_assert(std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<R>);
  return !__builtin_sub_overflow(a, b, out);
}

// *out = f0 * f1 * ... (false as soon as a partial product overflows; a
// zero factor makes the product 0 only if the factors before it fit).
template <class R, class... F>
[[nodiscard]] constexpr bool checked_product(R* out, F... factors) {
  R acc = 1;
  bool ok = (checked_mul(acc, factors, &acc) && ...);
  if (ok) *out = acc;
  return ok;
}

// *out = t0 + t1 + ...
template <class R, class... T>
[[nodiscard]] constexpr bool checked_sum(R* out, T... terms) {
  R acc = 0;
  bool ok = (checked_add(acc, terms, &acc) && ...);
  if (ok) *out = acc;
  return ok;
}

// a + b, or SIZE_MAX when that overflows (for totals that only steer
// planning, never a bound that is checked).
constexpr size_t saturating_add(size_t a, size_t b) {
  size_t r;
  return checked_add(a, b, &r) ? r : std::numeric_limits<size_t>::max();
}

// Offset of byte x of row y of slice z of a pitched region, rows `pitch`
// bytes apart and slices `slice` bytes apart: z*slice + y*pitch + x.
[[nodiscard]] constexpr bool checked_pitched_offset(size_t x, size_t y, size_t z, size_t pitch, size_t slice,
                                                    size_t* out) {
  size_t zs, yp;
  return checked_mul(z, slice, &zs) && checked_mul(y, pitch, &yp) && checked_sum(out, zs, yp, x);
}

// Bytes spanned by a pitched box of `depth` slices of `height` rows of
// `width` bytes, rows `pitch` apart and slices `slice` apart, starting
// `offset` bytes into a region: one past the box's last byte,
//   offset + (depth-1)*slice + (height-1)*pitch + width.
// An empty box (a zero width, height or depth) touches nothing: *out = offset.
// False when the end does not fit size_t (even when it is exactly 2^64).
// The walk over the box never forms an offset beyond this, so a region
// whose size is at least *out holds every byte the walk touches.
[[nodiscard]] constexpr bool checked_pitched_span(size_t offset, size_t width, size_t height, size_t depth,
                                                  size_t pitch, size_t slice, size_t* out) {
  if (width == 0 || height == 0 || depth == 0) {
    *out = offset;
    return true;
  }
  size_t last;  // offset of the box's last row's first byte
  return checked_pitched_offset(0, height - 1, depth - 1, pitch, slice, &last) &&
         checked_sum(out, offset, last, width);
}

// Whether the byte range [p, p + n) lies within the address space (its end
// does not wrap past the top). An empty range always does.
[[nodiscard]] constexpr bool range_fits(uintptr_t p, size_t n) {
  uintptr_t end;
  return n == 0 || checked_add(p, n - 1, &end);
}

}  // namespace cucpu
