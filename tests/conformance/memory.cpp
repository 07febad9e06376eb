// Memory: allocation, copies, sets, pointer queries, arrays.
#include <vector>

#include "harness.h"

CONF_TEST(AllocationsAre256ByteAlignedAndFreeNeedsTheBase) {
  CUdeviceptr p = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(&p, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(nullptr, 16));
  ASSERT_CU(cuMemAlloc(&p, 1000));
  EXPECT_TRUE(p % 256 == 0);
  CUdeviceptr base = 0;
  size_t size = 0;
  ASSERT_CU(cuMemGetAddressRange(&base, &size, p + 10));
  EXPECT_TRUE(base == p && size == 1000);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(p + 8));
  ASSERT_CU(cuMemFree(p));
  ASSERT_CU(cuMemFree(0));
  size_t fr = 0, tot = 0;
  ASSERT_CU(cuMemGetInfo(&fr, &tot));
  EXPECT_TRUE(fr <= tot && tot > 0);
}

CONF_TEST(CopiesRoundTripBytesAndRefuseOverruns) {
  CUdeviceptr a, b;
  ASSERT_CU(cuMemAlloc(&a, 4096));
  ASSERT_CU(cuMemAlloc(&b, 4096));
  std::vector<unsigned char> h(4096), o(4096, 0);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<unsigned char>(i * 7);
  ASSERT_CU(cuMemcpyHtoD(a, h.data(), 4096));
  ASSERT_CU(cuMemcpyDtoD(b, a, 4096));
  ASSERT_CU(cuMemcpyDtoH(o.data(), b, 4096));
  EXPECT_TRUE(o == h);
  ASSERT_CU(cuMemcpy(a, b, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(a, h.data(), 4097));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(o.data(), b + 4000, 200));
  ASSERT_CU(cuMemFree(a));
  ASSERT_CU(cuMemFree(b));
}

CONF_TEST(MemsetsWriteLittleEndianElementsAndRefuseBadRanges) {
  CUdeviceptr p;
  ASSERT_CU(cuMemAlloc(&p, 64));
  ASSERT_CU(cuMemsetD32(p, 0xdeadbeef, 16));
  ASSERT_CU(cuMemsetD16(p, 0x1234, 2));
  ASSERT_CU(cuMemsetD8(p + 60, 0x5a, 4));
  unsigned char o[64];
  ASSERT_CU(cuMemcpyDtoH(o, p, 64));
  EXPECT_TRUE(o[0] == 0x34 && o[1] == 0x12 && o[4] == 0xef && o[7] == 0xde && o[63] == 0x5a);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(p + 1, 0, 4));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(p, 0, 65));
  ASSERT_CU(cuMemsetD2D8(p, 16, 1, 8, 4));
  ASSERT_CU(cuMemcpyDtoH(o, p, 64));
  EXPECT_TRUE(o[0] == 1 && o[7] == 1 && o[8] == 0xef && o[16] == 1);
  ASSERT_CU(cuMemFree(p));
}

CONF_TEST(PitchedCopyRoundTripsAndRefusesAPitchBelowTheWidth) {
  CUdeviceptr d;
  size_t pitch = 0;
  ASSERT_CU(cuMemAllocPitch(&d, &pitch, 100, 8, 4));
  EXPECT_TRUE(pitch >= 100);
  std::vector<unsigned char> h(100 * 8), o(100 * 8, 0);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<unsigned char>(i);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = h.data();
  c.srcPitch = 100;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = d;
  c.dstPitch = pitch;
  c.WidthInBytes = 100;
  c.Height = 8;
  ASSERT_CU(cuMemcpy2D(&c));
  CUDA_MEMCPY2D back{};
  back.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  back.srcDevice = d;
  back.srcPitch = pitch;
  back.dstMemoryType = CU_MEMORYTYPE_HOST;
  back.dstHost = o.data();
  back.dstPitch = 100;
  back.WidthInBytes = 100;
  back.Height = 8;
  ASSERT_CU(cuMemcpy2D(&back));
  EXPECT_TRUE(o == h);
  c.srcPitch = 50;  // pitch below width
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(nullptr));
  ASSERT_CU(cuMemFree(d));
}

