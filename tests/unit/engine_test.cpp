// Engine behaviour seen through the C API that the real driver cannot show
// deterministically: priority order among ready work (with one worker),
// sticky errors from faults in asynchronous work, and stream memory waits
// that leave the single worker free.
#include <gtest/gtest.h>
#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <sys/mman.h>

#include "../common/gate.h"
#include "api_context_test.h"

namespace {

using test_support::Gate;

struct Order {
  std::vector<int> seen;  // written only by host functions, which run one at a time here
};
struct Mark {
  Order* order;
  int tag;
  static void CUDA_CB run(void* p) {
    auto* m = static_cast<Mark*>(p);
    m->order->seen.push_back(m->tag);
  }
};

// A host word mapped for device access (stream memory operations wait on
// it); it starts at 0.
struct MappedWord {
  alignas(8) uint32_t words[2] = {0, 0};
  CUdeviceptr device = 0;
  CUresult map() {
    if (CUresult r = cuMemHostRegister(words, sizeof words, CU_MEMHOSTREGISTER_DEVICEMAP)) return r;
    return cuMemHostGetDevicePointer(&device, words, 0);
  }
  CUresult unmap() { return cuMemHostUnregister(words); }
};
// A host function that stores `value` into the word.
struct SetWord {
  MappedWord* word;
  uint32_t value;
  static void CUDA_CB run(void* p) {
    auto* s = static_cast<SetWord*>(p);
    __atomic_store_n(&s->word->words[0], s->value, __ATOMIC_RELEASE);
  }
};

class Engine : public ApiContextTest {};

// Runs with CUCPU_WORKERS=1 (see CMakeLists.txt): the single worker is held
// while work of two priorities becomes ready; the higher priority runs first.
TEST_F(Engine, HigherPriorityReadyWorkRunsFirst) {
  CUstream holder, low, high;
  ASSERT_EQ(cuStreamCreate(&holder, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreateWithPriority(&low, CU_STREAM_NON_BLOCKING, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreateWithPriority(&high, CU_STREAM_NON_BLOCKING, -5), CUDA_SUCCESS);
  Gate gate;
  Order order;
  Mark l1{&order, 1}, l2{&order, 2}, h1{&order, 10};
  ASSERT_EQ(cuLaunchHostFunc(holder, Gate::hold, &gate), CUDA_SUCCESS);
  gate.await_entered();  // the worker is held: what follows is all ready at once when it returns
  ASSERT_EQ(cuLaunchHostFunc(low, Mark::run, &l1), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchHostFunc(low, Mark::run, &l2), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchHostFunc(high, Mark::run, &h1), CUDA_SUCCESS);
  gate.release();
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(order.seen.size(), 3u);
  EXPECT_EQ(order.seen[0], 10);
  for (CUstream s : {holder, low, high}) cuStreamDestroy(s);
}

// A copy that finds its memory gone when it executes faults the context:
// later callbacks receive the error, and sync, query and new calls return it.
TEST_F(Engine, FaultInAsyncCopyIsSticky) {
  std::vector<char> host(4096, 1);
  ASSERT_EQ(cuMemHostRegister(host.data(), host.size(), CU_MEMHOSTREGISTER_DEVICEMAP), CUDA_SUCCESS);
  CUdeviceptr mapped, dev;
  ASSERT_EQ(cuMemHostGetDevicePointer(&mapped, host.data(), 0), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&dev, 4096), CUDA_SUCCESS);
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  Gate gate;
  struct Seen {
    std::atomic<int> status{-1};
  } seen;
  ASSERT_EQ(cuLaunchHostFunc(s, Gate::hold, &gate), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoDAsync(dev, mapped, 4096, s), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamAddCallback(s, [](CUstream, CUresult st, void* p) { static_cast<Seen*>(p)->status = st; },
                                &seen, 0),
            CUDA_SUCCESS);
  ASSERT_EQ(cuMemHostUnregister(host.data()), CUDA_SUCCESS);  // the copy's source is gone
  gate.release();
  EXPECT_EQ(cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(seen.status.load(), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(cuStreamQuery(s), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  CUdeviceptr more;
  EXPECT_EQ(cuMemAlloc(&more, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
}

// A copy whose memory vanishes from under it faults the context, not the
// process: here the host memory of pageable copies is unmapped after they
// are enqueued and before they run, so every byte they touch faults.
TEST_F(Engine, CopyIntoUnmappedHostMemoryFaultsTheContextNotTheProcess) {
  // A small copy and a large one (the parallel path, given workers); each in a context
  // of its own, since the first fault stops the context's later work.
  for (size_t bytes : {size_t{4096}, size_t{4} << 20}) {
    CUcontext c;
    ASSERT_EQ(cuCtxCreate(&c, nullptr, 0, 0), CUDA_SUCCESS);
    CUdeviceptr dev;
    ASSERT_EQ(cuMemAlloc(&dev, bytes), CUDA_SUCCESS);
    ASSERT_EQ(cuMemsetD8(dev, 7, bytes), CUDA_SUCCESS);
    void* host = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(host, MAP_FAILED);
    CUstream s;
    ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    Gate gate;
    ASSERT_EQ(cuLaunchHostFunc(s, Gate::hold, &gate), CUDA_SUCCESS);
    ASSERT_EQ(cuMemcpyDtoHAsync(host, dev, bytes, s), CUDA_SUCCESS);
    ASSERT_EQ(munmap(host, bytes), 0);
    gate.release();
    EXPECT_EQ(cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS) << bytes;
    EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS) << bytes;
    ASSERT_EQ(cuCtxDestroy(c), CUDA_SUCCESS);
  }
  ASSERT_EQ(cuCtxSetCurrent(ctx_), CUDA_SUCCESS);
}

// With one worker, a stream memory wait whose condition does not hold must
// not occupy it: the host function that satisfies the wait runs on that
// same worker (if the wait held it, this would hang).
TEST_F(Engine, ParkedMemoryWaitLeavesTheWorkerFree) {
  MappedWord mapped;
  ASSERT_EQ(mapped.map(), CUDA_SUCCESS);
  const CUdeviceptr word = mapped.device;
  CUstream waiter, setter;
  ASSERT_EQ(cuStreamCreate(&waiter, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreate(&setter, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  Order order;
  Mark after_wait{&order, 2}, before_set{&order, 1};
  ASSERT_EQ(cuStreamWaitValue32(waiter, word, 3, CU_STREAM_WAIT_VALUE_EQ), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchHostFunc(waiter, Mark::run, &after_wait), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamQuery(waiter), CUDA_ERROR_NOT_READY);
  ASSERT_EQ(cuLaunchHostFunc(setter, Mark::run, &before_set), CUDA_SUCCESS);
  SetWord set{&mapped, 3u};
  ASSERT_EQ(cuLaunchHostFunc(setter, SetWord::run, &set), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(waiter), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(setter), CUDA_SUCCESS);
  ASSERT_EQ(order.seen.size(), 2u);
  EXPECT_EQ(order.seen[0], 1);
  EXPECT_EQ(order.seen[1], 2);
  for (CUstream s : {waiter, setter}) cuStreamDestroy(s);
  ASSERT_EQ(mapped.unmap(), CUDA_SUCCESS);
}

// The same inside a launched graph: a batch-memop wait node defers too, and
// the host node after it runs once another stream's host function (on the
// one worker) has set the word.
TEST_F(Engine, GraphMemoryWaitNodeLeavesTheWorkerFree) {
  MappedWord mapped;
  ASSERT_EQ(mapped.map(), CUDA_SUCCESS);
  const CUdeviceptr word = mapped.device;
  CUgraph g;
  ASSERT_EQ(cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUstreamBatchMemOpParams wait{};
  wait.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  wait.waitValue.address = word;
  wait.waitValue.value = 5;
  wait.waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
  CUDA_BATCH_MEM_OP_NODE_PARAMS wp{ctx_, 1, &wait, 0};
  Order order;
  Mark after_wait{&order, 2}, setter_mark{&order, 1};
  CUDA_HOST_NODE_PARAMS hp{Mark::run, &after_wait};
  CUgraphNode wait_node, host_node;
  ASSERT_EQ(cuGraphAddBatchMemOpNode(&wait_node, g, nullptr, 0, &wp), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphAddHostNode(&host_node, g, &wait_node, 1, &hp), CUDA_SUCCESS);
  CUgraphExec exec;
  ASSERT_EQ(cuGraphInstantiate(&exec, g, 0), CUDA_SUCCESS);
  CUstream runner, setter;
  ASSERT_EQ(cuStreamCreate(&runner, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreate(&setter, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, runner), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamQuery(runner), CUDA_ERROR_NOT_READY);
  ASSERT_EQ(cuLaunchHostFunc(setter, Mark::run, &setter_mark), CUDA_SUCCESS);
  SetWord set{&mapped, 5u};
  ASSERT_EQ(cuLaunchHostFunc(setter, SetWord::run, &set), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(runner), CUDA_SUCCESS);
  ASSERT_EQ(order.seen.size(), 2u);
  EXPECT_EQ(order.seen[1], 2);
  cuGraphExecDestroy(exec);
  cuGraphDestroy(g);
  for (CUstream s : {runner, setter}) cuStreamDestroy(s);
  ASSERT_EQ(mapped.unmap(), CUDA_SUCCESS);
}

// Work enqueued after a stream-ordered free that still touches the block
// faults the context, as a device access to freed memory would.
TEST_F(Engine, UseAfterStreamOrderedFreeIsSticky) {
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  Gate gate;  // holds the stream, so the free cannot run before the last set is enqueued
  ASSERT_EQ(cuLaunchHostFunc(s, Gate::hold, &gate), CUDA_SUCCESS);
  CUdeviceptr p;
  ASSERT_EQ(cuMemAllocAsync(&p, 4096, s), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8Async(p, 1, 4096, s), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFreeAsync(p, s), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD8Async(p, 2, 4096, s), CUDA_SUCCESS);  // the block still exists now
  gate.release();
  EXPECT_EQ(cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
}

// A parked wait whose word stops being device-accessible faults the
// context (like a device access to unmapped memory), instead of waiting
// on forever or reading memory it no longer may.
TEST_F(Engine, ParkedMemoryWaitOnUnregisteredWordIsSticky) {
  MappedWord mapped;
  ASSERT_EQ(mapped.map(), CUDA_SUCCESS);
  const CUdeviceptr word = mapped.device;
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamWaitValue32(s, word, 1, CU_STREAM_WAIT_VALUE_EQ), CUDA_SUCCESS);
  ASSERT_EQ(mapped.unmap(), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
}

}  // namespace
