// Kernel nodes: captured launches, the kernel-node API, executable graph
// setters and updates, with kernels of the fake compiler (fake_kernel.h).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "api_context_test.h"
#include "core/context.h"
#include "fake_kernel.h"

namespace cucpu::test {
namespace {

// Adds parameter 1 to *parameter 0 once per block, recording the order of
// launches: each launch checks *p0 equals parameter 2 (the count before it)
// in its first block.
devrt::Fault add_blocks(const devrt::LaunchConfig& cfg, uint64_t first, uint64_t last) {
  auto* sum = param<std::atomic<long>*>(cfg, 0);
  const long step = param<long>(cfg, 1);
  for (uint64_t b = first; b < last; ++b) sum->fetch_add(step, std::memory_order_relaxed);
  return {};
}

class KernelGraph : public ApiContextTest {
 protected:
  void SetUp() override {
    ApiContextTest::SetUp();
    auto p = std::make_shared<FakeProgram>();
    p->add("add", 2, add_blocks);
    // Appends parameter 1 to the log in parameter 0 (one block).
    p->add("append", 2, [](const devrt::LaunchConfig& cfg, uint64_t, uint64_t) {
      auto* log = param<std::vector<long>*>(cfg, 0);
      log->push_back(param<long>(cfg, 1));
      return devrt::Fault{};
    });
    mod_ = load_fake(p, reinterpret_cast<Context*>(ctx_));
    ASSERT_EQ(cuModuleGetFunction(&add_, mod_, "add"), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleGetFunction(&append_, mod_, "append"), CUDA_SUCCESS);
  }
  void TearDown() override {
    cuModuleUnload(mod_);
    ApiContextTest::TearDown();
  }

  CUDA_KERNEL_NODE_PARAMS params(CUfunction f, unsigned grid, unsigned block, void** args) {
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = f;
    p.gridDimX = grid, p.gridDimY = 1, p.gridDimZ = 1;
    p.blockDimX = block, p.blockDimY = 1, p.blockDimZ = 1;
    p.kernelParams = args;
    return p;
  }

  CUmodule mod_ = nullptr;
  CUfunction add_ = nullptr, append_ = nullptr;
};

TEST_F(KernelGraph, CapturedLaunchBecomesAKernelNode) {
  std::atomic<long> sum{0};
  void* p = &sum;
  long step = 3;
  void* args[] = {&p, &step};
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchKernel(add_, 10, 1, 1, 32, 1, 1, 0, s, args, nullptr), CUDA_SUCCESS);
  step = 100;  // the node copied the parameters
  ASSERT_EQ(cuLaunchKernel(add_, 5000, 1, 1, 128, 1, 1, 0, s, args, nullptr), CUDA_SUCCESS);  // a parallel node
  CUgraph g;
  ASSERT_EQ(cuStreamEndCapture(s, &g), CUDA_SUCCESS);
  EXPECT_EQ(sum.load(), 0);  // nothing ran during capture
  size_t n = 0;
  ASSERT_EQ(cuGraphGetNodes(g, nullptr, &n), CUDA_SUCCESS);
  ASSERT_EQ(n, 2u);
  CUgraphNode nodes[2];
  ASSERT_EQ(cuGraphGetNodes(g, nodes, &n), CUDA_SUCCESS);
  CUgraphNodeType t;
  ASSERT_EQ(cuGraphNodeGetType(nodes[0], &t), CUDA_SUCCESS);
  EXPECT_EQ(t, CU_GRAPH_NODE_TYPE_KERNEL);
  CUDA_KERNEL_NODE_PARAMS got{};
  ASSERT_EQ(cuGraphKernelNodeGetParams(nodes[0], &got), CUDA_SUCCESS);
  EXPECT_EQ(got.func, add_);
  EXPECT_EQ(got.gridDimX, 10u);
  EXPECT_EQ(got.blockDimX, 32u);
  ASSERT_NE(got.kernelParams, nullptr);
  EXPECT_EQ(*static_cast<long*>(got.kernelParams[1]), 3);
  EXPECT_EQ(got.ctx, ctx_);

