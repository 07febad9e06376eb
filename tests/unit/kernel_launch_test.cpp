// Launches through the C API with kernels of the fake compiler
// (fake_kernel.h): every block runs once, in one op or as a group; bad
// arguments are refused; faults become the context's sticky error; a long
// kernel leaves room for other work.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "api_context_test.h"
#include "core/context.h"
#include "core/kernel_op.h"
#include "core/runtime.h"
#include "fake_kernel.h"

namespace cucpu::test {
namespace {

// Each block adds 1 to counts[linear block index] (parameter 0).
BlockFn count_blocks() {
  return [](const devrt::LaunchConfig& cfg, uint64_t first, uint64_t last) {
    auto* counts = param<std::atomic<int>*>(cfg, 0);
    for (uint64_t b = first; b < last; ++b) counts[b].fetch_add(1, std::memory_order_relaxed);
    return devrt::Fault{};
  };
}

class Launch : public ApiContextTest {
 protected:
  void SetUp() override {
    // A fault fails the whole device, as on driver 580; these tests fault on
    // purpose one after another in one process, so each starts from a clean device.
    for (cucpu::Device& d : cucpu::rt().devices) d.fault.value.store(CUDA_SUCCESS);
    ApiContextTest::SetUp();
    prog_ = std::make_shared<FakeProgram>();
    prog_->add("count", 1, count_blocks());
    prog_->add("none", 0, [](const devrt::LaunchConfig&, uint64_t, uint64_t) { return devrt::Fault{}; });
    prog_->add("fault", 1, [](const devrt::LaunchConfig& cfg, uint64_t first, uint64_t last) {
      for (uint64_t b = first; b < last; ++b)
        if (b == 3) {
          devrt::Fault f;
          f.kind = devrt::FaultKind::kIllegalAddress;
          f.address = param<uint64_t>(cfg, 0);
          f.block = block_of(cfg, b);
          return f;
        }
      return devrt::Fault{};
    });
    ptx::KernelInfo small;
    small.max_threads_per_block = 128;
    small.static_shared_bytes = 1024;
    prog_->add("small", 0, [](const devrt::LaunchConfig&, uint64_t, uint64_t) { return devrt::Fault{}; }, small);
    mod_ = load_fake(prog_, reinterpret_cast<Context*>(ctx_));
    ASSERT_NE(mod_, nullptr);
    ASSERT_EQ(cuModuleGetFunction(&count_, mod_, "count"), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleGetFunction(&none_, mod_, "none"), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleGetFunction(&fault_, mod_, "fault"), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleGetFunction(&small_, mod_, "small"), CUDA_SUCCESS);
  }

