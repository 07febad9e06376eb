// Shared by the runtime-API programs: each check prints what failed, and
// main ends with finish(), which prints PASS or FAIL and gives the exit code.
#pragma once
#include <cstdio>
#include <cuda_runtime.h>

static int g_failures = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::printf("check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                        \
    }                                                                      \
  } while (0)

#define CHECK_CUDA(call)                                                   \
  do {                                                                     \
    cudaError_t err_ = (call);                                             \
    if (err_ != cudaSuccess) {                                             \
      std::printf("%s:%d: %s gave %d (%s)\n", __FILE__, __LINE__, #call,   \
                  (int)err_, cudaGetErrorName(err_));                      \
      ++g_failures;                                                        \
    }                                                                      \
  } while (0)

#define CHECK_EQ_ERR(call, want)                                           \
  do {                                                                     \
    cudaError_t err_ = (call);                                             \
    if (err_ != (want)) {                                                  \
      std::printf("%s:%d: %s gave %s, expected %s\n", __FILE__, __LINE__,  \
                  #call, cudaGetErrorName(err_), cudaGetErrorName(want));  \
      ++g_failures;                                                        \
    }                                                                      \
  } while (0)

static int finish(const char* name) {
  std::printf("%s: %s\n", name, g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}
