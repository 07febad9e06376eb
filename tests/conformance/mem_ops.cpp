// Stream memory operations: cuStreamWaitValue32/64, cuStreamWriteValue32/64
// and cuStreamBatchMemOp. Waits here are always released, by another
// stream's write or by a host thread, so no test can hang a correct driver.
#include <thread>

#include "harness.h"

namespace {

CUstream new_stream() {
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  return s;
}

struct Ran {
  std::atomic<int> n{0};
  static void CUDA_CB mark(void* p) { static_cast<Ran*>(p)->n.fetch_add(1); }
};

}  // namespace

// A wait holds its stream until another stream's write satisfies it.
CONF_TEST(MemOpsWaitReleasedByOtherStreamsWrite) {
  conf::primary();
  cuCtxSetCurrent(conf::primary());
  CUdeviceptr flag;
  ASSERT_CU(cuMemAlloc(&flag, 64));
  ASSERT_CU(cuMemsetD32(flag, 0, 16));
  CUstream waiter = new_stream(), writer = new_stream();
  Ran ran;
  ASSERT_CU(cuStreamWaitValue32(waiter, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
  ASSERT_CU(cuLaunchHostFunc(waiter, Ran::mark, &ran));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(waiter));
  EXPECT_TRUE(ran.n.load() == 0);
  ASSERT_CU(cuStreamWriteValue32(writer, flag, 1, CU_STREAM_WRITE_VALUE_DEFAULT));
  ASSERT_CU(cuStreamSynchronize(waiter));
  EXPECT_TRUE(ran.n.load() == 1);
  // 64-bit: write then wait on the same stream (already satisfied).
  ASSERT_CU(cuStreamWriteValue64(writer, flag + 8, 0x1122334455667788ull, 0));
  ASSERT_CU(cuStreamWaitValue64(writer, flag + 8, 0x1122334455667788ull, CU_STREAM_WAIT_VALUE_EQ));
  ASSERT_CU(cuStreamSynchronize(writer));
  unsigned long long v64 = 0;
  unsigned int v32 = 0;
  ASSERT_CU(cuMemcpyDtoH(&v64, flag + 8, 8));
  ASSERT_CU(cuMemcpyDtoH(&v32, flag, 4));
  EXPECT_TRUE(v64 == 0x1122334455667788ull && v32 == 1);
  cuStreamDestroy(waiter);
  cuStreamDestroy(writer);
  cuMemFree(flag);
}

// The four conditions, each satisfied by the value written before it.
CONF_TEST(MemOpsEveryWaitConditionIsMetByTheValueBeforeIt) {
  cuCtxSetCurrent(conf::primary());
  CUdeviceptr p;
  ASSERT_CU(cuMemAlloc(&p, 16));
  CUstream s = new_stream();
  ASSERT_CU(cuStreamWriteValue32(s, p, 0x0F, 0));
  ASSERT_CU(cuStreamWaitValue32(s, p, 0x0E, CU_STREAM_WAIT_VALUE_GEQ));  // (int)(0x0F - 0x0E) >= 0
  ASSERT_CU(cuStreamWaitValue32(s, p, 0x0F, CU_STREAM_WAIT_VALUE_EQ));
  ASSERT_CU(cuStreamWaitValue32(s, p, 0x01, CU_STREAM_WAIT_VALUE_AND));  // 0x0F & 0x01 != 0
  ASSERT_CU(cuStreamWaitValue32(s, p, 0xF0, CU_STREAM_WAIT_VALUE_NOR));  // ~(0x0F | 0xF0) != 0
  // Cyclic greater-or-equal: 2 - 0xFFFFFFFE wraps to 4 >= 0.
  ASSERT_CU(cuStreamWriteValue32(s, p, 2, 0));
  ASSERT_CU(cuStreamWaitValue32(s, p, 0xFFFFFFFEu, CU_STREAM_WAIT_VALUE_GEQ));
  ASSERT_CU(cuStreamSynchronize(s));
  int v = 0;
  EXPECT_TRUE(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, 0) == CUDA_SUCCESS && v == 1);
  EXPECT_TRUE(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 0) == CUDA_SUCCESS && v == 1);
  cuStreamDestroy(s);
  cuMemFree(p);
}

// A wait on mapped host memory is released by a plain store from a host
// thread.
CONF_TEST(MemOpsWaitReleasedByHostStore) {
  cuCtxSetCurrent(conf::primary());
  void* host = nullptr;
  ASSERT_CU(cuMemHostAlloc(&host, 64, CU_MEMHOSTALLOC_DEVICEMAP));
  auto* word = static_cast<volatile unsigned int*>(host);
  *word = 0;
  CUdeviceptr dev;
  ASSERT_CU(cuMemHostGetDevicePointer(&dev, host, 0));
  CUstream s = new_stream();
  Ran ran;
  ASSERT_CU(cuStreamWaitValue32(s, dev, 7, CU_STREAM_WAIT_VALUE_EQ));
  ASSERT_CU(cuLaunchHostFunc(s, Ran::mark, &ran));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(s));
  std::thread([word] { __atomic_store_n(const_cast<unsigned int*>(word), 7u, __ATOMIC_RELEASE); }).join();
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(ran.n.load() == 1);
  // And the stream's write lands in host memory.
  ASSERT_CU(cuStreamWriteValue32(s, dev + 4, 99, 0));
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(word[1] == 99);
  cuStreamDestroy(s);
  cuMemFreeHost(host);
}

