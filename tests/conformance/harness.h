// A self-contained test harness for the conformance suite, so the suite
// builds anywhere a C++17 compiler and a libcuda.so.1 exist (the GPU machine
// has no GoogleTest). Each test prints one line:
//   PASS <name>   |   FAIL <name>: <first failure>   |   SKIP <name>: <why>
// and INFO lines record what a driver returned where the suite only observes.
#pragma once

#include "../common/gate.h"
#include <cuda.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace conf {

struct Test {
  const char* name;
  void (*fn)();
};
inline std::vector<Test>& registry() {
  static std::vector<Test> r;
  return r;
}
struct Registrar {
  Registrar(const char* n, void (*f)()) { registry().push_back({n, f}); }
};

struct Failure {
  std::string what;
};
struct Skip {
  std::string why;
};

inline const char* name_of(CUresult r) {
  const char* n = nullptr;
  if (cuGetErrorName(r, &n) != CUDA_SUCCESS || !n) return "?";
  return n;
}

// True when the loaded libcuda is cucpu (for tests of behaviour where the
// real driver crashes; those are skipped there and listed as divergences).
inline bool on_cucpu() {
  CUdevice d;
  char name[256] = {0};
  if (cuDeviceGet(&d, 0) != CUDA_SUCCESS) return false;
  cuDeviceGetName(name, sizeof name, d);
  return std::strncmp(name, "cucpu", 5) == 0;
}

// Flushed at once, so rows printed before a hang survive the runner's timeout.
inline void info(const char* key, CUresult r) {
  std::printf("INFO %s %s\n", key, name_of(r));
  std::fflush(stdout);
}
inline void info_value(const char* key, long long v) {
  std::printf("INFO %s %lld\n", key, v);
  std::fflush(stdout);
}

// A host function that blocks its stream until release() (the suite's way
// to hold a stream busy without sleeping).
using Gate = test_support::Gate;

// The context every test runs in: the device's primary context, current.
inline CUcontext primary() {
  static CUcontext c = [] {
    CUdevice d;
    cuDeviceGet(&d, 0);
    CUcontext ctx = nullptr;
    cuDevicePrimaryCtxRetain(&ctx, d);
    return ctx;
  }();
  return c;
}

}  // namespace conf

#define CONF_TEST(name)                                      \
  static void conf_##name();                                 \
  static conf::Registrar conf_reg_##name(#name, conf_##name); \
  static void conf_##name()

#define EXPECT_CU(expected, call)                                                                      \
  do {                                                                                                 \
    CUresult conf_r_ = (call);                                                                         \
    if (conf_r_ != (expected))                                                                         \
      throw conf::Failure{std::string(#call) + " returned " + conf::name_of(conf_r_) + ", expected " + \
                          conf::name_of(expected) + " (line " + std::to_string(__LINE__) + ")"};       \
  } while (0)

#define ASSERT_CU(call) EXPECT_CU(CUDA_SUCCESS, call)

#define EXPECT_TRUE(cond)                                                                          \
  do {                                                                                             \
    if (!(cond)) throw conf::Failure{std::string("expected ") + #cond + " (line " + std::to_string(__LINE__) + ")"}; \
  } while (0)

#define SKIP_ON_NVIDIA(why) \
  do {                      \
    if (!conf::on_cucpu()) throw conf::Skip{why}; \
  } while (0)
