// A test fixture for tests through the public API: cuInit, then a fresh
// context of device 0, current for the test and destroyed after it.
#pragma once

#include <cuda.h>
#include <gtest/gtest.h>

class ApiContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxCreate(&ctx_, nullptr, 0, 0), CUDA_SUCCESS);
  }
  void TearDown() override { cuCtxDestroy(ctx_); }
  CUcontext ctx_ = nullptr;
};