CONF_TEST(HostAllocMapsToTheDeviceAndRegisteringTwiceIsRefused) {
  void* h = nullptr;
  ASSERT_CU(cuMemHostAlloc(&h, 256, CU_MEMHOSTALLOC_DEVICEMAP));
  CUdeviceptr dp = 0;
  ASSERT_CU(cuMemHostGetDevicePointer(&dp, h, 0));
  EXPECT_TRUE(dp != 0);
  unsigned flags = 0;
  ASSERT_CU(cuMemHostGetFlags(&flags, h));
  EXPECT_TRUE(flags & CU_MEMHOSTALLOC_DEVICEMAP);
  unsigned type = 0;
  ASSERT_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(h)));
  EXPECT_TRUE(type == CU_MEMORYTYPE_HOST);
  ASSERT_CU(cuMemFreeHost(h));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemHostAlloc(&h, 256, 0x80));
  std::vector<char> buf(8192);
  ASSERT_CU(cuMemHostRegister(buf.data(), buf.size(), 0));
  EXPECT_CU(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(buf.data(), buf.size(), 0));
  ASSERT_CU(cuMemHostUnregister(buf.data()));
  EXPECT_CU(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buf.data()));
}

CONF_TEST(PointerAttributesReportTypeContextSizeAndManaged) {
  CUdeviceptr p;
  ASSERT_CU(cuMemAlloc(&p, 512));
  unsigned type = 0;
  ASSERT_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
  EXPECT_TRUE(type == CU_MEMORYTYPE_DEVICE);
  CUcontext c = nullptr;
  ASSERT_CU(cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, p + 5));
  EXPECT_TRUE(c == conf::primary());
  size_t sz = 0;
  ASSERT_CU(cuPointerGetAttribute(&sz, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 5));
  EXPECT_TRUE(sz == 512);
  unsigned managed = 9;
  ASSERT_CU(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
  EXPECT_TRUE(managed == 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttribute(nullptr, CU_POINTER_ATTRIBUTE_CONTEXT, p));
  ASSERT_CU(cuMemFree(p));
  CUdeviceptr m;
  ASSERT_CU(cuMemAllocManaged(&m, 128, CU_MEM_ATTACH_GLOBAL));
  ASSERT_CU(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m));
  EXPECT_TRUE(managed == 1);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAllocManaged(&m, 128, 0));
  ASSERT_CU(cuMemFree(m));
}

CONF_TEST(Array3DRoundTripsDataAndRefusesBadShapes) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  d.Width = 16;
  d.Height = 4;
  d.Depth = 2;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 2;
  CUarray a;
  ASSERT_CU(cuArray3DCreate(&a, &d));
  CUDA_ARRAY3D_DESCRIPTOR got{};
  ASSERT_CU(cuArray3DGetDescriptor(&got, a));
  EXPECT_TRUE(got.Width == 16 && got.Height == 4 && got.Depth == 2 && got.NumChannels == 2);
  std::vector<float> h(16 * 4 * 2 * 2), o(h.size(), 0.f);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i);
  CUDA_MEMCPY3D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = h.data();
  c.srcPitch = 16 * 8;
  c.srcHeight = 4;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = 16 * 8;
  c.Height = 4;
  c.Depth = 2;
  ASSERT_CU(cuMemcpy3D(&c));
  CUDA_MEMCPY3D b{};
  b.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  b.srcArray = a;
  b.dstMemoryType = CU_MEMORYTYPE_HOST;
  b.dstHost = o.data();
  b.dstPitch = 16 * 8;
  b.dstHeight = 4;
  b.WidthInBytes = 16 * 8;
  b.Height = 4;
  b.Depth = 2;
  ASSERT_CU(cuMemcpy3D(&b));
  EXPECT_TRUE(o == h);
  b.Depth = 3;  // beyond the array
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy3D(&b));
  ASSERT_CU(cuArrayDestroy(a));
  d.NumChannels = 3;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuArray3DCreate(&a, &d));
}