// A batch runs its operations in array order.
CONF_TEST(MemOpsBatchInOrder) {
  cuCtxSetCurrent(conf::primary());
  CUdeviceptr p;
  ASSERT_CU(cuMemAlloc(&p, 32));
  ASSERT_CU(cuMemsetD32(p, 0, 8));
  CUstream s = new_stream();
  CUstreamBatchMemOpParams ops[4] = {};
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[0].writeValue.address = p;
  ops[0].writeValue.value = 5;
  ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  ops[1].waitValue.address = p;
  ops[1].waitValue.value = 5;
  ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
  ops[2].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[2].writeValue.address = p + 8;
  ops[2].writeValue.value64 = 0xABCDEF0123456789ull;
  ops[3].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  ops[3].writeValue.address = p;
  ops[3].writeValue.value = 6;
  ASSERT_CU(cuStreamBatchMemOp(s, 4, ops, 0));
  ASSERT_CU(cuStreamSynchronize(s));
  unsigned int v32 = 0;
  unsigned long long v64 = 0;
  ASSERT_CU(cuMemcpyDtoH(&v32, p, 4));
  ASSERT_CU(cuMemcpyDtoH(&v64, p + 8, 8));
  EXPECT_TRUE(v32 == 6 && v64 == 0xABCDEF0123456789ull);
  cuStreamDestroy(s);
  cuMemFree(p);
}

