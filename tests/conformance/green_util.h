// Helpers of the green-context tests: the device's SM resource, a split of
// it, and a green context of a split's first group.
#pragma once

#include <cuda.h>

#include <vector>

#include "harness.h"

namespace green {

inline CUdevResource device_sm() {
  CUdevResource r{};
  if (cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
    throw conf::Failure{"cuDeviceGetDevResource failed"};
  return r;
}

// Every group of `min` SMs (rounded as the driver rounds) the device holds.
inline std::vector<CUdevResource> split(unsigned min) {
  CUdevResource dev = device_sm();
  unsigned n = 0;
  if (cuDevSmResourceSplitByCount(nullptr, &n, &dev, nullptr, 0, min) != CUDA_SUCCESS || n == 0)
    throw conf::Failure{"cuDevSmResourceSplitByCount failed"};
  std::vector<CUdevResource> groups(n);
  if (cuDevSmResourceSplitByCount(groups.data(), &n, &dev, nullptr, 0, min) != CUDA_SUCCESS)
    throw conf::Failure{"cuDevSmResourceSplitByCount failed"};
  groups.resize(n);
  return groups;
}

// A green context of one resource, destroyed with the object unless
// destroyed by the test first (release()).
struct Green {
  CUgreenCtx g = nullptr;
  CUcontext c = nullptr;  // its converted context
  explicit Green(CUdevResource r) {
    CUdevResourceDesc d = nullptr;
    if (cuDevResourceGenerateDesc(&d, &r, 1) != CUDA_SUCCESS ||
        cuGreenCtxCreate(&g, d, 0, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS || cuCtxFromGreenCtx(&c, g))
      throw conf::Failure{"making a green context failed"};
  }
  // Of the first group of the smallest partitions.
  Green() : Green(split(device_sm().sm.minSmPartitionSize)[0]) {}
  Green(const Green&) = delete;
  Green& operator=(const Green&) = delete;
  ~Green() {
    if (g) cuGreenCtxDestroy(g);
    cuCtxSetCurrent(conf::primary());
  }
  CUstream stream(int priority = 0) const {
    CUstream s = nullptr;
    if (cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, priority) != CUDA_SUCCESS)
      throw conf::Failure{"cuGreenCtxStreamCreate failed"};
    return s;
  }
  void release() { g = nullptr; }
};

}  // namespace green
