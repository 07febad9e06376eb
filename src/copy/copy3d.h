// The copy engine's walker: 1D/2D/3D copies and 2D memsets over host
// memory. A leaf: it knows nothing of streams, allocations or descriptors
// (core/copy_resolve.h resolves the driver's descriptors into these).
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace cucpu
