// Memory-allocation and -free nodes: added explicitly and by capturing
// cuMemAllocAsync / cuMemFreeAsync, with their getters and the device's
// graph-memory attributes.
#include "harness.h"

namespace {
CUDA_MEM_ALLOC_NODE_PARAMS alloc_params(size_t bytes) {
  CUDA_MEM_ALLOC_NODE_PARAMS p{};
  p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.poolProps.location.id = 0;
  p.bytesize = bytes;
  return p;
}
}  // namespace

CONF_TEST(MemAllocNodeHasItsAddressWhenAddedAndFreeNodeNamesIt) {
  conf::primary();
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUgraph g;
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(1 << 20);
  CUgraphNode alloc, set, free_node;
  ASSERT_CU(cuGraphAddMemAllocNode(&alloc, g, nullptr, 0, &p));
  EXPECT_TRUE(p.dptr != 0);
  CUgraphNodeType type;
  ASSERT_CU(cuGraphNodeGetType(alloc, &type));
  EXPECT_TRUE(type == CU_GRAPH_NODE_TYPE_MEM_ALLOC);
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = p.dptr;
  ms.value = 0x5a;
  ms.elementSize = 1;
  ms.width = 1 << 20;
  ms.height = 1;
  ASSERT_CU(cuGraphAddMemsetNode(&set, g, &alloc, 1, &ms, conf::primary()));
  ASSERT_CU(cuGraphAddMemFreeNode(&free_node, g, &set, 1, p.dptr));
  ASSERT_CU(cuGraphNodeGetType(free_node, &type));
  EXPECT_TRUE(type == CU_GRAPH_NODE_TYPE_MEM_FREE);
  CUDA_MEM_ALLOC_NODE_PARAMS back{};
  ASSERT_CU(cuGraphMemAllocNodeGetParams(alloc, &back));
  EXPECT_TRUE(back.dptr == p.dptr && back.bytesize == p.bytesize);
  CUdeviceptr freed = 0;
  ASSERT_CU(cuGraphMemFreeNodeGetParams(free_node, &freed));
  EXPECT_TRUE(freed == p.dptr);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphMemFreeNodeGetParams(alloc, &freed));
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  ASSERT_CU(cuGraphLaunch(e, nullptr));
  ASSERT_CU(cuGraphLaunch(e, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  cuuint64_t used = 0;
  CUdevice d;
  ASSERT_CU(cuDeviceGet(&d, 0));
  ASSERT_CU(cuDeviceGetGraphMemAttribute(d, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &used));
  EXPECT_TRUE(used >= (1u << 20));
  ASSERT_CU(cuDeviceGraphMemTrim(d));
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuGraphDestroy(g));
  // Bad parameters.
  CUDA_MEM_ALLOC_NODE_PARAMS zero = alloc_params(0);
  ASSERT_CU(cuGraphCreate(&g, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddMemAllocNode(&alloc, g, nullptr, 0, &zero));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddMemAllocNode(&alloc, g, nullptr, 0, nullptr));
  CUdeviceptr plain;
  ASSERT_CU(cuMemAlloc(&plain, 256));
  conf::info("graph_mem.free_node_of_plain_memory", cuGraphAddMemFreeNode(&free_node, g, nullptr, 0, plain));
  ASSERT_CU(cuMemFree(plain));
  ASSERT_CU(cuGraphDestroy(g));
}

CONF_TEST(CapturedAllocAsyncAndFreeAsyncBecomeGraphMemoryNodes) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAllocAsync(&p, 4096, s));
  EXPECT_TRUE(p != 0);
  ASSERT_CU(cuMemsetD32Async(p, 7, 1024, s));
  unsigned host[4] = {0, 0, 0, 0};
  ASSERT_CU(cuMemcpyDtoHAsync(host, p, sizeof host, s));
  ASSERT_CU(cuMemFreeAsync(p, s));
  CUgraph g;
  ASSERT_CU(cuStreamEndCapture(s, &g));
  size_t n = 0;
  ASSERT_CU(cuGraphGetNodes(g, nullptr, &n));
  EXPECT_TRUE(n == 4);
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  ASSERT_CU(cuGraphLaunch(e, s));
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(host[0] == 7 && host[3] == 7);
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuStreamDestroy(s));
}

// A cuGraphInstantiateWithParams that fails leaves no executable graph
// behind: its graph's allocation nodes' memory goes with the graph.
CONF_TEST(InstantiateWithParamsRefusedForItsUploadStreamMakesNothing) {
  SKIP_ON_NVIDIA("passes a destroyed stream, which the driver leaves undefined");
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUdevice d;
  ASSERT_CU(cuDeviceGet(&d, 0));
  ASSERT_CU(cuDeviceGraphMemTrim(d));
  cuuint64_t before = 0, after = 0;
  ASSERT_CU(cuDeviceGetGraphMemAttribute(d, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &before));
  CUgraph g;
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(1 << 16);
  CUgraphNode alloc;
  ASSERT_CU(cuGraphAddMemAllocNode(&alloc, g, nullptr, 0, &p));
  CUstream dead;
  ASSERT_CU(cuStreamCreate(&dead, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamDestroy(dead));
  CUDA_GRAPH_INSTANTIATE_PARAMS ip{};
  ip.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
  ip.hUploadStream = dead;
  CUgraphExec e = nullptr;
  EXPECT_TRUE(cuGraphInstantiateWithParams(&e, g, &ip) != CUDA_SUCCESS);
  EXPECT_TRUE(e == nullptr);
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuDeviceGraphMemTrim(d));
  ASSERT_CU(cuDeviceGetGraphMemAttribute(d, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &after));
  EXPECT_TRUE(after == before);
}
