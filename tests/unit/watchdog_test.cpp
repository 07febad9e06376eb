// The kernel watchdog through the C API: run with CUCPU_KERNEL_TIMEOUT set
// (CMakeLists.txt), every kind of launch of a kernel that never ends fails
// with CUDA_ERROR_LAUNCH_TIMEOUT, sticky, and stderr names the kernel; a
// kernel that ends in time runs to its right result with the polls compiled in.
// Each test runs in a process of its own (gtest_discover_tests), so the
// sticky error of one never reaches the next.
#include <gtest/gtest.h>
#include <cuda.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api_context_test.h"

namespace {

class Watchdog : public ApiContextTest {
 protected:
  void SetUp() override {
    ApiContextTest::SetUp();
    std::ifstream file(std::string(CUCPU_PTX_TEST_DIR) + "/endless.sm90.ptx");
    std::stringstream text;
    text << file.rdbuf();
    ASSERT_EQ(cuModuleLoadData(&m_, text.str().c_str()), CUDA_SUCCESS);
    ASSERT_EQ(cuMemAlloc(&buf_, 1 << 20), CUDA_SUCCESS);
    ASSERT_EQ(cuMemsetD8(buf_, 0, 1 << 20), CUDA_SUCCESS);
  }
  CUfunction fn(const char* name) {
    CUfunction f = nullptr;
    EXPECT_EQ(cuModuleGetFunction(&f, m_, name), CUDA_SUCCESS);
    return f;
  }
  // Launches `name` (grid x block), waits, and checks that the launch timed
  // out: the code, its stickiness, and the kernel's name on stderr.
  // Returns what stderr said.
  std::string expect_timeout(const char* name, unsigned grid, unsigned block, void** args) {
    testing::internal::CaptureStderr();
    EXPECT_EQ(cuLaunchKernel(fn(name), grid, 1, 1, block, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_TIMEOUT);
    return expect_reported(name);
  }
  std::string expect_reported(const char* name) {
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find(std::string("kernel ") + name + " ran longer than CUCPU_KERNEL_TIMEOUT"), std::string::npos) << err;
    CUdeviceptr d;
    EXPECT_EQ(cuMemAlloc(&d, 4), CUDA_ERROR_LAUNCH_TIMEOUT);  // sticky
    return err;
  }
  CUmodule m_ = nullptr;
  CUdeviceptr buf_ = 0;
};

TEST_F(Watchdog, PlainLoopInOneBlockTimesOut) {
  void* args[] = {&buf_};
  const std::string err = expect_timeout("loop_forever", 1, 32, args);
  EXPECT_NE(err.find("at PTX line 52 "), std::string::npos) << err;  // the loop's back edge in endless.sm90.ptx
}

TEST_F(Watchdog, PlainLoopInEveryBlockOfAParallelLaunchTimesOut) {
  void* args[] = {&buf_};
  expect_timeout("loop_forever", 64, 256, args);
}

TEST_F(Watchdog, LoopRoundABarrierTimesOut) {
  void* args[] = {&buf_};
  expect_timeout("barrier_forever", 4, 128, args);
}

TEST_F(Watchdog, SpinOnAFlagNobodySetsTimesOut) {
  CUdeviceptr out = buf_ + 4096;
  void* args[] = {&buf_, &out};
  expect_timeout("wait_for_flag", 2, 64, args);
}

TEST_F(Watchdog, LoopInACalledFunctionTimesOut) {
  void* args[] = {&buf_};
  expect_timeout("call_forever", 1, 8, args);
}

TEST_F(Watchdog, CooperativeLaunchTimesOut) {
  void* args[] = {&buf_};
  testing::internal::CaptureStderr();
  ASSERT_EQ(cuLaunchCooperativeKernel(fn("loop_forever"), 2, 1, 1, 32, 1, 1, 0, nullptr, args), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_TIMEOUT);
  expect_reported("loop_forever");
}

TEST_F(Watchdog, GraphKernelNodeTimesOut) {
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  void* args[] = {&buf_};
  ASSERT_EQ(cuLaunchKernel(fn("loop_forever"), 1, 1, 1, 32, 1, 1, 0, s, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchKernel(fn("loop_forever"), 64, 1, 1, 256, 1, 1, 0, s, args, nullptr), CUDA_SUCCESS);
  CUgraph g;
  ASSERT_EQ(cuStreamEndCapture(s, &g), CUDA_SUCCESS);
  CUgraphExec e;
  ASSERT_EQ(cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
  testing::internal::CaptureStderr();
  ASSERT_EQ(cuGraphLaunch(e, s), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_TIMEOUT);
  expect_reported("loop_forever");
}

TEST_F(Watchdog, KernelThatEndsInTimeRunsRight) {
  const unsigned blocks = 64, threads = 128;
  int n = 1000;
  void* args[] = {&buf_, &n};
  ASSERT_EQ(cuLaunchKernel(fn("sum_to"), blocks, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  std::vector<int> out(blocks * threads);
  ASSERT_EQ(cuMemcpyDtoH(out.data(), buf_, out.size() * 4), CUDA_SUCCESS);
  for (size_t i = 0; i < out.size(); ++i) {
    int s = 0;
    for (int k = 0; k < n; ++k) s += k ^ static_cast<int>(i % threads);
    ASSERT_EQ(out[i], s) << i;
  }
}

}  // namespace
