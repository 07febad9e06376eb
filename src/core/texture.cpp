// Building texture and surface objects: the descriptors' checks and the
// view kernels sample.
#include "core/texture.h"

#include "base/raw_enum.h"
#include "core/array.h"
#include "core/runtime.h"

namespace cucpu {
namespace {

using devrt::TexAddress;
using devrt::TexelFormat;

// The view's format of a CUarray_format (a raw value: descriptors come
// from caller memory); false for formats cucpu does not sample (block
// compressed, packed YUV, the normalized-integer formats of CUDA 11.5+).
bool texel_format(int f, TexelFormat* out) {
  switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: *out = TexelFormat::kU8; return true;
    case CU_AD_FORMAT_UNSIGNED_INT16: *out = TexelFormat::kU16; return true;
    case CU_AD_FORMAT_UNSIGNED_INT32: *out = TexelFormat::kU32; return true;
    case CU_AD_FORMAT_SIGNED_INT8: *out = TexelFormat::kS8; return true;
    case CU_AD_FORMAT_SIGNED_INT16: *out = TexelFormat::kS16; return true;
    case CU_AD_FORMAT_SIGNED_INT32: *out = TexelFormat::kS32; return true;
    case CU_AD_FORMAT_HALF: *out = TexelFormat::kF16; return true;
    case CU_AD_FORMAT_FLOAT: *out = TexelFormat::kF32; return true;
    default: return false;
  }
}

bool address_mode(int m, TexAddress* out) {
  switch (m) {
    case CU_TR_ADDRESS_MODE_WRAP: *out = TexAddress::kWrap; return true;
    case CU_TR_ADDRESS_MODE_CLAMP: *out = TexAddress::kClamp; return true;
    case CU_TR_ADDRESS_MODE_MIRROR: *out = TexAddress::kMirror; return true;
    case CU_TR_ADDRESS_MODE_BORDER: *out = TexAddress::kBorder; return true;
    default: return false;
  }
}

// The format and channel count of linear or pitched memory.
CUresult memory_format(int format, unsigned channels, devrt::TextureView* v) {
  if (channels != 1 && channels != 2 && channels != 4) return CUDA_ERROR_INVALID_VALUE;
  const size_t fb = format_bytes(format);
  if (fb == 0) return CUDA_ERROR_INVALID_VALUE;
  if (!texel_format(format, &v->format)) return CUDA_ERROR_NOT_SUPPORTED;
  v->channels = static_cast<uint8_t>(channels);
  v->elem_bytes = static_cast<uint8_t>(fb * channels);
  return CUDA_SUCCESS;
}

CUresult resource_view(const CUDA_RESOURCE_DESC& res, bool surface, const TextureLimits& lim, TexObject* o) {
  devrt::TextureView& v = o->view;
  if (res.flags != 0) return CUDA_ERROR_INVALID_VALUE;
  switch (raw_enum(res.resType)) {
    case CU_RESOURCE_TYPE_ARRAY: {
      Array* a = rt().arrays.live(res.res.array.hArray);
      if (!a) return CUDA_ERROR_INVALID_VALUE;  // driver 580: a null array too
      const CUDA_ARRAY3D_DESCRIPTOR& d = a->desc;
      // A surface over an array made without CUDA_ARRAY3D_SURFACE_LDST is
      // accepted, as driver 580 accepts it (its loads and stores reach the
      // array here).
      if (!texel_format(raw_enum(d.Format), &v.format)) return CUDA_ERROR_NOT_SUPPORTED;
      v.channels = static_cast<uint8_t>(d.NumChannels);
      v.elem_bytes = static_cast<uint8_t>(a->elem_size);
      v.layered = d.Flags & CUDA_ARRAY3D_LAYERED;
      v.cubemap = d.Flags & CUDA_ARRAY3D_CUBEMAP;
      v.width = d.Width;
      v.height = a->rows();
      v.depth = a->layers();
      v.dims = v.cubemap ? 2 : v.layered ? (d.Height ? 2 : 1) : d.Depth ? 3 : d.Height ? 2 : 1;
      v.pitch = a->row_bytes();
      v.slice = a->row_bytes() * a->rows();
      v.base = a->data.get();
      o->keep = a->data;
      return CUDA_SUCCESS;
    }
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
      return surface ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;  // cucpu has no mipmapped arrays
    case CU_RESOURCE_TYPE_LINEAR: {
      if (surface) return CUDA_ERROR_INVALID_VALUE;
      const auto& l = res.res.linear;
      if (CUresult r = memory_format(raw_enum(l.format), l.numChannels, &v)) return r;
      if (l.devPtr == 0 || l.devPtr % lim.alignment != 0) return CUDA_ERROR_INVALID_VALUE;
      const uint64_t count = l.sizeInBytes / v.elem_bytes;
      if (count == 0 || count > lim.linear_1d_width) return CUDA_ERROR_INVALID_VALUE;
      v.linear = true;
      v.dims = 1;
      v.width = count;
      v.pitch = l.sizeInBytes;
      v.base = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(l.devPtr));
      return CUDA_SUCCESS;
    }
    case CU_RESOURCE_TYPE_PITCH2D: {
      if (surface) return CUDA_ERROR_INVALID_VALUE;
      const auto& p = res.res.pitch2D;
      if (CUresult r = memory_format(raw_enum(p.format), p.numChannels, &v)) return r;
      if (p.devPtr == 0 || p.devPtr % lim.alignment != 0 || p.pitchInBytes % lim.pitch_alignment != 0)
        return CUDA_ERROR_INVALID_VALUE;
      if (p.width == 0 || p.height == 0 || p.width > p.pitchInBytes / v.elem_bytes || p.width > lim.linear_2d_width ||
          p.height > lim.linear_2d_height || p.pitchInBytes > lim.linear_2d_pitch)
        return CUDA_ERROR_INVALID_VALUE;
      v.dims = 2;
      v.width = p.width;
      v.height = p.height;
      v.pitch = p.pitchInBytes;
      v.slice = p.pitchInBytes * p.height;
      v.base = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(p.devPtr));
      return CUDA_SUCCESS;
    }
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult sampling_state(const CUDA_TEXTURE_DESC& t, devrt::TextureView* v) {
  constexpr unsigned kFlags = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB |
                              CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION | CU_TRSF_SEAMLESS_CUBEMAP;
  if (t.flags & ~kFlags) return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < 3; ++i)
    if (!address_mode(raw_enum(t.addressMode[i]), &v->address[i])) return CUDA_ERROR_INVALID_VALUE;
  const int filter = raw_enum(t.filterMode);
  if (filter != CU_TR_FILTER_MODE_POINT && filter != CU_TR_FILTER_MODE_LINEAR) return CUDA_ERROR_INVALID_VALUE;
  v->linear_filter = filter == CU_TR_FILTER_MODE_LINEAR;
  v->normalized_coords = t.flags & CU_TRSF_NORMALIZED_COORDINATES;
  v->read_as_integer = t.flags & CU_TRSF_READ_AS_INTEGER;
  v->srgb = t.flags & CU_TRSF_SRGB;
  for (int i = 0; i < 4; ++i) v->border[i] = t.borderColor[i];
  return CUDA_SUCCESS;
}

}  // namespace

CUresult make_texture_object(Context* ctx, const CUDA_RESOURCE_DESC& res, const CUDA_TEXTURE_DESC* tex,
                             const TextureLimits& limits, TexObject** out) {
  TexObject* o = rt().textures.create();
  o->ctx = ctx;
  o->surface = tex == nullptr;
  o->resource = res;
  CUresult r = resource_view(res, o->surface, limits, o);
  if (r == CUDA_SUCCESS && tex) {
    o->texture = *tex;
    r = sampling_state(*tex, &o->view);
  }
  if (r != CUDA_SUCCESS) {
    rt().textures.kill(o);
    rt().textures.release(o);
    return r;
  }
  o->view.magic = o->surface ? devrt::kSurfaceMagic : devrt::kTextureMagic;
  *out = o;
  return CUDA_SUCCESS;
}

}  // namespace cucpu
