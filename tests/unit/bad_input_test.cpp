// Bad input never crashes: forged and destroyed handles, NULL outputs and
// out-of-range values give an error from every family of entry points.
#include <gtest/gtest.h>
#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "api_context_test.h"

namespace {

template <class T>
T forged() {
  return reinterpret_cast<T>(static_cast<uintptr_t>(0x1234560));
}

class BadInput : public ApiContextTest {};

TEST_F(BadInput, ForgedHandlesGiveAnErrorFromEveryCall) {
  CUstream s = forged<CUstream>();
  CUevent e = forged<CUevent>();
  CUgraph g = forged<CUgraph>();
  CUgraphNode n = forged<CUgraphNode>();
  CUgraphExec x = forged<CUgraphExec>();
  CUarray a = forged<CUarray>();
  unsigned flags;
  int prio;
  EXPECT_NE(cuStreamQuery(s), CUDA_SUCCESS);
  EXPECT_NE(cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_NE(cuStreamGetFlags(s, &flags), CUDA_SUCCESS);
  EXPECT_NE(cuStreamGetPriority(s, &prio), CUDA_SUCCESS);
  EXPECT_NE(cuStreamDestroy(s), CUDA_SUCCESS);
  EXPECT_NE(cuLaunchHostFunc(s, [](void*) {}, nullptr), CUDA_SUCCESS);
  EXPECT_NE(cuStreamWaitEvent(nullptr, e, 0), CUDA_SUCCESS);
  EXPECT_NE(cuEventRecord(e, nullptr), CUDA_SUCCESS);
  EXPECT_NE(cuEventQuery(e), CUDA_SUCCESS);
  EXPECT_NE(cuEventSynchronize(e), CUDA_SUCCESS);
  EXPECT_NE(cuEventDestroy(e), CUDA_SUCCESS);
  float ms;
  EXPECT_NE(cuEventElapsedTime(&ms, e, e), CUDA_SUCCESS);
  EXPECT_NE(cuGraphDestroy(g), CUDA_SUCCESS);
  size_t count = 0;
  EXPECT_NE(cuGraphGetNodes(g, nullptr, &count), CUDA_SUCCESS);
  CUgraphNodeType t;
  EXPECT_NE(cuGraphNodeGetType(n, &t), CUDA_SUCCESS);
  EXPECT_NE(cuGraphDestroyNode(n), CUDA_SUCCESS);
  EXPECT_NE(cuGraphLaunch(x, nullptr), CUDA_SUCCESS);
  EXPECT_NE(cuGraphExecDestroy(x), CUDA_SUCCESS);
  EXPECT_NE(cuArrayDestroy(a), CUDA_SUCCESS);
  CUDA_ARRAY3D_DESCRIPTOR d;
  EXPECT_NE(cuArray3DGetDescriptor(&d, a), CUDA_SUCCESS);
  EXPECT_NE(cuCtxPushCurrent(forged<CUcontext>()), CUDA_SUCCESS);
  CUstreamCaptureStatus st;
  EXPECT_NE(cuStreamIsCapturing(s, &st), CUDA_SUCCESS);
  EXPECT_NE(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
}

TEST_F(BadInput, DestroyedHandlesAreInvalidHandle) {
  CUstream s;
  CUevent e;
  CUgraph g;
  ASSERT_EQ(cuStreamCreate(&s, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuEventCreate(&e, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUgraphNode n;
  ASSERT_EQ(cuGraphAddEmptyNode(&n, g, nullptr, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamDestroy(s), CUDA_SUCCESS);
  ASSERT_EQ(cuEventDestroy(e), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphDestroy(g), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuEventQuery(e), CUDA_ERROR_INVALID_HANDLE);
  CUgraphNodeType t;
  EXPECT_NE(cuGraphNodeGetType(n, &t), CUDA_SUCCESS);  // the node died with its graph
  EXPECT_NE(cuGraphDestroy(g), CUDA_SUCCESS);
}

// A context destroyed while it sits in this thread's stack, whose slot a
// later context then takes: the stale entry stays destroyed when it comes
// back to the top, and never stands for the later context.
TEST_F(BadInput, AStaleCurrentContextNeverBecomesTheContextInItsSlot) {
  CUcontext stale;
  ASSERT_EQ(cuCtxCreate(&stale, nullptr, 0, 0), CUDA_SUCCESS);  // the stack: ctx_, stale
  ASSERT_EQ(cuCtxPushCurrent(ctx_), CUDA_SUCCESS);               // ctx_, stale, ctx_
  ASSERT_EQ(cuCtxDestroy(stale), CUDA_SUCCESS);                  // not the top: it stays below
  // Freed slots are reused oldest first, once enough were freed after them:
  // make and destroy contexts until one takes its place.
  CUcontext later = nullptr;
  for (int i = 0; i < 2 * 4096 + 8 && later != stale; ++i) {
    CUcontext c;
    ASSERT_EQ(cuCtxCreate(&c, nullptr, 0, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxPopCurrent(nullptr), CUDA_SUCCESS);
    if (c == stale) later = c;
    else EXPECT_EQ(cuCtxDestroy(c), CUDA_SUCCESS);
  }
  ASSERT_EQ(later, stale) << "no later context took the destroyed one's slot";
  ASSERT_EQ(cuCtxPopCurrent(nullptr), CUDA_SUCCESS);  // the stale entry is the top again
  CUdeviceptr p;
  EXPECT_EQ(cuMemAlloc(&p, 64), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  CUstream s;
  EXPECT_EQ(cuStreamCreate(&s, 0), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  // The later context, made current by its handle, is itself.
  ASSERT_EQ(cuCtxSetCurrent(later), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&p, 64), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(p), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxDestroy(later), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(ctx_), CUDA_SUCCESS);
}

TEST_F(BadInput, NullOutputsAndOutOfRangeCopiesAreInvalidValue) {
  EXPECT_EQ(cuStreamCreate(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuEventCreate(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphCreate(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemAlloc(nullptr, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpy3D(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpy2DAsync(nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpy3DBatchAsync(1, nullptr, 0, CU_STREAM_PER_THREAD), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuPointerGetAttribute(nullptr, CU_POINTER_ATTRIBUTE_CONTEXT, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamGetCaptureInfo(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphInstantiate(nullptr, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGetProcAddress(nullptr, nullptr, 13000, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  // Copies that reach outside an allocation are refused before they run.
  CUdeviceptr p;
  ASSERT_EQ(cuMemAlloc(&p, 64), CUDA_SUCCESS);
  char host[128];
  EXPECT_EQ(cuMemcpyHtoD(p + 32, host, 64), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemsetD32(p, 0, 17), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyDtoH(host, p + 1000000, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree(p), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyDtoH(host, p, 1), CUDA_ERROR_INVALID_VALUE);  // freed
}

TEST_F(BadInput, StreamOrderedFreesAreCheckedOnce) {
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr p, plain;
  ASSERT_EQ(cuMemAlloc(&plain, 64), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeAsync(plain, s), CUDA_ERROR_INVALID_VALUE);  // not pool memory
  ASSERT_EQ(cuMemAllocAsync(&p, 64, s), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeAsync(p + 8, s), CUDA_ERROR_INVALID_VALUE);  // not a block's base
  ASSERT_EQ(cuMemFreeAsync(p, s), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeAsync(p, s), CUDA_ERROR_INVALID_VALUE);  // its free is enqueued already
  EXPECT_EQ(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
  CUmemoryPool pool;
  ASSERT_EQ(cuDeviceGetDefaultMemPool(&pool, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemPoolGetAttribute(pool, static_cast<CUmemPool_attribute>(999), &p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemAllocFromPoolAsync(&p, 64, reinterpret_cast<CUmemoryPool>(&p), s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuDeviceGetDefaultMemPool(&pool, 7), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(plain), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(s), CUDA_SUCCESS);
}

// Loaded code: forged, null and unloaded module, function, library, kernel
// and linker handles, and null outputs, get errors (never a crash).
TEST_F(BadInput, ForgedNullAndUnloadedCodeHandlesGiveErrors) {
  const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";
  auto fm = forged<CUmodule>();
  auto ff = forged<CUfunction>();
  auto fl = forged<CUlibrary>();
  auto fk = forged<CUkernel>();
  auto fs = forged<CUlinkState>();
  CUfunction f;
  CUdeviceptr d;
  size_t n;
  unsigned u;
  int i;
  const char* name;
  CUmodule m;
  CUkernel k;
  EXPECT_EQ(cuModuleGetFunction(&f, fm, "k"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuModuleGetGlobal(&d, &n, fm, "g"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuModuleGetFunctionCount(&u, fm), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuModuleEnumerateFunctions(&f, 1, fm), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuModuleUnload(fm), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncGetAttribute(&i, CU_FUNC_ATTRIBUTE_NUM_REGS, ff), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncSetAttribute(ff, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncSetCacheConfig(ff, CU_FUNC_CACHE_PREFER_L1), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncGetName(&name, ff), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncGetModule(&m, ff), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncLoad(ff), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLaunchKernel(ff, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&i, ff, 32, 0), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLibraryGetKernel(&k, fl, "k"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLibraryGetModule(&m, fl), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLibraryUnload(fl), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuKernelGetFunction(&f, fk), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuKernelGetName(&name, fk), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuKernelGetAttribute(&i, CU_FUNC_ATTRIBUTE_NUM_REGS, fk, 0), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLinkComplete(fs, reinterpret_cast<void**>(&d), &n), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLinkDestroy(fs), CUDA_ERROR_INVALID_HANDLE);
  // Null outputs.
  ASSERT_EQ(cuModuleLoadData(&m, ptx), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleGetFunction(&f, m, "k"), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleGetFunction(nullptr, m, "k"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuModuleGetFunctionCount(nullptr, m), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuModuleEnumerateFunctions(nullptr, 1, m), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuFuncGetName(nullptr, f), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuFuncIsLoaded(nullptr, f), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuOccupancyMaxPotentialBlockSize(nullptr, &i, f, nullptr, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuOccupancyAvailableDynamicSMemPerBlock(nullptr, f, 1, 32), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLibraryLoadData(nullptr, ptx, nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLinkCreate(0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  // After unload: the module's handles are dead.
  ASSERT_EQ(cuModuleUnload(m), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuModuleGetFunction(&f, m, "k"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncGetAttribute(&i, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_ERROR_INVALID_HANDLE);
  // A handle of one kind passed as another.
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleGetFunction(&f, reinterpret_cast<CUmodule>(s), "k"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLaunchKernel(reinterpret_cast<CUfunction>(s), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr),
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuStreamDestroy(s), CUDA_SUCCESS);
}

TEST_F(BadInput, UnimplementedEntryPointsSayNotSupported) {
  char luid[8];
  unsigned mask = 0;
  EXPECT_EQ(cuDeviceGetLuid(luid, &mask, 0), CUDA_ERROR_NOT_SUPPORTED);
  CUmipmappedArray m;
  CUDA_ARRAY3D_DESCRIPTOR d{};
  EXPECT_EQ(cuMipmappedArrayCreate(&m, &d, 1), CUDA_ERROR_NOT_SUPPORTED);
}

TEST_F(BadInput, TextureAndSurfaceObjectsRefuseNullsAndForeignHandles) {
  CUtexObject t;
  CUsurfObject s;
  CUDA_RESOURCE_DESC rd{};
  CUDA_TEXTURE_DESC td{};
  EXPECT_EQ(cuTexObjectCreate(nullptr, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuTexObjectCreate(&t, &rd, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  rd.resType = CU_RESOURCE_TYPE_ARRAY;
  EXPECT_EQ(cuTexObjectCreate(&t, &rd, &td, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuSurfObjectCreate(&s, &rd), CUDA_ERROR_INVALID_VALUE);
  // A handle of the other kind, a stream's, or a made-up value is no texture.
  CUstream st;
  ASSERT_EQ(cuStreamCreate(&st, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuTexObjectDestroy(reinterpret_cast<uintptr_t>(st)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuSurfObjectDestroy(0x1234), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuTexObjectGetTextureDesc(&td, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamDestroy(st), CUDA_SUCCESS);
}

}  // namespace

// Sizes, offsets, pitches and counts whose arithmetic overflows size_t are
// refused (src/base/checked_math.h), and nothing outside the memory the call
// names is written.
namespace {

constexpr size_t kMax = SIZE_MAX;
constexpr size_t k2e62 = size_t{1} << 62;
constexpr size_t k2e63 = size_t{1} << 63;
constexpr unsigned char kFill = 0xA5;

// A host buffer of `n` bytes inside guard bytes, all filled with kFill.
class Guarded {
 public:
  explicit Guarded(size_t n) : bytes_(n + 2 * kGuard, kFill) {}
  unsigned char* data() { return bytes_.data() + kGuard; }
  // Whether no byte of the buffer or its guards was written.
  bool untouched() const {
    return std::all_of(bytes_.begin(), bytes_.end(), [](unsigned char b) { return b == kFill; });
  }
  bool guards_intact() const {
    return std::all_of(bytes_.begin(), bytes_.begin() + kGuard, [](unsigned char b) { return b == kFill; }) &&
           std::all_of(bytes_.end() - kGuard, bytes_.end(), [](unsigned char b) { return b == kFill; });
  }

 private:
  static constexpr size_t kGuard = 256;
  std::vector<unsigned char> bytes_;
};

// Whether all `n` bytes at device address p read `v`.
bool device_reads(CUdeviceptr p, size_t n, unsigned char v) {
  std::vector<unsigned char> h(n);
  if (cuMemcpyDtoH(h.data(), p, n) != CUDA_SUCCESS) return false;
  return std::all_of(h.begin(), h.end(), [v](unsigned char b) { return b == v; });
}

CUresult create_array3d(size_t w, size_t h, size_t d, CUarray_format f, unsigned channels, CUarray* out) {
  CUDA_ARRAY3D_DESCRIPTOR a{};
  a.Width = w;
  a.Height = h;
  a.Depth = d;
  a.Format = f;
  a.NumChannels = channels;
  return cuArray3DCreate(out, &a);
}

// Creates and at once destroys an array; returns what creation returned.
CUresult try_array3d(size_t w, size_t h, size_t d, CUarray_format f, unsigned channels) {
  CUarray a = nullptr;
  CUresult r = create_array3d(w, h, d, f, channels, &a);
  if (r == CUDA_SUCCESS) cuArrayDestroy(a);
  return r;
}
CUresult try_array2d(size_t w, size_t h, CUarray_format f, unsigned channels) {
  CUDA_ARRAY_DESCRIPTOR a{w, h, f, channels};
  CUarray arr = nullptr;
  CUresult r = cuArrayCreate(&arr, &a);
  if (r == CUDA_SUCCESS) cuArrayDestroy(arr);
  return r;
}

class Overflow : public ApiContextTest {};

// Array dimensions past the texture limits the device reports, including
// every one whose byte size (width * height * depth * element size *
// channels) would not fit size_t, are INVALID_VALUE (driver 580). Within
// them, an array too large for the device's memory is OUT_OF_MEMORY.
TEST_F(Overflow, ArrayByteSizeThatWrapsIsRefused) {
  EXPECT_EQ(try_array3d(k2e62, 4, 4, CU_AD_FORMAT_FLOAT, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(try_array3d(16, size_t{1} << 40, size_t{1} << 40, CU_AD_FORMAT_UNSIGNED_INT8, 1),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(try_array3d(k2e62 + 1, 0, 0, CU_AD_FORMAT_FLOAT, 4), CUDA_ERROR_INVALID_VALUE);  // would wrap to 16 bytes
  EXPECT_EQ(try_array3d(1, 1, k2e62 + 1, CU_AD_FORMAT_FLOAT, 4), CUDA_ERROR_INVALID_VALUE);  // would wrap to 16 bytes
  EXPECT_EQ(try_array2d(k2e62 + 4, 1, CU_AD_FORMAT_FLOAT, 1), CUDA_ERROR_INVALID_VALUE);     // would wrap to 16 bytes
  EXPECT_EQ(try_array2d(kMax / 2, 3, CU_AD_FORMAT_UNSIGNED_INT8, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(try_array2d(131073, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1), CUDA_ERROR_INVALID_VALUE);  // one past the width
  // Within the limits but too large for the device (64 TiB): refused without trying.
  EXPECT_EQ(try_array3d(16384, 16384, 16384, CU_AD_FORMAT_FLOAT, 4), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(try_array3d(64, 4, 4, CU_AD_FORMAT_FLOAT, 4), CUDA_SUCCESS);
}

// Array offsets near SIZE_MAX must not pass the per-axis bounds checks by
// wrapping (x + width, y + height, z + depth).
TEST_F(Overflow, ArrayCopyOffsetsThatWrapAreRefused) {
  CUarray a;
  ASSERT_EQ(create_array3d(64, 4, 4, CU_AD_FORMAT_UNSIGNED_INT8, 1, &a), CUDA_SUCCESS);
  std::vector<unsigned char> init(64 * 4 * 4, 0x11);
  CUDA_MEMCPY3D fill{};
  fill.srcMemoryType = CU_MEMORYTYPE_HOST;
  fill.srcHost = init.data();
  fill.srcPitch = 64;
  fill.srcHeight = 4;
  fill.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  fill.dstArray = a;
  fill.WidthInBytes = 64;
  fill.Height = 4;
  fill.Depth = 4;
  ASSERT_EQ(cuMemcpy3D(&fill), CUDA_SUCCESS);

  Guarded host(1024);
  CUDA_MEMCPY3D in = fill;  // host -> array, one row of 16 bytes
  in.srcHost = host.data();
  in.WidthInBytes = 16;
  in.Height = 1;
  in.Depth = 1;
  CUDA_MEMCPY3D q = in;
  q.dstXInBytes = kMax - 7;  // + 16 wraps to 8
  EXPECT_EQ(cuMemcpy3D(&q), CUDA_ERROR_INVALID_VALUE);
  q = in;
  q.dstY = kMax;  // + 2 rows wraps to 1
  q.Height = 2;
  EXPECT_EQ(cuMemcpy3D(&q), CUDA_ERROR_INVALID_VALUE);
  q = in;
  q.dstZ = kMax;  // + 2 layers wraps to 1
  q.Depth = 2;
  EXPECT_EQ(cuMemcpy3D(&q), CUDA_ERROR_INVALID_VALUE);
  q = in;
  q.dstXInBytes = kMax - 7;
  EXPECT_EQ(cuMemcpy3DAsync(&q, nullptr), CUDA_ERROR_INVALID_VALUE);

  CUDA_MEMCPY2D in2{};  // the 2D form, host -> array
  in2.srcMemoryType = CU_MEMORYTYPE_HOST;
  in2.srcHost = host.data();
  in2.srcPitch = 64;
  in2.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  in2.dstArray = a;
  in2.WidthInBytes = 16;
  in2.Height = 1;
  CUDA_MEMCPY2D q2 = in2;
  q2.dstXInBytes = kMax - 7;
  EXPECT_EQ(cuMemcpy2D(&q2), CUDA_ERROR_INVALID_VALUE);
  q2 = in2;
  q2.dstY = kMax;
  q2.Height = 2;
  EXPECT_EQ(cuMemcpy2D(&q2), CUDA_ERROR_INVALID_VALUE);

  CUDA_MEMCPY3D out{};  // array -> host
  out.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  out.srcArray = a;
  out.dstMemoryType = CU_MEMORYTYPE_HOST;
  out.dstHost = host.data();
  out.dstPitch = 64;
  out.WidthInBytes = 8;
  out.Height = 1;
  out.Depth = 1;
  q = out;
  q.srcXInBytes = kMax - 3;  // + 8 wraps to 4
  EXPECT_EQ(cuMemcpy3D(&q), CUDA_ERROR_INVALID_VALUE);
  q = out;
  q.srcY = kMax;
  q.Height = 3;
  EXPECT_EQ(cuMemcpy3D(&q), CUDA_ERROR_INVALID_VALUE);

  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_TRUE(host.untouched());
  std::vector<unsigned char> back(init.size(), 0);
  CUDA_MEMCPY3D read = fill;
  std::swap(read.srcMemoryType, read.dstMemoryType);
  read.srcArray = a;
  read.dstHost = back.data();
  read.dstPitch = 64;
  read.dstHeight = 4;
  ASSERT_EQ(cuMemcpy3D(&read), CUDA_SUCCESS);
  EXPECT_EQ(back, init);  // the array kept its bytes
  EXPECT_EQ(cuArrayDestroy(a), CUDA_SUCCESS);
}

// Pitches and slice heights whose span wraps (offset + (depth-1)*slice +
// (height-1)*pitch + width) are refused for device and host operands alike.
TEST_F(Overflow, CopyPitchSpansThatWrapAreRefused) {
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(d, 0x22, 4096), CUDA_SUCCESS);
  Guarded host(256);

  CUDA_MEMCPY2D dtoh{};
  dtoh.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  dtoh.srcDevice = d;
  dtoh.srcPitch = 16;
  dtoh.dstMemoryType = CU_MEMORYTYPE_HOST;
  dtoh.dstHost = host.data();
  dtoh.dstPitch = 16;
  dtoh.WidthInBytes = 16;
  dtoh.Height = 3;
  CUDA_MEMCPY2D q = dtoh;
  q.srcPitch = k2e63;  // 2 * pitch wraps to 0
  EXPECT_EQ(cuMemcpy2D(&q), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpy2DAsync(&q, nullptr), CUDA_ERROR_INVALID_VALUE);
  q = dtoh;
  q.dstPitch = k2e63;  // host rows would wrap the address space
  EXPECT_EQ(cuMemcpy2D(&q), CUDA_ERROR_INVALID_VALUE);
  q = dtoh;
  q.dstXInBytes = kMax - 7;  // the host origin would wrap to before the buffer
  q.dstPitch = 0;
  q.Height = 1;
  EXPECT_EQ(cuMemcpy2D(&q), CUDA_ERROR_INVALID_VALUE);
  q = dtoh;
  q.srcY = k2e63;  // the row offset y * pitch wraps
  q.srcPitch = 2;
  q.WidthInBytes = 2;
  EXPECT_EQ(cuMemcpy2D(&q), CUDA_ERROR_INVALID_VALUE);
  CUDA_MEMCPY2D htod = dtoh;
  std::swap(htod.srcMemoryType, htod.dstMemoryType);
  htod.srcHost = host.data();
  htod.dstDevice = d;
  htod.dstPitch = k2e63;
  EXPECT_EQ(cuMemcpy2D(&htod), CUDA_ERROR_INVALID_VALUE);

  CUDA_MEMCPY3D d3{};  // 5 slices of one 4-byte row
  d3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  d3.srcDevice = d;
  d3.srcPitch = 4;
  d3.srcHeight = 1;
  d3.dstMemoryType = CU_MEMORYTYPE_HOST;
  d3.dstHost = host.data();
  d3.dstPitch = 4;
  d3.dstHeight = 1;
  d3.WidthInBytes = 4;
  d3.Height = 1;
  d3.Depth = 5;
  CUDA_MEMCPY3D q3 = d3;
  q3.srcHeight = k2e62;  // the slice pitch 4 * 2^62 wraps to 0
  EXPECT_EQ(cuMemcpy3D(&q3), CUDA_ERROR_INVALID_VALUE);
  q3 = d3;
  q3.dstHeight = k2e62 + 1;  // the host slice pitch wraps to 4
  EXPECT_EQ(cuMemcpy3D(&q3), CUDA_ERROR_INVALID_VALUE);
  q3 = d3;
  q3.srcZ = k2e62;  // z * slice wraps
  EXPECT_EQ(cuMemcpy3D(&q3), CUDA_ERROR_INVALID_VALUE);
  CUDA_MEMCPY3D_PEER peer{};
  peer.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  peer.srcDevice = d;
  peer.srcPitch = k2e63;
  peer.srcContext = ctx_;
  peer.dstMemoryType = CU_MEMORYTYPE_HOST;
  peer.dstHost = host.data();
  peer.dstPitch = 16;
  peer.dstContext = ctx_;
  peer.WidthInBytes = 16;
  peer.Height = 3;
  peer.Depth = 1;
  EXPECT_EQ(cuMemcpy3DPeer(&peer), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_TRUE(host.untouched());

  // One layer: the slice heights are not used and may hold anything.
  CUDA_MEMCPY3D wide = d3;
  wide.srcPitch = wide.dstPitch = 16;
  wide.WidthInBytes = 16;
  wide.Height = 2;
  wide.Depth = 1;
  wide.srcHeight = wide.dstHeight = kMax;
  EXPECT_EQ(cuMemcpy3D(&wide), CUDA_SUCCESS);
  EXPECT_TRUE(host.guards_intact());
  EXPECT_TRUE(std::all_of(host.data(), host.data() + 32, [](unsigned char b) { return b == 0x22; }));
  EXPECT_TRUE(device_reads(d, 4096, 0x22));
  EXPECT_EQ(cuMemFree(d), CUDA_SUCCESS);
}

// 2D memsets: the span (height-1)*pitch + width*elementSize must not wrap.
TEST_F(Overflow, Memset2DSpansThatWrapAreRefused) {
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(d, 0x33, 4096), CUDA_SUCCESS);
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD2D8(d, k2e63, 1, 16, 3), CUDA_ERROR_INVALID_VALUE);        // 2 * pitch wraps to 0
  EXPECT_EQ(cuMemsetD2D8Async(d, k2e63, 1, 16, 3, s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemsetD2D32(d, 64, 1, kMax / 4 + 2, 2), CUDA_ERROR_INVALID_VALUE);  // width * 4 wraps to 4
  EXPECT_EQ(cuMemsetD2D32Async(d, 64, 1, kMax / 4 + 2, 2, s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemsetD2D16(d, kMax - 1, 1, 8, 3), CUDA_ERROR_INVALID_VALUE);      // 2 * pitch wraps
  EXPECT_EQ(cuMemsetD2D16(d, k2e63, 1, kMax / 2 + 2, 1), CUDA_ERROR_INVALID_VALUE);  // one row, width * 2 wraps
  EXPECT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_TRUE(device_reads(d, 4096, 0x33));
  // One row: the pitch is not used and may hold anything.
  EXPECT_EQ(cuMemsetD2D32(d, kMax - 3, 0x44444444u, 4, 1), CUDA_SUCCESS);
  EXPECT_TRUE(device_reads(d, 16, 0x44));
  EXPECT_TRUE(device_reads(d + 16, 4096 - 16, 0x33));
  EXPECT_EQ(cuStreamDestroy(s), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(d), CUDA_SUCCESS);
}

// Graph memset nodes take the same checked walk as stream-ordered memsets.
TEST_F(Overflow, GraphMemsetNodeSpansThatWrapAreRefused) {
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  CUgraph g;
  ASSERT_EQ(cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUgraphNode n;
  CUDA_MEMSET_NODE_PARAMS p{};
  p.dst = d;
  p.value = 7;
  p.elementSize = 1;
  p.pitch = k2e63;  // 2 * pitch wraps to 0
  p.width = 16;
  p.height = 3;
  EXPECT_EQ(cuGraphAddMemsetNode(&n, g, nullptr, 0, &p, ctx_), CUDA_ERROR_INVALID_VALUE);
  p.elementSize = 4;
  p.pitch = 64;
  p.width = kMax / 4 + 2;  // width * 4 wraps to 8
  p.height = 1;
  EXPECT_EQ(cuGraphAddMemsetNode(&n, g, nullptr, 0, &p, ctx_), CUDA_ERROR_INVALID_VALUE);
  p.width = 16;
  EXPECT_EQ(cuGraphAddMemsetNode(&n, g, nullptr, 0, &p, ctx_), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(g), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(d), CUDA_SUCCESS);
}

// 1D memsets: N * sizeof(element) must not wrap.
TEST_F(Overflow, MemsetElementCountsThatWrapAreRefused) {
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(d, 0x55, 4096), CUDA_SUCCESS);
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD32(d, 1, kMax / 4 + 2), CUDA_ERROR_INVALID_VALUE);  // 4 * N wraps to 4
  EXPECT_EQ(cuMemsetD32Async(d, 1, kMax / 4 + 2, s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemsetD16(d, 1, kMax / 2 + 2), CUDA_ERROR_INVALID_VALUE);  // 2 * N wraps to 2
  EXPECT_EQ(cuMemsetD16Async(d, 1, kMax / 2 + 2, s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemsetD8(d, 1, kMax), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_TRUE(device_reads(d, 4096, 0x55));
  EXPECT_EQ(cuStreamDestroy(s), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(d), CUDA_SUCCESS);
}

// cuMemcpy3DBatchAsync operands: array offsets scaled by the element size,
// rowLength/layerHeight pitches and the extent's width in bytes must not wrap.
TEST_F(Overflow, Batch3DOperandsThatWrapAreRefused) {
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUarray a;  // 64 x 4 x 4 floats
  ASSERT_EQ(create_array3d(64, 4, 4, CU_AD_FORMAT_FLOAT, 1, &a), CUDA_SUCCESS);
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(d, 0x66, 4096), CUDA_SUCCESS);
  Guarded host(4096);

  CUDA_MEMCPY3D_BATCH_OP to_array{};  // device -> array
  to_array.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  to_array.src.op.ptr.ptr = d;
  to_array.dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  to_array.dst.op.array.array = a;
  to_array.extent = {2, 1, 1};
  to_array.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  CUDA_MEMCPY3D_BATCH_OP op = to_array;
  op.dst.op.array.offset.x = kMax / 4;  // x * 4 + 8 wraps to 4
  EXPECT_EQ(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);
  op = to_array;
  op.dst.op.array.offset.x = k2e62 + 1;  // x * 4 wraps to 4
  EXPECT_EQ(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);
  op = to_array;
  op.dst.op.array.offset.y = kMax;  // + 2 rows wraps
  op.extent = {2, 2, 1};
  EXPECT_EQ(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);
  op = to_array;
  op.dst.op.array.offset.z = kMax;  // + 2 layers wraps
  op.extent = {2, 1, 2};
  EXPECT_EQ(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);
  op = to_array;
  op.extent = {k2e62 + 1, 1, 1};  // the width in bytes wraps to 4
  EXPECT_EQ(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);
  op = to_array;
  op.src.op.ptr.rowLength = k2e62 + 1;  // the pitch in bytes wraps to 4
  op.extent = {1, 3, 1};
  EXPECT_EQ(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);

  CUDA_MEMCPY3D_BATCH_OP to_host{};  // device -> pageable host, byte elements
  to_host.src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  to_host.src.op.ptr.ptr = d;
  to_host.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  to_host.dst.op.ptr.ptr = reinterpret_cast<CUdeviceptr>(host.data());
  to_host.extent = {16, 3, 1};
  to_host.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  op = to_host;
  op.src.op.ptr.rowLength = k2e63;  // 2 * pitch wraps to 0
  EXPECT_EQ(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);
  op = to_host;
  op.dst.op.ptr.rowLength = k2e63;  // host rows would wrap the address space
  EXPECT_EQ(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);
  op = to_host;
  op.src.op.ptr.rowLength = 4;
  op.src.op.ptr.layerHeight = k2e62;  // the slice pitch 4 * 2^62 wraps to 0
  op.extent = {4, 1, 5};
  EXPECT_EQ(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);
  op = to_host;
  op.dst.op.ptr.rowLength = 4;
  op.dst.op.ptr.layerHeight = k2e62 + 1;  // the host slice pitch wraps to 4
  op.extent = {4, 1, 5};
  EXPECT_EQ(cuMemcpy3DBatchAsync(1, &op, 0, s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_TRUE(host.untouched());
  EXPECT_TRUE(device_reads(d, 4096, 0x66));
  EXPECT_EQ(cuArrayDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(d), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(s), CUDA_SUCCESS);
}

// cuMemAllocPitch: the padded pitch and pitch * height must not wrap
// (driver 580: CUDA_ERROR_INVALID_VALUE).
TEST_F(Overflow, AllocPitchSizeThatWrapsIsRefused) {
  CUdeviceptr d = 0;
  size_t pitch = 0;
  EXPECT_EQ(cuMemAllocPitch(&d, &pitch, kMax - 100, 1, 4), CUDA_ERROR_INVALID_VALUE);  // padding wraps
  EXPECT_EQ(cuMemAllocPitch(&d, &pitch, size_t{1} << 40, size_t{1} << 30, 4), CUDA_ERROR_INVALID_VALUE);
  // 1536 * (2^55 + 1) / 3 = 2^64 + 512: would wrap to a 512-byte block.
  EXPECT_EQ(cuMemAllocPitch(&d, &pitch, 1536, ((size_t{1} << 55) + 1) / 3, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemAllocPitch(&d, &pitch, 100, 3, 4), CUDA_SUCCESS);
  EXPECT_EQ(pitch, 512u);
  EXPECT_EQ(cuMemFree(d), CUDA_SUCCESS);
}

// Sizes near SIZE_MAX must not wrap in the rounding to the allocation
// granularity: CUDA_ERROR_OUT_OF_MEMORY, as driver 580.
TEST_F(Overflow, AllocationSizesNearSizeMaxAreOutOfMemory) {
  CUdeviceptr d;
  void* h;
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_EQ(cuMemAlloc(&d, kMax - 10), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(cuMemAllocHost(&h, kMax - 10), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(cuMemAllocManaged(&d, kMax - 10, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(cuMemAllocAsync(&d, kMax - 10, s), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(cuStreamDestroy(s), CUDA_SUCCESS);
}

// cuMemHostRegister: a range whose end wraps the address space is refused
// (driver 580: CUDA_ERROR_INVALID_VALUE) and registers nothing.
TEST_F(Overflow, HostRegisterRangeThatWrapsIsRefused) {
  static unsigned char buf[8192];
  const auto base = reinterpret_cast<uintptr_t>(buf);
  EXPECT_EQ(cuMemHostRegister(buf, kMax, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemHostRegister(buf, kMax - base + 4096, 0), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr dp;
  EXPECT_EQ(cuMemHostGetDevicePointer(&dp, buf, 0), CUDA_ERROR_INVALID_VALUE);  // not registered
  EXPECT_EQ(cuMemHostUnregister(buf), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  ASSERT_EQ(cuMemHostRegister(buf, sizeof buf, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostUnregister(buf), CUDA_SUCCESS);
}

}  // namespace

// A registration that covers memory already registered, at either end or
// wholly inside it, is refused; the registry keeps the first one intact.
TEST_F(BadInput, HostRegisterOverlapsAreRefused) {
  static unsigned char buf[3 * 4096];
  ASSERT_EQ(cuMemHostRegister(buf + 4096, 4096, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostRegister(buf, sizeof buf, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);  // covers it
  EXPECT_EQ(cuMemHostRegister(buf + 4096, 16, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);    // same base
  EXPECT_EQ(cuMemHostRegister(buf + 8191, 16, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);    // inside
  EXPECT_EQ(cuMemHostRegister(buf, 4097, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);         // last byte
  EXPECT_EQ(cuMemHostRegister(buf, 4096, 0), CUDA_SUCCESS);                                      // adjacent
  EXPECT_EQ(cuMemHostUnregister(buf), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostUnregister(buf + 4096), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostUnregister(buf + 4096), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
}

// A registration reaching far past the buffer (into unmapped address
// space) is refused.
TEST_F(BadInput, HostRegisterOfUnmappedPagesIsRefused) {
  static unsigned char buf[4096];
  EXPECT_EQ(cuMemHostRegister(buf, (size_t{1} << 47) + 204, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemHostRegister(buf, sizeof buf, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemHostUnregister(buf), CUDA_SUCCESS);
}

// Enum arguments outside their enumerations (any 32-bit value may arrive
// through the C ABI) are refused without being loaded as enums: under the
// asan preset's UBSan, a load of such a value aborts the test. The entry
// points are called through pointer types that take the raw int, so the
// test itself loads no bad enum either.
TEST_F(BadInput, OutOfRangeEnumArgumentsAreRefused) {
  for (int bad : {-1, 0x7fffffff, static_cast<int>(0xff17f7ff)}) {
    CUmemoryPool pool;
    CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    auto get_pool = reinterpret_cast<CUresult (*)(CUmemoryPool*, CUmemLocation*, int)>(&cuMemGetDefaultMemPool);
    EXPECT_EQ(get_pool(&pool, &loc, bad), CUDA_ERROR_INVALID_VALUE);
    int v = 0;
    auto dev_attr = reinterpret_cast<CUresult (*)(int*, int, CUdevice)>(&cuDeviceGetAttribute);
    EXPECT_EQ(dev_attr(&v, bad, 0), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr d;
    ASSERT_EQ(cuMemAlloc(&d, 64), CUDA_SUCCESS);
    unsigned long long out = 0;
    auto ptr_attr = reinterpret_cast<CUresult (*)(void*, int, CUdeviceptr)>(&cuPointerGetAttribute);
    EXPECT_EQ(ptr_attr(&out, bad, d), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuMemFree(d), CUDA_SUCCESS);
    size_t lim = 0;
    auto get_limit = reinterpret_cast<CUresult (*)(size_t*, int)>(&cuCtxGetLimit);
    EXPECT_EQ(get_limit(&lim, bad), CUDA_ERROR_UNSUPPORTED_LIMIT);
    auto set_cache = reinterpret_cast<CUresult (*)(int)>(&cuCtxSetCacheConfig);
    EXPECT_EQ(set_cache(bad), CUDA_ERROR_INVALID_VALUE);
    CUstreamAttrValue sv;
    auto stream_attr = reinterpret_cast<CUresult (*)(CUstream, int, CUstreamAttrValue*)>(&cuStreamGetAttribute);
    EXPECT_EQ(stream_attr(nullptr, bad, &sv), CUDA_ERROR_INVALID_VALUE);
    auto begin = reinterpret_cast<CUresult (*)(CUstream, int)>(&cuStreamBeginCapture_v2);
    CUstream s;
    ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    EXPECT_EQ(begin(s, bad), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuStreamDestroy(s), CUDA_SUCCESS);
  }
}

// Enum fields of caller structs holding values outside their enumerations
// are refused, never loaded as enums (UBSan checks the loads).
TEST_F(BadInput, OutOfRangeEnumFieldsAreRefused) {
  const int bad = static_cast<int>(0xbabababa);
  CUDA_ARRAY_DESCRIPTOR ad{};
  ad.Width = 16;
  ad.NumChannels = 1;
  std::memcpy(&ad.Format, &bad, sizeof bad);
  CUarray a;
  EXPECT_EQ(cuArrayCreate(&a, &ad), CUDA_ERROR_INVALID_VALUE);
  unsigned char src[64] = {}, dst[64] = {};
  CUDA_MEMCPY2D c{};
  c.srcHost = src;
  c.dstMemoryType = CU_MEMORYTYPE_HOST;
  c.dstHost = dst;
  c.WidthInBytes = 16;
  c.Height = 1;
  std::memcpy(&c.srcMemoryType, &bad, sizeof bad);
  EXPECT_EQ(cuMemcpy2D(&c), CUDA_ERROR_INVALID_VALUE);
  CUmemPoolProps props{};
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  std::memcpy(&props.allocType, &bad, sizeof bad);
  CUmemoryPool pool;
  EXPECT_EQ(cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
}

// A "host" source that lies in a device allocation and runs past its end
// is refused rather than read out of bounds.
TEST_F(BadInput, HostSideInsideAnAllocationMustStayInside) {
  CUdeviceptr a, b;
  ASSERT_EQ(cuMemAlloc(&a, 9216), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&b, 4096), CUDA_SUCCESS);
  void* inside = reinterpret_cast<void*>(a + 9002);
  EXPECT_EQ(cuMemcpyHtoD(b, inside, 1318), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyHtoDAsync(b, inside, 1318, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyDtoH(inside, b, 1318), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyHtoD(b, inside, 214), CUDA_SUCCESS);  // to the last byte
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(a), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(b), CUDA_SUCCESS);
}

// A host pointer just above NULL is refused like NULL (a worker copying to
// it would crash).
TEST_F(BadInput, HostPointersInTheNullPageAreRefused) {
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  void* near_null = reinterpret_cast<void*>(uintptr_t{0xa});
  EXPECT_EQ(cuMemcpyDtoHAsync(near_null, d, 2876, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyDtoH(near_null, d, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyHtoD(d, near_null, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpy(d, reinterpret_cast<CUdeviceptr>(near_null), 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(d), CUDA_SUCCESS);
}

namespace {
class Hints : public ApiContextTest {};

// A reservation hint in the low 4 GiB (the null page, the binary) is not
// taken: the range goes elsewhere, and address 0 is never mapped.
TEST_F(Hints, LowReservationHintsAreNotTaken) {
  for (CUdeviceptr hint : {CUdeviceptr{0}, CUdeviceptr{0x200000}, CUdeviceptr{0x40000000}, CUdeviceptr{0xffe00000}}) {
    CUdeviceptr p = 0;
    ASSERT_EQ(cuMemAddressReserve(&p, 2 << 20, 0, hint, 0), CUDA_SUCCESS);
    EXPECT_GE(p, CUdeviceptr{1} << 32);
    EXPECT_EQ(cuMemAddressFree(p, 2 << 20), CUDA_SUCCESS);
  }
}
}  // namespace
