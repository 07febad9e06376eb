// Bad input never crashes: forged and destroyed handles, NULL outputs and
// out-of-range values give an error from every family of entry points.
#include <gtest/gtest.h>
#include <cuda.h>

#include <cstdint>

#include "api_context_test.h"

namespace {

template <class T>
T forged() {
  return reinterpret_cast<T>(static_cast<uintptr_t>(0x1234560));
}

class BadInput : public ApiContextTest {};

TEST_F(BadInput, ForgedHandles) {
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

TEST_F(BadInput, DestroyedHandles) {
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

TEST_F(BadInput, NullOutputsAndValues) {
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

TEST_F(BadInput, UnimplementedEntryPointsSayNotSupported) {
  CUmodule m;
  EXPECT_EQ(cuModuleLoad(&m, "missing.cubin"), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(cuGraphAddMemAllocNode(nullptr, nullptr, nullptr, 0, nullptr), CUDA_ERROR_NOT_SUPPORTED);
}

}  // namespace