  CUgraphExec e;
  ASSERT_EQ(cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(e, s), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(e, s), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(sum.load(), 2 * (10 * 3 + 5000 * 100));
  cuGraphExecDestroy(e);
  cuGraphDestroy(g);
  cuStreamDestroy(s);
}

TEST_F(KernelGraph, KernelNodeParamsAreCheckedWhenAddedAndUpdatesReachTheExec) {
  std::atomic<long> sum{0};
  void* p = &sum;
  long one = 1, ten = 10;
  void* args1[] = {&p, &one};
  void* args10[] = {&p, &ten};
  CUgraph g;
  ASSERT_EQ(cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUDA_KERNEL_NODE_PARAMS kp = params(add_, 4, 1, args1);
  CUgraphNode a, b;
  ASSERT_EQ(cuGraphAddKernelNode(&a, g, nullptr, 0, &kp), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphAddKernelNode(&b, g, &a, 1, &kp), CUDA_SUCCESS);
  // Bad parameters are refused when the node is added.
  CUgraphNode bad;
  CUDA_KERNEL_NODE_PARAMS wrong = params(add_, 0, 1, args1);
  EXPECT_EQ(cuGraphAddKernelNode(&bad, g, nullptr, 0, &wrong), CUDA_ERROR_INVALID_VALUE);
  wrong = params(add_, 1, 2048, args1);
  EXPECT_EQ(cuGraphAddKernelNode(&bad, g, nullptr, 0, &wrong), CUDA_ERROR_INVALID_VALUE);
  wrong = params(add_, 1, 1, nullptr);
  EXPECT_EQ(cuGraphAddKernelNode(&bad, g, nullptr, 0, &wrong), CUDA_ERROR_INVALID_VALUE);
  wrong = params(nullptr, 1, 1, args1);
  EXPECT_EQ(cuGraphAddKernelNode(&bad, g, nullptr, 0, &wrong), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuGraphAddKernelNode(&bad, g, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  // The generic form.
  CUgraphNodeParams np{};
  np.type = CU_GRAPH_NODE_TYPE_KERNEL;
  np.kernel.func = add_;
  np.kernel.gridDimX = np.kernel.gridDimY = np.kernel.gridDimZ = 1;
  np.kernel.blockDimX = np.kernel.blockDimY = np.kernel.blockDimZ = 1;
  np.kernel.kernelParams = args10;
  CUgraphNode c;
  ASSERT_EQ(cuGraphAddNode(&c, g, &b, nullptr, 1, &np), CUDA_SUCCESS);

  CUgraphExec e;
  ASSERT_EQ(cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(e, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(sum.load(), 4 + 4 + 10);

  // Setting the graph's node leaves the exec as it was; setting the exec's changes it.
  CUDA_KERNEL_NODE_PARAMS kp10 = params(add_, 4, 1, args10);
  ASSERT_EQ(cuGraphKernelNodeSetParams(a, &kp10), CUDA_SUCCESS);
  sum = 0;
  ASSERT_EQ(cuGraphLaunch(e, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(sum.load(), 4 + 4 + 10);
  ASSERT_EQ(cuGraphExecKernelNodeSetParams(e, b, &kp10), CUDA_SUCCESS);
  wrong = params(add_, 1, 2048, args1);
  EXPECT_EQ(cuGraphExecKernelNodeSetParams(e, b, &wrong), CUDA_ERROR_INVALID_VALUE);
  sum = 0;
  ASSERT_EQ(cuGraphLaunch(e, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(sum.load(), 4 + 40 + 10);

  // An update from the graph (whose node a now adds 10, in a parallel group).
  CUDA_KERNEL_NODE_PARAMS big = params(add_, 4000, 256, args10);
  ASSERT_EQ(cuGraphKernelNodeSetParams(a, &big), CUDA_SUCCESS);
  CUgraphExecUpdateResultInfo info{};
  ASSERT_EQ(cuGraphExecUpdate(e, g, &info), CUDA_SUCCESS);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  sum = 0;
  ASSERT_EQ(cuGraphLaunch(e, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(sum.load(), 40000 + 4 + 10);

  // Attributes.
  CUkernelNodeAttrValue v{};
  v.priority = -2;
  ASSERT_EQ(cuGraphKernelNodeSetAttribute(a, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &v), CUDA_SUCCESS);
  CUkernelNodeAttrValue out{};
  ASSERT_EQ(cuGraphKernelNodeGetAttribute(a, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &out), CUDA_SUCCESS);
  EXPECT_EQ(out.priority, -2);
  ASSERT_EQ(cuGraphKernelNodeCopyAttributes(b, a), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphKernelNodeGetAttribute(b, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &out), CUDA_SUCCESS);
  EXPECT_EQ(out.priority, -2);
  EXPECT_EQ(cuGraphKernelNodeGetAttribute(a, static_cast<CUkernelNodeAttrID>(999), &out), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphKernelNodeGetAttribute(a, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, nullptr), CUDA_ERROR_INVALID_VALUE);
  // Kernel-node calls on a node of another type.
  CUgraphNode empty;
  ASSERT_EQ(cuGraphAddEmptyNode(&empty, g, nullptr, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphKernelNodeGetParams(empty, &kp), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphKernelNodeSetParams(empty, &kp), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuGraphKernelNodeGetAttribute(empty, CU_KERNEL_NODE_ATTRIBUTE_PRIORITY, &out), CUDA_ERROR_INVALID_VALUE);
  cuGraphExecDestroy(e);
  cuGraphDestroy(g);
}

TEST_F(KernelGraph, ChainOfKernelNodesRunsInOrder) {
  std::vector<long> log;
  void* p = &log;
  std::vector<long> ids(100);
  std::vector<std::vector<void*>> args(100);
  CUgraph g;
  ASSERT_EQ(cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUgraphNode prev = nullptr;
  for (int i = 0; i < 100; ++i) {
    ids[i] = i;
    args[i] = {&p, &ids[i]};
    CUDA_KERNEL_NODE_PARAMS kp = params(append_, 1, 1, args[i].data());
    CUgraphNode n;
    ASSERT_EQ(cuGraphAddKernelNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, &kp), CUDA_SUCCESS);
    prev = n;
  }
  CUgraphExec e;
  ASSERT_EQ(cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
  for (int round = 0; round < 3; ++round) ASSERT_EQ(cuGraphLaunch(e, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  ASSERT_EQ(log.size(), 300u);
  for (size_t i = 0; i < log.size(); ++i) ASSERT_EQ(log[i], static_cast<long>(i % 100));
  cuGraphExecDestroy(e);
  cuGraphDestroy(g);
}

TEST_F(KernelGraph, FaultInAGraphIsSticky) {
  auto p = std::make_shared<FakeProgram>();
  p->add("trap", 0, [](const devrt::LaunchConfig&, uint64_t, uint64_t) {
    devrt::Fault f;
    f.kind = devrt::FaultKind::kTrap;
    return f;
  });
  CUmodule m = load_fake(p, reinterpret_cast<Context*>(ctx_));
  CUfunction trap;
  ASSERT_EQ(cuModuleGetFunction(&trap, m, "trap"), CUDA_SUCCESS);
  std::atomic<long> sum{0};
  void* sp = &sum;
  long one = 1;
  void* args[] = {&sp, &one};
  CUgraph g;
  ASSERT_EQ(cuGraphCreate(&g, 0), CUDA_SUCCESS);
  CUDA_KERNEL_NODE_PARAMS t = params(trap, 1, 1, nullptr), a = params(add_, 1, 1, args);
  CUgraphNode n1, n2;
  ASSERT_EQ(cuGraphAddKernelNode(&n1, g, nullptr, 0, &t), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphAddKernelNode(&n2, g, &n1, 1, &a), CUDA_SUCCESS);
  CUgraphExec e;
  ASSERT_EQ(cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(e, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(sum.load(), 0);  // the node after the fault did not run
}

}  // namespace
}  // namespace cucpu::test
