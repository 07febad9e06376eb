// The copy planner cuts work into parts that together cover every byte once.
#include <gtest/gtest.h>

#include <vector>

#include "core/copy_ops.h"

namespace cucpu {
namespace {

// Runs the plan into dst and checks it equals a plain copy of each task.
void check_plan(std::vector<CopyTask> tasks, size_t parts, size_t expect_parts_at_least) {
  auto plan = plan_copies(copy_list(tasks), parts);
  EXPECT_GE(plan.size(), expect_parts_at_least);
  EXPECT_LE(plan.size(), parts + 1);
  for (auto& part : plan)
    for (auto& piece : part) run_copy(piece.copy);
}

TEST(CopyPlan, ContiguousCopySplitsEvenly) {
  const size_t n = 8 << 20;
  std::vector<unsigned char> src(n), dst(n, 0);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 13);
  std::vector<CopyTask> t(1);
  t[0].copy = {src.data(), n, n, dst.data(), n, n, n, 1, 1};
  auto plan = plan_copies(copy_list(t), 4);
  ASSERT_EQ(plan.size(), 4u);
  for (auto& part : plan) {
    size_t bytes = 0;
    for (auto& p : part) bytes += p.copy.width * p.copy.height * p.copy.depth;
    EXPECT_EQ(bytes, n / 4);
  }
  check_plan(t, 4, 4);
  EXPECT_EQ(src, dst);
}

TEST(CopyPlan, PitchedBoxKeepsPaddingUntouched) {
  const size_t w = 1000, h = 300, d = 7, sp = 1024, dp = 1100;
  std::vector<unsigned char> src(sp * h * d), dst(dp * h * d, 0xEE);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
  std::vector<CopyTask> t(1);
  t[0].copy = {src.data(), sp, sp * h, dst.data(), dp, dp * h, w, h, d};
  check_plan(t, 3, 3);
  for (size_t z = 0; z < d; ++z)
    for (size_t y = 0; y < h; ++y)
      for (size_t x = 0; x < dp; ++x) {
        unsigned char want = x < w ? src[z * sp * h + y * sp + x] : 0xEE;
        ASSERT_EQ(dst[z * dp * h + y * dp + x], want) << z << "," << y << "," << x;
      }
}

TEST(CopyPlan, SmallWorkStaysInOnePart) {
  std::vector<unsigned char> src(4096, 1), dst(4096, 0);
  std::vector<CopyTask> t(4);
  for (int i = 0; i < 4; ++i) t[i].copy = {src.data() + i * 1024, 1024, 1024, dst.data() + i * 1024, 1024, 1024, 1024, 1, 1};
  auto plan = plan_copies(copy_list(t), 8);
  EXPECT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].size(), 4u);
}

}  // namespace
}  // namespace cucpu

namespace cucpu {
namespace {

TEST(CopyPlan, FindsDependentCopies) {
  std::vector<unsigned char> buf(4096);
  auto task = [&](size_t src, size_t dst, size_t n) {
    CopyTask t;
    t.copy = {buf.data() + src, n, n, buf.data() + dst, n, n, n, 1, 1};
    return t;
  };
  std::vector<CopyTask> independent = {task(0, 1024, 100), task(200, 2048, 100), task(300, 3072, 100)};
  EXPECT_TRUE(find_dependent_copies(copy_list(independent)).empty());  // shared sources are fine
  std::vector<CopyTask> chain = {task(0, 1024, 100), task(1050, 2048, 100), task(3000, 3050, 10)};
  auto pairs = find_dependent_copies(copy_list(chain));
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0], std::make_pair(size_t{0}, size_t{1}));
}

}  // namespace
}  // namespace cucpu
