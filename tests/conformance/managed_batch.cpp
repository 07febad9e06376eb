// CUDA 13's batched prefetch and discard of managed memory, and the 1D
// linear texture width limit, as driver 580 answers them
// (tools/probes/batch_prefetch_probe.cpp).
#include "harness.h"

CONF_TEST(BatchedPrefetchesCheckEveryRangeAndApplyEachLocationFromItsIndex) {
  CUdeviceptr m[3], d;
  for (auto& p : m) ASSERT_CU(cuMemAllocManaged(&p, 1 << 20, CU_MEM_ATTACH_GLOBAL));
  ASSERT_CU(cuMemAlloc(&d, 1 << 20));
  ASSERT_CU(cuMemsetD8(m[0], 0x5a, 1 << 20));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  size_t sizes[3] = {4096, 1 << 20, 8192};
  CUmemLocation locs[2] = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, {CU_MEM_LOCATION_TYPE_HOST, 0}};
  size_t idx[2] = {0, 2};
  ASSERT_CU(cuMemPrefetchBatchAsync(m, sizes, 3, locs, idx, 2, 0, s));
  ASSERT_CU(cuStreamSynchronize(s));
  int where[3] = {-7, -7, -7};
  for (int i = 0; i < 3; ++i)
    ASSERT_CU(cuMemRangeGetAttribute(&where[i], 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m[i], 4096));
  EXPECT_TRUE(where[0] == 0 && where[1] == 0 && where[2] == CU_DEVICE_CPU);
  size_t bad_idx[2] = {1, 2};
  CUdeviceptr mixed[3] = {m[0], d, m[2]};
  size_t zero[3] = {0, 4096, 4096}, big[3] = {(1 << 20) + 1, 4096, 4096};
  CUmemLocation bad_loc[2] = {{CU_MEM_LOCATION_TYPE_DEVICE, 9}, {CU_MEM_LOCATION_TYPE_HOST, 0}};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(m, sizes, 0, locs, idx, 2, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(nullptr, sizes, 3, locs, idx, 2, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(m, nullptr, 3, locs, idx, 2, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(m, sizes, 3, nullptr, idx, 2, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(m, sizes, 3, locs, nullptr, 2, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(m, sizes, 3, locs, idx, 0, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(m, sizes, 3, locs, idx, 2, 1, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(m, sizes, 3, locs, bad_idx, 2, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(mixed, sizes, 3, locs, idx, 2, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(m, zero, 3, locs, idx, 2, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(m, big, 3, locs, idx, 2, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchBatchAsync(m, sizes, 3, bad_loc, idx, 2, 0, s));
  // A discard leaves the bytes as they were (their contents are undefined).
  ASSERT_CU(cuMemDiscardBatchAsync(m, sizes, 3, 0, s));
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemDiscardBatchAsync(m, sizes, 0, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemDiscardBatchAsync(nullptr, sizes, 3, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemDiscardBatchAsync(m, sizes, 3, 1, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemDiscardBatchAsync(mixed, sizes, 3, 0, s));
  ASSERT_CU(cuMemDiscardAndPrefetchBatchAsync(m, sizes, 3, locs, idx, 2, 0, s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemDiscardAndPrefetchBatchAsync(m, sizes, 3, locs, idx, 2, 1, s));
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuStreamDestroy(s));
  for (auto p : m) ASSERT_CU(cuMemFree(p));
  ASSERT_CU(cuMemFree(d));
}

CONF_TEST(Texture1DLinearWidthIsTwoToThe30OrFourGigabytesOfElements) {
  size_t w = 0;
  ASSERT_CU(cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0));
  EXPECT_TRUE(w == size_t{1} << 30);
  ASSERT_CU(cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_HALF, 4, 0));
  EXPECT_TRUE(w == size_t{1} << 29);
  ASSERT_CU(cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, 4, 0));
  EXPECT_TRUE(w == size_t{1} << 28);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetTexture1DLinearMaxWidth(nullptr, CU_AD_FORMAT_FLOAT, 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, 3, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetTexture1DLinearMaxWidth(&w, static_cast<CUarray_format>(0x77), 1, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, 1, 9));
}
