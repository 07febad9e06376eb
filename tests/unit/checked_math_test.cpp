// The overflow-checked arithmetic helpers (src/base/checked_math.h): exact
// results when they fit, false at and past the edge of the result type.
#include "base/checked_math.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace cucpu {
namespace {

constexpr size_t kMax = SIZE_MAX;

// The helpers are usable in constant expressions.
static_assert([] {
  size_t r = 0;
  return checked_add(size_t{2}, size_t{3}, &r) && r == 5;
}());
static_assert([] {
  size_t r = 0;
  return !checked_mul(kMax / 2 + 1, 2, &r);
}());
static_assert(saturating_add(kMax, 1) == kMax);

TEST(CheckedMath, AddSubAndMulFailExactlyWhenTheResultWraps) {
  size_t r = 0;
  EXPECT_TRUE(checked_add(kMax - 1, 1, &r));
  EXPECT_EQ(r, kMax);
  EXPECT_FALSE(checked_add(kMax, 1, &r));
  EXPECT_FALSE(checked_add(kMax - 7, size_t{16}, &r));
  EXPECT_TRUE(checked_mul(kMax / 4, 4, &r));
  EXPECT_EQ(r, kMax - 3);
  EXPECT_FALSE(checked_mul(kMax / 4 + 2, 4, &r));
  EXPECT_FALSE(checked_mul(size_t{1} << 62, 4, &r));
  EXPECT_TRUE(checked_mul(kMax, 0, &r));
  EXPECT_EQ(r, 0u);
  EXPECT_TRUE(checked_sub(size_t{5}, size_t{5}, &r));
  EXPECT_EQ(r, 0u);
  EXPECT_FALSE(checked_sub(size_t{4}, size_t{5}, &r));
  // Mixed operand types are computed exactly, then fitted to the result.
  unsigned u = 0;
  EXPECT_FALSE(checked_mul(size_t{1} << 32, 1u, &u));
  EXPECT_TRUE(checked_add(-1, size_t{1}, &r));
  EXPECT_EQ(r, 0u);
}

TEST(CheckedMath, ProductsAndSumsFailWhenAnyStepWraps) {
  size_t r = 0;
  EXPECT_TRUE(checked_product(&r, size_t{64}, size_t{4}, size_t{4}, 16u));
  EXPECT_EQ(r, 64u * 4 * 4 * 16);
  EXPECT_FALSE(checked_product(&r, size_t{1} << 62, size_t{4}, size_t{4}, 16u));
  EXPECT_FALSE(checked_product(&r, size_t{16}, size_t{1} << 40, size_t{1} << 40));
  EXPECT_FALSE(checked_product(&r, (size_t{1} << 62) + 1, 16u));  // would wrap to 16
  EXPECT_TRUE(checked_product(&r, 7u));
  EXPECT_EQ(r, 7u);
  EXPECT_TRUE(checked_sum(&r, size_t{1}, size_t{2}, size_t{3}));
  EXPECT_EQ(r, 6u);
  EXPECT_FALSE(checked_sum(&r, kMax, size_t{0}, size_t{1}));
  EXPECT_EQ(saturating_add(kMax - 1, 1), kMax);
  EXPECT_EQ(saturating_add(kMax - 1, 2), kMax);
  EXPECT_EQ(saturating_add(3, 4), 7u);
}

TEST(CheckedMath, PitchedOffsetsAndSpansFailWhenTheyWrap) {
  size_t r = 0;
  EXPECT_TRUE(checked_pitched_offset(3, 2, 1, 64, 256, &r));
  EXPECT_EQ(r, 256u + 128 + 3);
  EXPECT_FALSE(checked_pitched_offset(0, size_t{1} << 63, 0, 2, 0, &r));  // y * pitch wraps to 0
  EXPECT_FALSE(checked_pitched_offset(kMax, 1, 0, 1, 0, &r));
  // offset + (depth-1)*slice + (height-1)*pitch + width
  EXPECT_TRUE(checked_pitched_span(10, 16, 3, 2, 64, 1024, &r));
  EXPECT_EQ(r, 10u + 1024 + 128 + 16);
  EXPECT_TRUE(checked_pitched_span(0, 16, 1, 1, kMax, kMax, &r));  // one row: pitches unused
  EXPECT_EQ(r, 16u);
  EXPECT_FALSE(checked_pitched_span(0, 16, 3, 1, size_t{1} << 63, 0, &r));  // 2 * 2^63 wraps to 0
  EXPECT_FALSE(checked_pitched_span(0, 4, 1, 5, 4, size_t{1} << 62, &r));   // 4 * 2^62 wraps to 0
  EXPECT_FALSE(checked_pitched_span(kMax - 7, 16, 1, 1, 0, 0, &r));        // offset + width wraps
  EXPECT_TRUE(checked_pitched_span(kMax - 16, 16, 1, 1, 0, 0, &r));
  EXPECT_EQ(r, kMax);
  EXPECT_FALSE(checked_pitched_span(kMax - 15, 16, 1, 1, 0, 0, &r));  // one past the end must fit too
  EXPECT_TRUE(checked_pitched_span(42, 0, 3, 3, kMax, kMax, &r));  // empty: touches nothing
  EXPECT_EQ(r, 42u);
}

TEST(CheckedMath, RangeFitsOnlyUpToTheEndOfTheAddressSpace) {
  EXPECT_TRUE(range_fits(UINTPTR_MAX, 0));
  EXPECT_TRUE(range_fits(UINTPTR_MAX, 1));
  EXPECT_FALSE(range_fits(UINTPTR_MAX, 2));
  EXPECT_TRUE(range_fits(0x1000, UINTPTR_MAX - 0x1000 + 1));
  EXPECT_FALSE(range_fits(0x1000, UINTPTR_MAX - 0x1000 + 2));
  EXPECT_FALSE(range_fits(0x1000, SIZE_MAX));
}

}  // namespace
}  // namespace cucpu
