// Shared by the benchmark files: abort on a failed call, and one current
// context (the device's primary) for every benchmark.
#pragma once

#include <cuda.h>

#include <cstdio>
#include <cstdlib>

namespace bench {

inline void check(CUresult r) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "CUDA call failed: %d\n", r);
    std::abort();
  }
}

// Initializes once per process; every benchmark thread makes the context current.
inline void use_primary_context() {
  static CUcontext ctx = [] {
    check(cuInit(0));
    CUcontext c;
    check(cuDevicePrimaryCtxRetain(&c, 0));
    return c;
  }();
  check(cuCtxSetCurrent(ctx));
}

}  // namespace bench