  // Launches `count` on a grid and checks every block ran exactly once.
  void expect_each_block_once(unsigned gx, unsigned gy, unsigned gz, unsigned bx) {
    const size_t n = size_t{gx} * gy * gz;
    std::vector<std::atomic<int>> counts(n);
    void* p = counts.data();
    void* args[] = {&p};
    ASSERT_EQ(cuLaunchKernel(count_, gx, gy, gz, bx, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(counts[i].load(), 1) << "block " << i;
  }

  std::shared_ptr<FakeProgram> prog_;
  CUmodule mod_ = nullptr;
  CUfunction count_ = nullptr, none_ = nullptr, fault_ = nullptr, small_ = nullptr;
};

TEST_F(Launch, EveryBlockRunsOnce) {
  expect_each_block_once(1, 1, 1, 1);     // one op
  expect_each_block_once(3, 2, 1, 32);    // one op: few threads in all
  expect_each_block_once(1000, 3, 2, 256);  // a group of parts
  expect_each_block_once(100000, 1, 1, 64);
}

TEST_F(Launch, ParametersFromAnExtraBufferReachTheKernel) {
  std::vector<std::atomic<int>> counts(8);
  void* buf[1] = {counts.data()};
  size_t size = sizeof buf;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  ASSERT_EQ(cuLaunchKernel(count_, 8, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  for (auto& c : counts) EXPECT_EQ(c.load(), 1);
}

TEST_F(Launch, ParametersAreCopiedAtTheCall) {
  std::vector<std::atomic<int>> a(4), b(4);
  std::atomic<bool> open{false};
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchHostFunc(s, [](void* o) {
              while (!static_cast<std::atomic<bool>*>(o)->load()) std::this_thread::yield();
            }, &open), CUDA_SUCCESS);
  void* p = a.data();
  void* args[] = {&p};
  ASSERT_EQ(cuLaunchKernel(count_, 4, 1, 1, 1, 1, 1, 0, s, args, nullptr), CUDA_SUCCESS);
  p = b.data();  // after the call: the launch keeps the value it was given
  open = true;
  ASSERT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(a[3].load(), 1);
  EXPECT_EQ(b[3].load(), 0);
  cuStreamDestroy(s);
}

TEST_F(Launch, ShapesPastTheDeviceOrKernelLimitsAreRefused) {
  int x = 0;
  void* p = &x;
  void* args[] = {&p};
  auto launch = [&](unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem = 0) {
    return cuLaunchKernel(none_, gx, gy, gz, bx, by, bz, smem, nullptr, nullptr, nullptr);
  };
  EXPECT_EQ(launch(0, 1, 1, 1, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 0, 1, 1, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 0, 1, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 0, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 1, 0, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 1, 1, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 1025, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 1, 1025, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 1, 1, 65), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 32, 32, 2), CUDA_ERROR_INVALID_VALUE);  // 2048 threads
  EXPECT_EQ(launch(0x80000000u, 1, 1, 1, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 65536, 1, 1, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 65536, 1, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(1, 1, 1, 1024, 1, 1), CUDA_SUCCESS);
  EXPECT_EQ(launch(1, 1, 1, 1, 1, 64), CUDA_SUCCESS);
  // The kernel's own limit (.maxntid): 128 threads.
  EXPECT_EQ(cuLaunchKernel(small_, 1, 1, 1, 129, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLaunchKernel(small_, 1, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
}

TEST_F(Launch, DynamicSharedMemoryStopsAt48KiBUnlessOptedIn) {
  // Without the opt-in, static + dynamic stays within 48 KiB.
  EXPECT_EQ(cuLaunchKernel(small_, 1, 1, 1, 1, 1, 1, 48 * 1024 - 1024, nullptr, nullptr, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchKernel(small_, 1, 1, 1, 1, 1, 1, 48 * 1024 - 1023, nullptr, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  int v = 0;
  ASSERT_EQ(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, small_), CUDA_SUCCESS);
  EXPECT_EQ(v, 48 * 1024 - 1024);
  // The opt-in raises the limit up to the device's opt-in figure in all
  // (227 KiB on sm_90, 99 KiB on sm_12x).
  int optin = 0;
  ASSERT_EQ(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuFuncSetAttribute(small_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 1023),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuFuncSetAttribute(small_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 1024), CUDA_SUCCESS);
  EXPECT_EQ(cuFuncSetAttribute(small_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuFuncSetAttribute(small_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchKernel(small_, 1, 1, 1, 1, 1, 1, 100000, nullptr, nullptr, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchKernel(small_, 1, 1, 1, 1, 1, 1, 100001, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
}

TEST_F(Launch, MissingOrMalformedParametersAreRefused) {
  int x = 0;
  void* p = &x;
  void* args[] = {&p};
  size_t size = 8;
  size_t small = 4;
  void* buf[1] = {&x};
  void* extra_ok[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  void* extra_small[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &small,
                         CU_LAUNCH_PARAM_END};
  void* extra_unknown[] = {reinterpret_cast<void*>(7), buf, CU_LAUNCH_PARAM_END};
  void* extra_no_size[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_END};
  void* extra_null_size[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, nullptr,
                             CU_LAUNCH_PARAM_END};
  void* extra_size_only[] = {CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  void* null_arg[] = {nullptr};
  auto launch = [&](void** kp, void** extra) {
    return cuLaunchKernel(count_, 1, 1, 1, 1, 1, 1, 0, nullptr, kp, extra);
  };
  EXPECT_EQ(launch(nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);  // a parameter and nothing to read it from
  EXPECT_EQ(launch(args, extra_ok), CUDA_ERROR_INVALID_VALUE);     // both ways at once
  EXPECT_EQ(launch(nullptr, extra_small), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(nullptr, extra_unknown), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(nullptr, extra_no_size), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(nullptr, extra_null_size), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(nullptr, extra_size_only), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(launch(null_arg, nullptr), CUDA_ERROR_INVALID_VALUE);
  // A kernel without parameters takes neither, or an empty list.
  void* extra_end[] = {CU_LAUNCH_PARAM_END};
  EXPECT_EQ(cuLaunchKernel(none_, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchKernel(none_, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra_end), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
}

TEST_F(Launch, ForgedForeignAndUnloadedHandlesAreInvalidHandle) {
  EXPECT_EQ(cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_HANDLE);
  auto forged = reinterpret_cast<CUfunction>(uintptr_t{0x1234560});
  EXPECT_EQ(cuLaunchKernel(forged, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_HANDLE);
  // A stream handle that is not one.
  EXPECT_EQ(cuLaunchKernel(none_, 1, 1, 1, 1, 1, 1, 0, reinterpret_cast<CUstream>(count_), nullptr, nullptr),
            CUDA_ERROR_INVALID_HANDLE);
  // A stream of another context.
  CUcontext other;
  CUstream s;
  ASSERT_EQ(cuCtxCreate(&other, nullptr, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreate(&s, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxPopCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchKernel(none_, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuCtxDestroy(other), CUDA_SUCCESS);
  // A function of an unloaded module.
  ASSERT_EQ(cuModuleUnload(mod_), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchKernel(none_, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuModuleUnload(mod_), CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(Launch, LaunchKernelExHonoursAttributesAndCooperativeGridsMustFit) {
  std::vector<std::atomic<int>> counts(4);
  void* p = counts.data();
  void* args[] = {&p};
  CUlaunchAttribute attrs[3] = {};
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  attrs[0].value.priority = -1;
  attrs[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attrs[1].value.cooperative = 1;
  attrs[2].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attrs[2].value.clusterDim = {1, 1, 1};
  CUlaunchConfig cfg{};
  cfg.gridDimX = 4, cfg.gridDimY = 1, cfg.gridDimZ = 1;
  cfg.blockDimX = 1, cfg.blockDimY = 1, cfg.blockDimZ = 1;
  cfg.attrs = attrs;
  cfg.numAttrs = 3;
  ASSERT_EQ(cuLaunchKernelEx(&cfg, count_, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  for (auto& c : counts) EXPECT_EQ(c.load(), 1);
  EXPECT_EQ(cuLaunchKernelEx(nullptr, count_, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  cfg.attrs = nullptr;
  EXPECT_EQ(cuLaunchKernelEx(&cfg, count_, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  attrs[0].id = static_cast<CUlaunchAttributeID>(999);
  cfg.attrs = attrs;
  EXPECT_EQ(cuLaunchKernelEx(&cfg, count_, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attrs[0].value.clusterDim = {3, 1, 1};  // does not divide the grid
  EXPECT_EQ(cuLaunchKernelEx(&cfg, count_, args, nullptr), CUDA_ERROR_INVALID_CLUSTER_SIZE);
  // A cooperative grid must be resident at once: 32 blocks per worker at most.
  EXPECT_EQ(cuLaunchCooperativeKernel(none_, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchCooperativeKernel(none_, 1 << 20, 1, 1, 1, 1, 1, 0, nullptr, nullptr),
            CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  // A completion event fires once the kernel is done.
  CUevent e;
  ASSERT_EQ(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  CUlaunchAttribute done{};
  done.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
  done.value.launchCompletionEvent.event = e;
  cfg.attrs = &done;
  cfg.numAttrs = 1;
  ASSERT_EQ(cuLaunchKernelEx(&cfg, count_, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuEventSynchronize(e), CUDA_SUCCESS);
  EXPECT_EQ(counts[0].load(), 2);
  cuEventDestroy(e);
}

TEST_F(Launch, FaultSetsStickyErrorAndStopsLaunch) {
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 64), CUDA_SUCCESS);
  uint64_t addr = d + 1000;
  void* args[] = {&addr};
  ASSERT_EQ(cuLaunchKernel(fault_, 8, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(cuLaunchKernel(none_, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_ILLEGAL_ADDRESS);
  CUfunction f;
  EXPECT_EQ(cuModuleGetFunction(&f, mod_, "none"), CUDA_ERROR_ILLEGAL_ADDRESS);
}

TEST_F(Launch, FaultInAGroupStopsTheOtherParts) {
  // Block 3 of many faults; the launch stops and later work on the stream does not run.
  uint64_t addr = 0x10;
  void* args[] = {&addr};
  ASSERT_EQ(cuLaunchKernel(fault_, 1 << 16, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  std::vector<std::atomic<int>> counts(2);
  void* p = counts.data();
  void* cargs[] = {&p};
  CUresult r = cuLaunchKernel(count_, 2, 1, 1, 1, 1, 1, 0, nullptr, cargs, nullptr);
  EXPECT_TRUE(r == CUDA_SUCCESS || r == CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(counts[0].load(), 0);  // a kernel enqueued after the fault does not run
}

TEST_F(Launch, UnloadRightAfterLaunchIsSafe) {
  std::vector<std::atomic<int>> counts(2000);
  std::atomic<bool> open{false};
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchHostFunc(s, [](void* o) {
              while (!static_cast<std::atomic<bool>*>(o)->load()) std::this_thread::yield();
            }, &open), CUDA_SUCCESS);
  void* p = counts.data();
  void* args[] = {&p};
  ASSERT_EQ(cuLaunchKernel(count_, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchKernel(count_, 2000, 1, 1, 32, 1, 1, 0, s, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleUnload(mod_), CUDA_SUCCESS);
  open = true;
  ASSERT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(counts[0].load(), 2);
  EXPECT_EQ(counts[1999].load(), 1);
  cuStreamDestroy(s);
}

// A long kernel gives the workers back between time slices: a host
// function queued on another stream runs while it is in progress. Slices
// of 0 here, so that a part hands over after each chunk of blocks; each
// chunk waits until the host function is queued, so no part hands over
// before it is, and the kernel cannot end first. The host function then
// runs ahead of the parts queued behind it, and their blocks see its flag.
TEST_F(Launch, LongKernelLeavesRoomForOtherStreams) {
  static std::atomic<bool> queued, flag;
  static std::atomic<int> after;
  queued = false;
  flag = false;
  after = 0;
  auto prog = std::make_shared<FakeProgram>();
  prog->add("slow", 0, [](const devrt::LaunchConfig&, uint64_t first, uint64_t last) {
    while (!queued.load()) std::this_thread::yield();
    for (uint64_t b = first; b < last; ++b)
      if (flag.load()) after.fetch_add(1);
    return devrt::Fault{};
  });
  CUmodule m = load_fake(prog, reinterpret_cast<Context*>(ctx_));
  CUfunction slow;
  ASSERT_EQ(cuModuleGetFunction(&slow, m, "slow"), CUDA_SUCCESS);
  CUstream a, b;
  ASSERT_EQ(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  const std::chrono::nanoseconds slice = set_kernel_slice(std::chrono::nanoseconds(0));
  ASSERT_EQ(cuLaunchKernel(slow, 1 << 20, 1, 1, 32, 1, 1, 0, a, nullptr, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchHostFunc(b, [](void*) { flag = true; }, nullptr), CUDA_SUCCESS);
  queued = true;
  ASSERT_EQ(cuStreamSynchronize(a), CUDA_SUCCESS);
  set_kernel_slice(slice);
  EXPECT_GT(after.load(), 0);
  cuStreamDestroy(a);
  cuStreamDestroy(b);
  cuModuleUnload(m);
}

TEST_F(Launch, InsideAHostFunctionIsNotPermitted) {
  static CUfunction f;
  static std::atomic<int> result;
  f = none_;
  result = -1;
  ASSERT_EQ(cuLaunchHostFunc(nullptr, [](void*) {
              result = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
            }, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(result.load(), CUDA_ERROR_NOT_PERMITTED);
}

}  // namespace
}  // namespace cucpu::test
