#include "core/array.h"

#include <new>

#include "base/checked_math.h"
#include "core/context.h"

namespace cucpu {

Array::Array(Context* ctx, const CUDA_ARRAY3D_DESCRIPTOR& d, size_t elem_size)
    : ctx(ctx), ctx_id(ctx->id), desc(d), elem_size(elem_size) {
  size_t n;
  if (!array_bytes(d, elem_size, &n)) throw std::bad_alloc();  // callers check first; never wrap
  data.reset(new unsigned char[n ? n : 1]());
}

bool array_bytes(const CUDA_ARRAY3D_DESCRIPTOR& d, size_t elem_size, size_t* out) {
  return checked_product(out, d.Width, elem_size, d.Height ? d.Height : size_t{1}, d.Depth ? d.Depth : size_t{1});
}

size_t format_bytes(int f) {
  switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
    case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1:
      return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
    case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1:
      return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
      return 4;
    default:
      return 0;
  }
}

}  // namespace cucpu
