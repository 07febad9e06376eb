// Devices and contexts.
#include "harness.h"

CONF_TEST(DeviceQueriesAnswerAndRefuseBadOrdinals) {
  int n = 0;
  ASSERT_CU(cuDeviceGetCount(&n));
  EXPECT_TRUE(n >= 1);
  CUdevice d;
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d, n));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d, -1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGet(nullptr, 0));
  ASSERT_CU(cuDeviceGet(&d, 0));
  char name[64];
  ASSERT_CU(cuDeviceGetName(name, sizeof name, d));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetName(nullptr, 64, d));
  size_t mem = 0;
  ASSERT_CU(cuDeviceTotalMem(&mem, d));
  EXPECT_TRUE(mem > 0);
  CUuuid u;
  ASSERT_CU(cuDeviceGetUuid(&u, d));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetUuid(&u, 99));
}

CONF_TEST(DeviceAttributesReportSm90FeaturesAndRefuseBadQueries) {
  int v = 0;
  ASSERT_CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
  EXPECT_TRUE(v >= 9);
  ASSERT_CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0));
  EXPECT_TRUE(v == 1);
  ASSERT_CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, 0));
  EXPECT_TRUE(v == 1);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 77));
}

CONF_TEST(CreatedContextIsCurrentWithItsOwnIdUntilDestroyed) {
  CUcontext c = nullptr, cur = nullptr;
  ASSERT_CU(cuCtxCreate(&c, nullptr, 0, 0));
  ASSERT_CU(cuCtxGetCurrent(&cur));
  EXPECT_TRUE(cur == c);
  CUdevice d = -1;
  ASSERT_CU(cuCtxGetDevice(&d));
  EXPECT_TRUE(d == 0);
  unsigned long long id1 = 0, id2 = 0;
  ASSERT_CU(cuCtxGetId(c, &id1));
  ASSERT_CU(cuCtxGetId(conf::primary(), &id2));
  EXPECT_TRUE(id1 != id2);
  unsigned ver = 0;
  ASSERT_CU(cuCtxGetApiVersion(c, &ver));
  conf::info("ctx_api_version_is_3020", ver == 3020 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
  ASSERT_CU(cuCtxDestroy(c));
  ASSERT_CU(cuCtxGetCurrent(&cur));
  EXPECT_TRUE(cur != c);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxCreate(nullptr, nullptr, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuCtxCreate(&c, nullptr, 0, 42));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxCreate(&c, nullptr, 0x100, 0));
}

CONF_TEST(DestroyedContextHandleSaysContextIsDestroyed) {
  SKIP_ON_NVIDIA("a destroyed context handle is undefined behaviour on the driver");
  CUcontext c;
  ASSERT_CU(cuCtxCreate(&c, nullptr, 0, 0));
  ASSERT_CU(cuCtxDestroy(c));
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxPushCurrent(c));
  unsigned long long id;
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxGetId(c, &id));
}

CONF_TEST(ContextPopRestoresThePreviousAndPushMakesCurrent) {
  CUcontext a, b, got;
  ASSERT_CU(cuCtxCreate(&a, nullptr, 0, 0));
  ASSERT_CU(cuCtxCreate(&b, nullptr, 0, 0));
  ASSERT_CU(cuCtxPopCurrent(&got));
  EXPECT_TRUE(got == b);
  ASSERT_CU(cuCtxGetCurrent(&got));
  EXPECT_TRUE(got == a);
  ASSERT_CU(cuCtxPushCurrent(b));
  ASSERT_CU(cuCtxGetCurrent(&got));
  EXPECT_TRUE(got == b);
  ASSERT_CU(cuCtxDestroy(b));
  ASSERT_CU(cuCtxDestroy(a));
}

