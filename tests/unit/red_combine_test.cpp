// Which kernels combine their global reductions per worker (red_combine.h):
// those where no plain global access can follow a reduction.
#include <gtest/gtest.h>

#include <string>

#include "ptx/ast.h"
#include "ptx/red_combine.h"

using namespace cucpu::ptx;

namespace {

// One kernel whose body is `body` (registers %r, %rd, %f, %p declared).
bool combines(const std::string& body) {
  const std::string text = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 a, .param .u64 b)
{
  .reg .pred %p<4>;
  .reg .b32 %r<20>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
)" + body + R"(
  ret;
}
)";
  Module m;
  std::string err;
  EXPECT_TRUE(parse_module(text, &m, &err)) << err;
  return combining_kernel(m, {0});
}

TEST(RedCombine, AReductionAfterPlainAccessesCombines) {
  EXPECT_TRUE(combines("ld.global.nc.f32 %f1, [%rd3];\n st.global.f32 [%rd3+4], %f1;\n red.global.add.f32 [%rd4], %f1;"));
}

TEST(RedCombine, AnAtomicWhoseOldValueIsUnusedCombines) {
  EXPECT_TRUE(combines("ld.global.nc.f32 %f1, [%rd3];\n atom.global.add.f32 %f2, [%rd4], %f1;"));
}

TEST(RedCombine, AnAtomicWhoseOldValueIsReadDoesNotCount) {
  EXPECT_FALSE(combines("atom.global.add.u32 %r1, [%rd4], 1;\n st.global.u32 [%rd3], %r1;"));
}

TEST(RedCombine, APlainStoreAfterAReductionPreventsIt) {
  EXPECT_FALSE(combines("red.global.add.u32 [%rd4], 5;\n st.global.u32 [%rd4], 7;"));
}

TEST(RedCombine, APlainLoadAfterAReductionPreventsIt) {
  EXPECT_FALSE(combines("red.global.add.u32 [%rd4], 5;\n ld.global.u32 %r1, [%rd4];\n red.global.add.u32 [%rd3], %r1;"));
}

TEST(RedCombine, AGenericStoreAfterAReductionPreventsIt) {
  EXPECT_FALSE(combines("red.global.add.u32 [%rd4], 5;\n st.u32 [%rd2], 7;"));
}

TEST(RedCombine, APlainAccessReachedThroughALoopPreventsIt) {
  EXPECT_FALSE(combines("mov.u32 %r2, 0;\nLOOP:\n st.global.u32 [%rd3], %r2;\n red.global.add.u32 [%rd4], 1;\n"
                        " add.u32 %r2, %r2, 1;\n setp.lt.u32 %p1, %r2, 4;\n @%p1 bra LOOP;"));
}

TEST(RedCombine, ReleaseAndSystemScopeReductionsAreNotCombined) {
  EXPECT_FALSE(combines("red.release.gpu.global.add.u32 [%rd4], 1;"));
  EXPECT_FALSE(combines("red.sys.global.add.u32 [%rd4], 1;"));
}

TEST(RedCombine, SharedMemoryAccessesAfterAReductionAreFine) {
  EXPECT_TRUE(combines("red.global.add.u32 [%rd4], 1;\n st.shared.u32 [0], 1;\n bar.sync 0;\n ld.shared.u32 %r1, [0];"));
}

}  // namespace
