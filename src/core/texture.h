// Texture and surface objects: a resource (an array, linear or pitched
// device memory) and, for textures, the sampling state, as the view that
// kernels fetch through (devrt/texture.h).
//
// Contract: the handle a caller receives is the object's address, which is
// also the address of its view (the first member): kernels read the view
// through the handle without a lookup. The object keeps an array's storage
// alive (the array may be destroyed first). Device memory it names must
// outlive its use, as on the driver. Objects are immutable once created.
#pragma once

#include <memory>

#include "cuda.h"
#include "devrt/texture.h"

namespace cucpu {

class Context;

struct TexObject {
  devrt::TextureView view;  // first: the handle's address is the view's
  Context* ctx = nullptr;
  bool surface = false;
  CUDA_RESOURCE_DESC resource{};
  CUDA_TEXTURE_DESC texture{};  // textures only
  std::shared_ptr<unsigned char[]> keep;  // an array's storage
  ~TexObject() { view.magic = 0; }
};

// The device's limits on texture resources in memory (its attributes).
struct TextureLimits {
  uint64_t alignment;        // CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT
  uint64_t pitch_alignment;  // ..._TEXTURE_PITCH_ALIGNMENT
  uint64_t linear_1d_width;  // ..._MAXIMUM_TEXTURE1D_LINEAR_WIDTH
  uint64_t linear_2d_width, linear_2d_height, linear_2d_pitch;  // ..._MAXIMUM_TEXTURE2D_LINEAR_*
};

// Builds a texture (`tex` given) or surface (`tex` null) object of `res`
// in context `ctx`, checking the descriptors as the driver does.
CUresult make_texture_object(Context* ctx, const CUDA_RESOURCE_DESC& res, const CUDA_TEXTURE_DESC* tex,
                             const TextureLimits& limits, TexObject** out);

}  // namespace cucpu
