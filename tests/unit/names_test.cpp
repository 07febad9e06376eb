// Kernel names in reports and traces read as their source spells them.
#include <gtest/gtest.h>

#include "symbols/names.h"

namespace cucpu::symbols {
namespace {

TEST(ReadableName, MangledKernelsReadAsTheirSourceAndOthersAsTheyAre) {
  EXPECT_EQ(readable_name("_Z8grid_sumPKiPiS1_i"), "grid_sum(int const*, int*, int*, int)");
  EXPECT_EQ(readable_name("_ZN3cub13reduce_kernelIfLi256EEEvPKT_PS1_i"), "void cub::reduce_kernel<float, 256>(float const*, float*, int)");
  EXPECT_EQ(readable_name("block_reduce"), "block_reduce");  // extern "C"
  EXPECT_EQ(readable_name(""), "");
}

}  // namespace
}  // namespace cucpu::symbols
