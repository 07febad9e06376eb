// Array: a CUDA array, stored as a tightly packed host buffer
// (width * height * depth elements of format x channels bytes).
//
// Contract: an Array exists only with a byte size that fits size_t (the
// constructor throws std::bad_alloc otherwise), so row_bytes(), bytes() and
// every offset inside the array are free of overflow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cuda.h"

namespace cucpu {

class Context;

struct Array {
  Array(Context* ctx, const CUDA_ARRAY3D_DESCRIPTOR& d, size_t elem_size);
  Context* const ctx;
  const uint64_t ctx_id;  // ctx->id at creation (the context's slot may be reused)
  const CUDA_ARRAY3D_DESCRIPTOR desc;
  const size_t elem_size;
  size_t row_bytes() const { return desc.Width * elem_size; }
  size_t rows() const { return desc.Height ? desc.Height : 1; }
  size_t layers() const { return desc.Depth ? desc.Depth : 1; }
  size_t bytes() const { return row_bytes() * rows() * layers(); }
  // Shared with the executable graphs whose copies name the array, so that
  // a destroyed array's storage lives until they are gone.
  std::shared_ptr<unsigned char[]> data;
};

// Bytes per channel element of an array format; 0 for an unknown format.
// `f` is the caller's raw value (a descriptor field may hold any bit pattern).
size_t format_bytes(int f);

// Bytes of an array of d's dimensions whose elements take `elem_size` bytes:
// width * height * depth * elem_size, a 0 height or depth counting as 1.
// False when that does not fit size_t.
[[nodiscard]] bool array_bytes(const CUDA_ARRAY3D_DESCRIPTOR& d, size_t elem_size, size_t* out);

}  // namespace cucpu
