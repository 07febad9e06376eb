// check() and use_primary_context(): for the small standalone programs the tests run (driver API
// only): a failed call prints its name and code and ends the program with 2.
#pragma once

#include <cuda.h>

#include <cstdio>
#include <cstdlib>

namespace test_support {

inline void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, static_cast<int>(r));
    std::exit(2);
  }
}

// Makes device 0's primary context current (after cuInit).
inline void use_primary_context() {
  check(cuInit(0), "cuInit");
  CUdevice dev;
  CUcontext ctx;
  check(cuDeviceGet(&dev, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

}  // namespace test_support
