// The copy engine's walker: 1D/2D/3D copies and 2D memsets over host
// memory, plus resolution of the driver's copy descriptors into it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda.h"
#include "core/allocation.h"  // MemCheck

namespace cucpu {

// A strided box: depth slices of height rows of width bytes.
struct Copy3D {
  const unsigned char* src = nullptr;
  size_t src_pitch = 0, src_slice = 0;
  unsigned char* dst = nullptr;
  size_t dst_pitch = 0, dst_slice = 0;
  size_t width = 0, height = 1, depth = 1;
};

struct Memset2D {
  unsigned char* dst = nullptr;
  size_t pitch = 0;
  unsigned elem = 1;  // 1, 2 or 4 bytes
  uint32_t value = 0;
  size_t width = 0;   // elements per row
  size_t height = 1;
};

void run_copy(const Copy3D& c);
void run_memset(const Memset2D& m);

// Resolves a CUDA_MEMCPY3D (2D descriptors are widened first) into a walk
// and the ranges to re-check at execution. Returns the driver's error for a
// malformed descriptor or memory outside a live allocation.
CUresult resolve_copy3d(const CUDA_MEMCPY3D& p, Copy3D* out, MemCheck checks[2]);
CUDA_MEMCPY3D widen(const CUDA_MEMCPY2D& p);

// Resolves a 2D memset of `height` rows of `width` elements of `elem` bytes
// (1, 2 or 4; width and height nonzero), rows `pitch` bytes apart (unused
// for one row), into a walk and the range to re-check at execution.
// CUDA_ERROR_INVALID_VALUE for a misaligned address or pitch, a pitch
// shorter than a row, a row or span whose size overflows, or a span outside
// one live allocation.
CUresult resolve_memset2d(CUdeviceptr dst, size_t pitch, unsigned elem, uint32_t value, size_t width, size_t height,
                          Memset2D* out, MemCheck* check);

// Validates that [p, p+n) is device-accessible memory the runtime tracks.
CUresult check_device_range(CUdeviceptr p, size_t n, MemCheck* check);

}  // namespace cucpu
