// The driver's copy and memset descriptors resolved into the copy engine's
// walks (copy/copy3d.h), against the allocation registry: what memory each
// side names, and the ranges to re-check when the work runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda.h"
#include "copy/copy3d.h"
#include "core/allocation.h"  // MemCheck

namespace cucpu {

// One side of a copy as the driver's descriptors name it: memory type (the
// caller's CUmemorytype, read as an integer), the pointer or array, the
// box's offset (x in bytes; y rows, z layers) and the row pitch and layer
// height in bytes and rows (0: those of the box).
struct CopySide {
  int type;
  const void* host;
  CUdeviceptr dev;
  CUarray array;
  size_t x, y, z, pitch, height;
};
// The box a copy moves: width in bytes, rows, layers.
struct CopyBox {
  size_t width_bytes, height, depth;
};
// Resolves a copy into a walk and the ranges to re-check at execution;
// every descriptor (CUDA_MEMCPY3D, a batch operation) is read into sides
// and a box once, then resolved here. The driver's error for a malformed
// side or memory outside a live allocation.
CUresult resolve_copy(const CopySide& src, const CopySide& dst, const CopyBox& box, Copy3D* out, MemCheck checks[2]);

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

// Validates that [p, p+n) is device-accessible memory the runtime tracks,
// granting writes when `writes` (a mapping of core/vmm.h may grant less).
CUresult check_device_range(CUdeviceptr p, size_t n, MemCheck* check, bool writes);
// Both ranges of a device-to-device copy of n bytes: checks[0] the
// source's (read), checks[1] the destination's (written).
CUresult check_device_ranges(CUdeviceptr src, CUdeviceptr dst, size_t n, MemCheck checks[2]);

}  // namespace cucpu