// The stream-ordered allocator: a block allocated on a stream is usable by
// work enqueued after it there, and freed in stream order; pools count it.
CONF_TEST(AsyncAllocationsAreUsableInStreamOrderAndCountedByPools) {
  int pools = 0;
  ASSERT_CU(cuDeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0));
  EXPECT_TRUE(pools == 1);
  CUmemoryPool def = nullptr, cur = nullptr;
  ASSERT_CU(cuDeviceGetDefaultMemPool(&def, 0));
  ASSERT_CU(cuDeviceGetMemPool(&cur, 0));
  EXPECT_TRUE(def != nullptr && def == cur);
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  const size_t n = 1 << 20;
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAllocAsync(&p, n, s));
  EXPECT_TRUE(p != 0);
  ASSERT_CU(cuMemsetD8Async(p, 0x5A, n, s));
  std::vector<unsigned char> host(n, 0);
  ASSERT_CU(cuMemcpyDtoHAsync(host.data(), p, n, s));
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(host[0] == 0x5A && host[n - 1] == 0x5A);
  cuuint64_t used = 0;
  ASSERT_CU(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
  EXPECT_TRUE(used >= n);
  ASSERT_CU(cuMemFreeAsync(p, s));
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
  EXPECT_TRUE(used == 0);
  cuuint64_t threshold = 1 << 20;
  ASSERT_CU(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  threshold = 0;
  ASSERT_CU(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  EXPECT_TRUE(threshold == (1 << 20));
  threshold = 0;
  ASSERT_CU(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  ASSERT_CU(cuMemPoolTrimTo(def, 0));
  // A pool of one's own, made current and then destroyed.
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool mine = nullptr;
  ASSERT_CU(cuMemPoolCreate(&mine, &props));
  ASSERT_CU(cuMemAllocFromPoolAsync(&p, 4096, mine, s));
  ASSERT_CU(cuMemsetD32Async(p, 7, 1024, s));
  ASSERT_CU(cuMemFreeAsync(p, s));
  ASSERT_CU(cuDeviceSetMemPool(0, mine));
  ASSERT_CU(cuDeviceGetMemPool(&cur, 0));
  EXPECT_TRUE(cur == mine);
  ASSERT_CU(cuStreamSynchronize(s));
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemAccess_flags access;
  ASSERT_CU(cuMemPoolGetAccess(&access, mine, &loc));
  EXPECT_TRUE(access == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  ASSERT_CU(cuDeviceSetMemPool(0, def));
  // The CUDA 13 location-based forms name the same pools.
  CUmemoryPool by_location = nullptr;
  ASSERT_CU(cuMemGetDefaultMemPool(&by_location, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
  EXPECT_TRUE(by_location == def);
  ASSERT_CU(cuMemGetMemPool(&by_location, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
  EXPECT_TRUE(by_location == def);
  ASSERT_CU(cuMemPoolDestroy(mine));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAllocAsync(nullptr, n, s));
  p = 1;
  EXPECT_CU(CUDA_SUCCESS, cuMemAllocAsync(&p, 0, s));
  conf::info("mempool_alloc_async_size0_gives_null", p == 0 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
  EXPECT_CU(CUDA_SUCCESS, cuMemFreeAsync(0, s));  // freeing NULL does nothing
  conf::info("mempool_destroy_default", cuMemPoolDestroy(def));
  cuuint64_t value = 1;
  conf::info("mempool_set_used_current", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &value));
  conf::info("mempool_set_used_high_nonzero", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &value));
  ASSERT_CU(cuStreamDestroy(s));
}

// The 1D array copies: host, device and array to and from a 1D CUDA array.
CONF_TEST(Array1DCopiesMoveBytesToAndFromEveryKind) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUDA_ARRAY_DESCRIPTOR d{};
  d.Width = 256;
  d.Height = 0;
  d.Format = CU_AD_FORMAT_UNSIGNED_INT8;
  d.NumChannels = 1;
  CUarray a, b;
  ASSERT_CU(cuArrayCreate(&a, &d));
  ASSERT_CU(cuArrayCreate(&b, &d));
  unsigned char in[256], out[256] = {};
  for (int i = 0; i < 256; ++i) in[i] = static_cast<unsigned char>(i * 3);
  ASSERT_CU(cuMemcpyHtoA(a, 0, in, 256));
  ASSERT_CU(cuMemcpyAtoA(b, 16, a, 0, 200));
  CUdeviceptr dev;
  ASSERT_CU(cuMemAlloc(&dev, 256));
  ASSERT_CU(cuMemcpyAtoD(dev, b, 16, 200));
  ASSERT_CU(cuMemcpyDtoH(out, dev, 200));
  EXPECT_TRUE(out[0] == in[0] && out[199] == in[199]);
  ASSERT_CU(cuMemcpyDtoA(a, 100, dev, 50));
  ASSERT_CU(cuMemcpyAtoH(out, a, 100, 50));
  EXPECT_TRUE(out[49] == in[49]);
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuMemcpyHtoAAsync(a, 8, in + 200, 8, s));
  ASSERT_CU(cuMemcpyAtoHAsync(out, a, 8, 8, s));
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(out[0] == in[200] && out[7] == in[207]);
  conf::info("array_copy.past_end", cuMemcpyHtoA(a, 250, in, 16));
  conf::info("array_copy.null_array", cuMemcpyHtoA(nullptr, 0, in, 16));
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuMemFree(dev));
  ASSERT_CU(cuArrayDestroy(a));
  ASSERT_CU(cuArrayDestroy(b));
}
