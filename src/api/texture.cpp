// Texture and surface objects: creation, destruction and the descriptors
// read back. Kernels sample them through the handle (devrt/texture.h).
#include <atomic>

#include "api/common.h"
#include "core/texture.h"

using namespace cucpu;

namespace {

TextureLimits limits() {
  auto lim = [](CUdevice_attribute a) { return static_cast<uint64_t>(api::static_attribute(a)); };
  return {lim(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT),
          lim(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT),
          lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH),
          lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH),
          lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT),
          lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH)};
}

CUresult create(uint64_t* out, const CUDA_RESOURCE_DESC* res, const CUDA_TEXTURE_DESC* tex, bool surface) {
  if (!out || !res || (!surface && !tex)) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  TexObject* o;
  if (CUresult r = make_texture_object(c, *res, surface ? nullptr : tex, limits(), &o)) return r;
  *out = reinterpret_cast<uintptr_t>(o);
  return CUDA_SUCCESS;
}

// The live object of a handle of the kind asked for, or null.
TexObject* object_of(uint64_t h, bool surface) {
  TexObject* o = rt().textures.live(reinterpret_cast<const void*>(static_cast<uintptr_t>(h)));
  return o && o->surface == surface ? o : nullptr;
}

CUresult destroy(uint64_t h, bool surface) {
  if (h == 0) return CUDA_SUCCESS;  // driver 580: destroying the null object does nothing
  TexObject* o = object_of(h, surface);
  if (!o) return CUDA_ERROR_INVALID_VALUE;
  if (!rt().textures.try_kill(o)) return CUDA_ERROR_INVALID_VALUE;  // another thread destroyed it first
  // Kernels still running with it are the caller's to have finished, as on
  // the driver (docs/conformance.md): the view reads as dead from here.
  rt().textures.release(o);
  return CUDA_SUCCESS;
}

CUresult resource_desc(CUDA_RESOURCE_DESC* out, uint64_t h, bool surface) {
  TexObject* o = object_of(h, surface);
  if (!out || !o) return CUDA_ERROR_INVALID_VALUE;
  *out = o->resource;
  return CUDA_SUCCESS;
}

}  // namespace

static CUresult impl_cuTexObjectCreate(CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc,
                                       const CUDA_TEXTURE_DESC* pTexDesc, const CUDA_RESOURCE_VIEW_DESC* pResViewDesc) {
  if (pResViewDesc) {
    static std::atomic<bool> said{false};  // said once, as the stubs say it
    if (!said.exchange(true)) log_line("cuTexObjectCreate: resource views are not implemented: returning CUDA_ERROR_NOT_SUPPORTED");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  static_assert(sizeof(CUtexObject) == sizeof(uint64_t));
  return create(reinterpret_cast<uint64_t*>(pTexObject), pResDesc, pTexDesc, false);
}
static CUresult impl_cuTexObjectDestroy(CUtexObject texObject) { return destroy(texObject, false); }
static CUresult impl_cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUtexObject texObject) {
  return resource_desc(pResDesc, texObject, false);
}
static CUresult impl_cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC* pTexDesc, CUtexObject texObject) {
  TexObject* o = object_of(texObject, false);
  if (!pTexDesc || !o) return CUDA_ERROR_INVALID_VALUE;
  *pTexDesc = o->texture;
  // Driver 580 hands back no border color, whatever the address modes.
  for (float& c : pTexDesc->borderColor) c = 0;
  return CUDA_SUCCESS;
}
// No object has a resource view (creation refuses them): as driver 580
// does for an object made without one, this succeeds and writes nothing.
static CUresult impl_cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC* pResViewDesc, CUtexObject texObject) {
  if (!pResViewDesc || !object_of(texObject, false)) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

static CUresult impl_cuSurfObjectCreate(CUsurfObject* pSurfObject, const CUDA_RESOURCE_DESC* pResDesc) {
  static_assert(sizeof(CUsurfObject) == sizeof(uint64_t));
  return create(reinterpret_cast<uint64_t*>(pSurfObject), pResDesc, nullptr, true);
}
static CUresult impl_cuSurfObjectDestroy(CUsurfObject surfObject) { return destroy(surfObject, true); }
static CUresult impl_cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC* pResDesc, CUsurfObject surfObject) {
  return resource_desc(pResDesc, surfObject, true);
}

#include "api/entries/texture.inc"