// What each driver returns for bad input; observed, not asserted.
CONF_TEST(MemOpsBadInput) {
  cuCtxSetCurrent(conf::primary());
  CUdeviceptr p;
  ASSERT_CU(cuMemAlloc(&p, 64));
  ASSERT_CU(cuMemsetD32(p, 0, 16));
  CUdeviceptr managed;
  ASSERT_CU(cuMemAllocManaged(&managed, 64, CU_MEM_ATTACH_GLOBAL));
  CUstream s = new_stream();
  // Every wait below is satisfied if accepted (the word holds 0, GEQ 0).
  conf::info("memop_wait_misaligned", cuStreamWaitValue32(s, p + 1, 0, 0));
  conf::info("memop_wait64_misaligned4", cuStreamWaitValue64(s, p + 4, 0, 0));
  conf::info("memop_wait_managed", cuStreamWaitValue32(s, managed, 0, 0));
  conf::info("memop_write_bad_flags", cuStreamWriteValue32(s, p, 0, 2));
  conf::info("memop_write_no_barrier", cuStreamWriteValue32(s, p, 0, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER));
  conf::info("memop_write_misaligned", cuStreamWriteValue32(s, p + 2, 0, 0));
  conf::info("memop_write_managed", cuStreamWriteValue32(s, managed, 0, 0));
  conf::info("memop_write_legacy_stream", cuStreamWriteValue32(CU_STREAM_LEGACY, p, 0, 0));
  CUstreamBatchMemOpParams ops[256] = {};
  for (auto& op : ops) {
    op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    op.writeValue.address = p;
  }
  conf::info("memop_batch_count0", cuStreamBatchMemOp(s, 0, ops, 0));
  conf::info("memop_batch_count255", cuStreamBatchMemOp(s, 255, ops, 0));
  conf::info("memop_batch_count256", cuStreamBatchMemOp(s, 256, ops, 0));
  conf::info("memop_batch_flags1", cuStreamBatchMemOp(s, 1, ops, 1));
  // Driver 580 crashes on a NULL array with a nonzero count (see docs/conformance.md).
  if (conf::on_cucpu()) conf::info("memop_batch_null_array", cuStreamBatchMemOp(s, 1, nullptr, 0));
  conf::info("memop_batch_null_array_count0", cuStreamBatchMemOp(s, 0, nullptr, 0));
  CUstreamBatchMemOpParams one[2] = {};
  one[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  one[0].writeValue.address = p;
  one[1].operation = CU_STREAM_MEM_OP_BARRIER;
  one[1].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_SYS;
  conf::info("memop_batch_barrier", cuStreamBatchMemOp(s, 2, one, 0));
  one[1].operation = CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
  one[1].flushRemoteWrites.flags = 0;
  conf::info("memop_batch_flush", cuStreamBatchMemOp(s, 2, one, 0));
  one[1].operation = static_cast<CUstreamBatchMemOpType>(99);
  conf::info("memop_batch_bad_type", cuStreamBatchMemOp(s, 2, one, 0));
  one[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  one[1].writeValue.address = p + 1;
  conf::info("memop_batch_misaligned", cuStreamBatchMemOp(s, 2, one, 0));
  conf::info("memop_sync_after_bad_input", cuStreamSynchronize(s));
  // During capture.
  ASSERT_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  conf::info("memop_capture_write", cuStreamWriteValue32(s, p, 1, 0));
  conf::info("memop_capture_wait", cuStreamWaitValue32(s, p, 0, 0));
  CUgraph g = nullptr;
  conf::info("memop_capture_end", cuStreamEndCapture(s, &g));
  cuStreamDestroy(s);
  if (g) {
    size_t n = 0;
    cuGraphGetNodes(g, nullptr, &n);
    conf::info_value("memop_capture_nodes", static_cast<long long>(n));
    if (n > 0) {
      CUgraphNode nodes[4];
      size_t k = 4;
      cuGraphGetNodes(g, nodes, &k);
      CUgraphNodeType t;
      cuGraphNodeGetType(nodes[0], &t);
      conf::info_value("memop_capture_node_type", static_cast<long long>(t));
    }
    cuGraphDestroy(g);
  }
  // Addresses outside any allocation last: a driver that accepts one may
  // fault the context, which would change every row after it.
  s = new_stream();
  conf::info("memop_wait_null", cuStreamWaitValue32(s, 0, 0, 0));
  conf::info("memop_wait_unknown_address", cuStreamWaitValue32(s, 0x1000, 0, 0));
  conf::info("memop_wait_past_end", cuStreamWaitValue32(s, p + 64, 0, 0));
  conf::info("memop_write_null", cuStreamWriteValue64(s, 0, 0, 0));
  conf::info("memop_wait_bad_condition", cuStreamWaitValue32(s, p, 0, 4));
  conf::info("memop_wait_flush", cuStreamWaitValue32(s, p, 0, CU_STREAM_WAIT_VALUE_FLUSH));
  conf::info("memop_sync_after_bad_addresses", cuStreamSynchronize(s));
  cuStreamDestroy(s);
  cuMemFree(p);
  cuMemFree(managed);
}

// Batch-memop graph nodes: added directly and through cuGraphAddNode, read
// back, updated in the executable graph, launched.
CONF_TEST(MemOpsGraphNodesRunAndTakeExecUpdates) {
  cuCtxSetCurrent(conf::primary());
  CUdeviceptr p;
  ASSERT_CU(cuMemAlloc(&p, 16));
  ASSERT_CU(cuMemsetD32(p, 0, 4));
  CUgraph g;
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUstreamBatchMemOpParams first{};
  first.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  first.writeValue.address = p;
  first.writeValue.value = 7;
  CUDA_BATCH_MEM_OP_NODE_PARAMS params{conf::primary(), 1, &first, 0};
  CUgraphNode a, b;
  ASSERT_CU(cuGraphAddBatchMemOpNode(&a, g, nullptr, 0, &params));
  CUstreamBatchMemOpParams second[2] = {};
  second[0].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  second[0].waitValue.address = p;
  second[0].waitValue.value = 7;
  second[0].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  second[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  second[1].writeValue.address = p + 4;
  second[1].writeValue.value = 9;
  CUgraphNodeParams generic{};
  generic.type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
  generic.memOp = {conf::primary(), 2, second, 0};
  ASSERT_CU(cuGraphAddNode(&b, g, &a, nullptr, 1, &generic));  // cuda.h maps this to _v2
  CUgraphNodeType type;
  ASSERT_CU(cuGraphNodeGetType(b, &type));
  EXPECT_TRUE(type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
  CUDA_BATCH_MEM_OP_NODE_PARAMS got{};
  ASSERT_CU(cuGraphBatchMemOpNodeGetParams(b, &got));
  EXPECT_TRUE(got.count == 2 && got.paramArray && got.paramArray[1].writeValue.value == 9);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphBatchMemOpNodeGetParams(b, nullptr));
  CUgraphExec exec;
  ASSERT_CU(cuGraphInstantiate(&exec, g, 0));
  CUstream s = new_stream();
  ASSERT_CU(cuGraphLaunch(exec, s));
  ASSERT_CU(cuStreamSynchronize(s));
  unsigned int v[2] = {};
  ASSERT_CU(cuMemcpyDtoH(v, p, 8));
  EXPECT_TRUE(v[0] == 7 && v[1] == 9);
  first.writeValue.value = 8;  // the executable graph's copy changes; GEQ 7 still holds
  ASSERT_CU(cuGraphExecBatchMemOpNodeSetParams(exec, a, &params));
  ASSERT_CU(cuGraphLaunch(exec, s));
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuMemcpyDtoH(v, p, 8));
  EXPECT_TRUE(v[0] == 8 && v[1] == 9);
  cuGraphExecDestroy(exec);
  cuGraphDestroy(g);
  cuStreamDestroy(s);
  cuMemFree(p);
}
