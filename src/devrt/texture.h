// Texture and surface fetches: the view of a resource that compiled code
// samples (tex, tld4, txq) or loads and stores (suld, sust, suq), and the
// runtime services that do it.
//
// Contract: a texture or surface handle, as kernels receive it, is the
// address of a TextureView. Its owner (core/texture.h) keeps it, and the
// memory it names, alive while any launch may still use it; `magic` holds
// kTextureMagic or kSurfaceMagic while the object exists, so that a
// service given anything else faults (kIllegalAddress) instead of reading
// through it. The view is immutable once published.
#pragma once

#include <cstdint>

#include "devrt/abi.h"

namespace cucpu::devrt {

constexpr uint64_t kTextureMagic = 0x5845545570637563ull;  // "cucpUTEX"
constexpr uint64_t kSurfaceMagic = 0x4652555370637563ull;  // "cucpSURF"

enum class TexelFormat : uint8_t { kU8, kU16, kU32, kS8, kS16, kS32, kF16, kF32 };
enum class TexAddress : uint8_t { kWrap, kClamp, kMirror, kBorder };

struct TextureView {
  uint64_t magic = 0;
  const uint8_t* base = nullptr;  // element (0, 0, 0)
  // Extents in elements, 1 where the resource has fewer dimensions;
  // `depth` counts the layers of a layered resource (6 per cube).
  uint64_t width = 1, height = 1, depth = 1;
  uint64_t pitch = 0;  // bytes between rows
  uint64_t slice = 0;  // bytes between slices (layers)
  TexelFormat format = TexelFormat::kF32;
  uint8_t channels = 1;   // 1, 2 or 4
  uint8_t elem_bytes = 4;  // bytes per element (all channels)
  uint8_t dims = 1;        // spatial dimensions: 1, 2 or 3
  bool layered = false;
  bool cubemap = false;
  // Linear (tex1Dfetch) resources read as zero outside their extent.
  bool linear = false;
  // Sampling state (textures only).
  TexAddress address[3] = {TexAddress::kClamp, TexAddress::kClamp, TexAddress::kClamp};
  bool linear_filter = false;
  bool normalized_coords = false;
  bool read_as_integer = false;  // 8- and 16-bit integers read as themselves, not as [0, 1] / [-1, 1] floats
  bool srgb = false;
  float border[4] = {0, 0, 0, 0};
};

// The operation word the compiled code passes (built in lower_texture.cpp).
enum class TexGeometry : uint8_t { k1D, k2D, k3D, kA1D, kA2D, kCube, kACube };
enum class TexValue : uint8_t { kF32, kS32, kU32 };   // what tex/tld4 return
enum class SurfBoundary : uint8_t { kTrap, kClamp, kZero };
enum class TexQuery : uint8_t {
  kWidth, kHeight, kDepth, kChannelDataType, kChannelOrder, kNormalizedCoords, kFilterMode, kAddrMode0, kAddrMode1,
  kAddrMode2, kArraySize, kNumMipmapLevels, kNumSamples
};

struct TexOp {
  TexGeometry geometry;
  TexValue value;
  bool int_coords;  // .s32 coordinates: texel indices, unfiltered
  int8_t gather;    // tld4: the component (0..3); -1 for tex
  uint32_t pack() const {
    return static_cast<uint32_t>(geometry) | static_cast<uint32_t>(value) << 4 | uint32_t{int_coords} << 8 |
           static_cast<uint32_t>(static_cast<uint8_t>(gather)) << 16;
  }
  static TexOp unpack(uint32_t w) {
    return {static_cast<TexGeometry>(w & 15), static_cast<TexValue>(w >> 4 & 15), (w >> 8 & 1) != 0,
            static_cast<int8_t>(static_cast<uint8_t>(w >> 16))};
  }
};

// suld / sust: `bytes` per access (element bytes times the vector count).
struct SurfOp {
  TexGeometry geometry;
  SurfBoundary boundary;
  uint8_t bytes;
  uint32_t pack() const {
    return static_cast<uint32_t>(geometry) | static_cast<uint32_t>(boundary) << 4 | uint32_t{bytes} << 8;
  }
  static SurfOp unpack(uint32_t w) {
    return {static_cast<TexGeometry>(w & 15), static_cast<SurfBoundary>(w >> 4 & 15), static_cast<uint8_t>(w >> 8)};
  }
};

extern "C" {
// tex / tld4: `coords` holds the instruction's coordinate vector as bits
// (an array index first for layered geometries); writes four 32-bit
// results to `out`.
void cucpu_rt_tex(BlockEnv* env, uint64_t handle, uint32_t op, const uint32_t* coords, uint32_t* out);
// txq / suq: the queried attribute (TexQuery) of a texture or surface.
uint32_t cucpu_rt_txq(BlockEnv* env, uint64_t handle, uint32_t query, uint32_t surface);
// suld.b / sust.b: `coords` as for tex (x in bytes); moves `bytes` bytes
// between the surface and `data`.
void cucpu_rt_suld(BlockEnv* env, uint64_t handle, uint32_t op, const uint32_t* coords, uint8_t* data);
void cucpu_rt_sust(BlockEnv* env, uint64_t handle, uint32_t op, const uint32_t* coords, const uint8_t* data);
}

}  // namespace cucpu::devrt
