// Ranges and sizes at the edges: host registrations that overlap or reach
// unmapped pages, and arrays past the device's dimension limits.
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"

// Registrations that overlap one already made, at either end or around it.
CONF_TEST(HostRegisterRefusesRangesOverlappingARegistration) {
  static unsigned char buf[3 * 4096] __attribute__((aligned(4096)));
  ASSERT_CU(cuMemHostRegister(buf + 4096, 4096, 0));
  EXPECT_CU(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(buf, sizeof buf, 0));
  EXPECT_CU(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(buf + 4096, 16, 0));
  EXPECT_CU(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(buf, 4097, 0));
  ASSERT_CU(cuMemHostRegister(buf, 4096, 0));
  ASSERT_CU(cuMemHostUnregister(buf));
  ASSERT_CU(cuMemHostUnregister(buf + 4096));
  EXPECT_CU(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buf + 4096));
}

namespace {
CUresult make_array(size_t w, size_t h, size_t d, unsigned flags) {
  CUDA_ARRAY3D_DESCRIPTOR desc{};
  desc.Width = w;
  desc.Height = h;
  desc.Depth = d;
  desc.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  desc.NumChannels = 1;
  desc.Flags = flags;
  CUarray a = nullptr;
  CUresult r = cuArray3DCreate(&a, &desc);
  if (r == CUDA_SUCCESS) cuArrayDestroy(a);
  return r;
}
}  // namespace

// Arrays past the texture dimension limits the device reports.
CONF_TEST(ArraysPastTheDimensionLimitsAreRefused) {
  EXPECT_CU(CUDA_SUCCESS, make_array(131072, 0, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, make_array(131073, 0, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, make_array(131073, 1, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, make_array(1, 65537, 0, 0));
  EXPECT_CU(CUDA_SUCCESS, make_array(16384, 1, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, make_array(16385, 1, 1, 0));
  EXPECT_CU(CUDA_SUCCESS, make_array(1, 1, 16385, 0));  // the alternate 3D box: 8192 x 8192 x 32768
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, make_array(1, 1, 32769, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, make_array(8193, 1, 16385, 0));
  EXPECT_CU(CUDA_SUCCESS, make_array(16, 16, 2048, CUDA_ARRAY3D_LAYERED));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, make_array(16, 16, 2049, CUDA_ARRAY3D_LAYERED));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, make_array(32769, 0, 1, CUDA_ARRAY3D_LAYERED));
  EXPECT_CU(CUDA_SUCCESS, make_array(16, 16, 6, CUDA_ARRAY3D_CUBEMAP));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, make_array(16, 8, 6, CUDA_ARRAY3D_CUBEMAP));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, make_array(16, 16, 5, CUDA_ARRAY3D_CUBEMAP));
  EXPECT_CU(CUDA_SUCCESS, make_array(16, 16, 12, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED));
}

// A registration whose range reaches an unmapped page.
CONF_TEST(HostRegisterOfARangeReachingUnmappedPagesIsRefused) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_TRUE(p != MAP_FAILED);
  munmap(static_cast<char*>(p) + page, page);
  const CUresult r = cuMemHostRegister(p, 2 * page, 0);
  conf::info("bad_ranges.register_unmapped_tail", r);
  if (r == CUDA_SUCCESS) cuMemHostUnregister(p);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, r);
  ASSERT_CU(cuMemHostRegister(p, page, 0));
  ASSERT_CU(cuMemHostUnregister(p));
  munmap(p, page);
}