CONF_TEST(CallsWithoutACurrentContextSayInvalidContext) {
  ASSERT_CU(cuCtxSetCurrent(nullptr));
  CUcontext cur = reinterpret_cast<CUcontext>(1);
  ASSERT_CU(cuCtxGetCurrent(&cur));
  EXPECT_TRUE(cur == nullptr);
  CUstream s;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuStreamCreate(&s, 0));
  CUdeviceptr p;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&p, 16));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize());
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuStreamQuery(nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuStreamSynchronize(CU_STREAM_LEGACY));
  int lo, hi;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxGetStreamPriorityRange(&lo, &hi));
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
}

CONF_TEST(StreamPriorityRangeIsZeroToMinusFive) {
  int lo = 99, hi = 99;
  ASSERT_CU(cuCtxGetStreamPriorityRange(&lo, &hi));
  EXPECT_TRUE(lo == 0 && hi == -5);
  ASSERT_CU(cuCtxGetStreamPriorityRange(nullptr, &hi));
  ASSERT_CU(cuCtxGetStreamPriorityRange(&lo, nullptr));
}

CONF_TEST(PrimaryContextIsActiveAndRetainGivesIt) {
  unsigned flags = 99;
  int active = -1;
  ASSERT_CU(cuDevicePrimaryCtxGetState(0, &flags, &active));
  EXPECT_TRUE(active == 1);
  CUcontext p2;
  ASSERT_CU(cuDevicePrimaryCtxRetain(&p2, 0));
  EXPECT_TRUE(p2 == conf::primary());
  ASSERT_CU(cuDevicePrimaryCtxRelease(0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDevicePrimaryCtxGetState(0, nullptr, &active));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDevicePrimaryCtxRetain(&p2, 50));
}

// Peer access: a device is not its own peer; between two devices (cucpu
// with CUCPU_DEVICES=2), enabling is recorded once and disabling undoes it.
CONF_TEST(PeerAccessEnablesOnceAndDisableUndoesIt) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  int n = 0, v = -1;
  ASSERT_CU(cuDeviceGetCount(&n));
  conf::info("p2p_attribute.same_device", cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 0));
  conf::info("peer_access.same_context", cuCtxEnablePeerAccess(conf::primary(), 0));
  conf::info("peer_disable.never_enabled", cuCtxDisablePeerAccess(conf::primary()));
  if (n < 2) return;
  CUcontext other;
  ASSERT_CU(cuDevicePrimaryCtxRetain(&other, 1));
  int can = 0;
  ASSERT_CU(cuDeviceCanAccessPeer(&can, 0, 1));
  EXPECT_TRUE(can == 1);
  ASSERT_CU(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1));
  EXPECT_TRUE(v == 1);
  ASSERT_CU(cuCtxEnablePeerAccess(other, 0));
  EXPECT_CU(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, cuCtxEnablePeerAccess(other, 0));
  ASSERT_CU(cuCtxDisablePeerAccess(other));
  EXPECT_CU(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, cuCtxDisablePeerAccess(other));
  ASSERT_CU(cuDevicePrimaryCtxRelease(1));
}

// The pre-3.0 property block agrees with the attributes it names (a
// deprecated entry point, still exported and still answered).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
CONF_TEST(DevicePropertiesAgreeWithTheAttributes) {
  CUdevprop p{};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetProperties(nullptr, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetProperties(&p, 99));
  ASSERT_CU(cuDeviceGetProperties(&p, 0));
  int threads = 0, warp = 0, align = 0, grid_y = 0, shared = 0;
  ASSERT_CU(cuDeviceGetAttribute(&threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0));
  ASSERT_CU(cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
  ASSERT_CU(cuDeviceGetAttribute(&align, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 0));
  ASSERT_CU(cuDeviceGetAttribute(&grid_y, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 0));
  ASSERT_CU(cuDeviceGetAttribute(&shared, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 0));
  EXPECT_TRUE(p.maxThreadsPerBlock == threads && p.SIMDWidth == warp && p.textureAlign == align &&
              p.maxGridSize[1] == grid_y && p.sharedMemPerBlock == shared);
  conf::info_value("devprop_clock_rate", p.clockRate);
  conf::info_value("devprop_mem_pitch", p.memPitch);
}
#pragma GCC diagnostic pop
