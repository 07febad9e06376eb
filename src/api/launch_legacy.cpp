// The pre-4.0 launch API: a function's block shape, dynamic shared size and
// packed parameters are set by separate calls, then cuLaunch / cuLaunchGrid
// / cuLaunchGridAsync launch it (through cuLaunchKernel, with the parameters
// as a CU_LAUNCH_PARAM_BUFFER). Module functions only: a library kernel has
// no such state.
#include <algorithm>
#include <cstring>
#include <vector>

#include "api/common.h"
#include "core/module.h"

using namespace cucpu;

namespace {

template <class F>
CUresult with_legacy(CUfunction h, F&& f) {
  Function* fn = function_pool().live(h);
  if (!fn) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> g(fn->legacy_mu);
  return f(fn->legacy);
}

// Driver 580 accepts a value set past the declared size (it lies in the
// parameter space; a launch passes only the declared bytes).
CUresult set_bytes(CUfunction h, int offset, const void* p, size_t n) {
  if (offset < 0 || (!p && n)) return CUDA_ERROR_INVALID_VALUE;
  return with_legacy(h, [&](Function::LegacyLaunch& l) {
    const auto at = static_cast<size_t>(offset);
    if (at > Function::LegacyLaunch::kParamSpace || n > Function::LegacyLaunch::kParamSpace - at)
      return CUDA_ERROR_INVALID_VALUE;
    l.params.resize(Function::LegacyLaunch::kParamSpace);
    if (n) std::memcpy(l.params.data() + at, p, n);
    return CUDA_SUCCESS;
  });
}

CUresult launch(CUfunction h, unsigned gx, unsigned gy, CUstream s) {
  unsigned block[3], shared;
  std::vector<unsigned char> params;  // the declared bytes (unset ones are zero)
  if (CUresult r = with_legacy(h, [&](Function::LegacyLaunch& l) {
        std::copy(l.block, l.block + 3, block);
        shared = l.shared;
        params.assign(l.size, 0);
        std::copy_n(l.params.begin(), std::min(l.size, l.params.size()), params.begin());
        return CUDA_SUCCESS;
      }))
    return r;
  size_t size = params.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  return cuLaunchKernel(h, gx, gy, 1, block[0], block[1], block[2], shared, s, nullptr, size ? extra : nullptr);
}

}  // namespace

static CUresult impl_cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z) {
  if (x <= 0 || y <= 0 || z <= 0) return CUDA_ERROR_INVALID_VALUE;
  return with_legacy(hfunc, [&](Function::LegacyLaunch& l) {
    l.block[0] = static_cast<unsigned>(x), l.block[1] = static_cast<unsigned>(y), l.block[2] = static_cast<unsigned>(z);
    return CUDA_SUCCESS;
  });
}

static CUresult impl_cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes) {
  return with_legacy(hfunc, [&](Function::LegacyLaunch& l) {
    l.shared = bytes;
    return CUDA_SUCCESS;
  });
}

static CUresult impl_cuParamSetSize(CUfunction hfunc, unsigned int numbytes) {
  if (numbytes > Function::LegacyLaunch::kParamSpace) return CUDA_ERROR_INVALID_VALUE;
  return with_legacy(hfunc, [&](Function::LegacyLaunch& l) {
    l.size = numbytes;
    return CUDA_SUCCESS;
  });
}

static CUresult impl_cuParamSeti(CUfunction hfunc, int offset, unsigned int value) { return set_bytes(hfunc, offset, &value, sizeof value); }

static CUresult impl_cuParamSetf(CUfunction hfunc, int offset, float value) { return set_bytes(hfunc, offset, &value, sizeof value); }

static CUresult impl_cuLaunch(CUfunction f) { return launch(f, 1, 1, nullptr); }

static CUresult impl_cuLaunchGrid(CUfunction f, int grid_width, int grid_height) {
  if (grid_width <= 0 || grid_height <= 0) return CUDA_ERROR_INVALID_VALUE;
  return launch(f, static_cast<unsigned>(grid_width), static_cast<unsigned>(grid_height), nullptr);
}

static CUresult impl_cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream) {
  if (grid_width <= 0 || grid_height <= 0) return CUDA_ERROR_INVALID_VALUE;
  return launch(f, static_cast<unsigned>(grid_width), static_cast<unsigned>(grid_height), hStream);
}

#include "api/entries/launch_legacy.inc"
