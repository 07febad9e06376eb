// The texture and surface services (texture.h): texel decoding, the
// address modes, point and linear filtering (weights in 8-bit fixed point,
// as the hardware's filter takes them), gathers, queries, and surface
// loads and stores with their boundary modes.
#include "devrt/texture.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "devrt/block_runner.h"
#include "base/half_bits.h"

namespace cucpu::devrt {
namespace {

const TextureView& view_of(uint64_t handle, uint64_t magic) {
  const auto* v = reinterpret_cast<const TextureView*>(handle);
  // An access through a handle that is no live object of the kind faults
  // as a wild address would.
  if (handle == 0 || handle % alignof(TextureView) != 0 || v->magic != magic)
    raise_fault(FaultKind::kIllegalAddress, handle, std::string());
  return *v;
}

// Whether fetches return floats: float formats, and 8- and 16-bit integers
// read as normalized values.
bool returns_float(const TextureView& v) {
  switch (v.format) {
    case TexelFormat::kF16:
    case TexelFormat::kF32: return true;
    case TexelFormat::kU32:
    case TexelFormat::kS32: return false;
    default: return !v.read_as_integer;
  }
}

size_t channel_bytes(TexelFormat f) {
  switch (f) {
    case TexelFormat::kU8:
    case TexelFormat::kS8: return 1;
    case TexelFormat::kU16:
    case TexelFormat::kS16:
    case TexelFormat::kF16: return 2;
    default: return 4;
  }
}

float srgb_to_linear(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }

// One texel's four channels, as floats (returns_float) or as 32-bit
// integers; channels the format lacks read as 0 (driver 580: the fourth
// too, and a border texel's).
struct Texel {
  float f[4];
  uint32_t i[4];
};

Texel decode(const TextureView& v, const uint8_t* p) {
  Texel t{{0, 0, 0, 0}, {0, 0, 0, 0}};
  const size_t cb = channel_bytes(v.format);
  for (unsigned c = 0; c < v.channels; ++c, p += cb) {
    uint32_t raw = 0;
    std::memcpy(&raw, p, cb);
    float f = 0;
    uint32_t i = raw;
    switch (v.format) {
      case TexelFormat::kU8: f = static_cast<float>(raw) / 255.0f; break;
      case TexelFormat::kU16: f = static_cast<float>(raw) / 65535.0f; break;
      case TexelFormat::kS8:
        i = static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(raw)));
        f = std::fmax(static_cast<float>(static_cast<int8_t>(raw)) / 127.0f, -1.0f);
        break;
      case TexelFormat::kS16:
        i = static_cast<uint32_t>(static_cast<int32_t>(static_cast<int16_t>(raw)));
        f = std::fmax(static_cast<float>(static_cast<int16_t>(raw)) / 32767.0f, -1.0f);
        break;
      case TexelFormat::kF16: f = half_bits_to_float(static_cast<uint16_t>(raw)); break;
      case TexelFormat::kF32: std::memcpy(&f, &raw, 4); break;
      default: break;  // 32-bit integers: the bits themselves
    }
    if (v.srgb && v.format == TexelFormat::kU8 && c < 3) f = srgb_to_linear(f);
    t.f[c] = f;
    t.i[c] = i;
  }
  return t;
}

// An index after the address mode along an axis of n texels; -1 outside
// (border). Wrap and mirror apply to normalized coordinates only; with
// unnormalized ones they clamp, as on the GPU.
int64_t address_index(int64_t i, int64_t n, TexAddress m, bool normalized) {
  if (i >= 0 && i < n) return i;
  if (m == TexAddress::kBorder) return -1;
  if (normalized && m == TexAddress::kWrap) return ((i % n) + n) % n;
  if (normalized && m == TexAddress::kMirror) {
    const int64_t p = ((i % (2 * n)) + 2 * n) % (2 * n);
    return p < n ? p : 2 * n - 1 - p;
  }
  return i < 0 ? 0 : n - 1;
}

// A float coordinate in texel units along an axis of n texels. A
// normalized coordinate first becomes fixed point of 21 fractional bits,
// rounded down, as driver 580's hardware takes it (a weight that the exact
// product puts a hair above a rounding step can fall below it:
// tests/programs/textures.cu on the H200).
double texel_coord(float c, int64_t n, TexAddress m, bool normalized) {
  double x = c;
  if (!normalized) return x;
  constexpr double kFixedOne = 2097152.0;  // 2^21
  x = std::floor(x * kFixedOne) / kFixedOne;
  if (m == TexAddress::kWrap) x -= std::floor(x);
  if (m == TexAddress::kMirror) {
    const double f = std::floor(x);
    x -= f;
    if (static_cast<int64_t>(f) & 1) x = 1 - x;
  }
  return x * static_cast<double>(n);
}

// The filter's weights, in 256ths (as driver 580's hardware weighs
// texels): along each axis, the upper texel's weight is the coordinate's
// fraction rounded half up; the products of several axes' weights are
// rounded half up to 256ths too; and each corner of the footprint weighs
// what inclusion-exclusion over those products gives (in 2D: ab, a - ab,
// b - ab, 1 - a - b + ab), so that the weights always sum to one.
int64_t axis_weight(double ub) { return static_cast<int64_t>(std::floor((ub - std::floor(ub)) * 256.0 + 0.5)); }

// The rounded product of the weights of the axes in `mask`, in 256ths.
int64_t weight_product(const int64_t f[3], unsigned mask) {
  int64_t num = 1, den = 1;
  int n = 0;
  for (int ax = 0; ax < 3; ++ax)
    if (mask >> ax & 1) {
      num *= f[ax];
      if (n++) den *= 256;
    }
  return n == 0 ? 256 : (num + den / 2) / den;
}

// The weight, in 256ths, of the corner that takes the upper texel along the
// axes in `corner` (of `axes`, the filtered ones).
int64_t corner_weight(const int64_t f[3], unsigned corner, unsigned axes) {
  int64_t w = 0;
  for (unsigned s = axes;; s = (s - 1) & axes) {  // every subset of axes
    if ((s & corner) == corner) w += (__builtin_popcount(s & ~corner) & 1 ? -1 : 1) * weight_product(f, s);
    if (s == 0) break;
  }
  return w;
}

int64_t floor_index(double u) {
  if (!(u > -9.0e18 && u < 9.0e18)) return u > 0 ? INT64_MAX / 4 : INT64_MIN / 4;  // NaN and huge: far outside
  return static_cast<int64_t>(std::floor(u));
}

struct Sampler {
  const TextureView& v;
  int64_t layer;  // the layer (layered), else 0

  // The texel at (i, j, k) after the address mode, or the border.
  Texel at(int64_t i, int64_t j, int64_t k) const {
    const bool norm = v.normalized_coords;
    i = address_index(i, static_cast<int64_t>(v.width), v.address[0], norm);
    if (v.dims >= 2) j = address_index(j, static_cast<int64_t>(v.height), v.address[1], norm);
    if (v.dims >= 3) k = address_index(k, static_cast<int64_t>(v.depth), v.address[2], norm);
    if (i < 0 || j < 0 || k < 0) {
      Texel b{};
      for (int c = 0; c < v.channels; ++c) {
        b.f[c] = v.border[c];
        std::memcpy(&b.i[c], &v.border[c], 4);
      }
      return b;
    }
    const int64_t slab = v.dims >= 3 ? k : layer;
    return decode(v, v.base + static_cast<uint64_t>(slab) * v.slice + static_cast<uint64_t>(j) * v.pitch +
                         static_cast<uint64_t>(i) * v.elem_bytes);
  }
};

void store(const Texel& t, bool as_float, uint32_t* out) {
  for (int c = 0; c < 4; ++c) {
    if (as_float) std::memcpy(&out[c], &t.f[c], 4);
    else out[c] = t.i[c];
  }
}

// Cube-map coordinates: the face the direction's major axis picks, and the
// normalized coordinates on it.
void cube_face(float x, float y, float z, int64_t* face, float* s, float* t) {
  const float ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z);
  float ma, sc, tc;
  if (ax >= ay && ax >= az) {
    ma = ax, *face = x >= 0 ? 0 : 1, sc = x >= 0 ? -z : z, tc = -y;
  } else if (ay >= az) {
    ma = ay, *face = y >= 0 ? 2 : 3, sc = x, tc = y >= 0 ? z : -z;
  } else {
    ma = az, *face = z >= 0 ? 4 : 5, sc = z >= 0 ? x : -x, tc = -y;
  }
  *s = ma > 0 ? (sc / ma + 1) / 2 : 0.5f;
  *t = ma > 0 ? (tc / ma + 1) / 2 : 0.5f;
}

float as_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace
}  // namespace cucpu::devrt

using namespace cucpu::devrt;

extern "C" {

void cucpu_rt_tex(BlockEnv*, uint64_t handle, uint32_t op_word, const uint32_t* coords, uint32_t* out) {
  const TextureView& v = view_of(handle, kTextureMagic);
  const TexOp op = TexOp::unpack(op_word);
  const bool layered = op.geometry == TexGeometry::kA1D || op.geometry == TexGeometry::kA2D ||
                       op.geometry == TexGeometry::kACube;
  const uint32_t* c = coords + (layered ? 1 : 0);
  int64_t layer = 0;
  if (layered) {
    const int64_t layers = static_cast<int64_t>(v.depth) / (op.geometry == TexGeometry::kACube ? 6 : 1);
    // The index reads as unsigned: a negative one is past the last layer.
    layer = std::min<int64_t>(coords[0], layers - 1);
  }
  TextureView face_view;
  const TextureView* sv = &v;
  float x, y = 0, z = 0;
  if (op.geometry == TexGeometry::kCube || op.geometry == TexGeometry::kACube) {
    int64_t face;
    cube_face(as_float(c[0]), as_float(c[1]), as_float(c[2]), &face, &x, &y);
    face_view = v;  // a face: a 2D image of normalized coordinates, clamped
    face_view.dims = 2;
    face_view.normalized_coords = true;
    face_view.address[0] = face_view.address[1] = TexAddress::kClamp;
    sv = &face_view;
    layer = layer * 6 + face;
  } else if (op.int_coords) {
    Sampler s{v, layer};
    const int64_t i = static_cast<int32_t>(c[0]);
    const int64_t j = v.dims >= 2 ? static_cast<int32_t>(c[1]) : 0;
    const int64_t k = v.dims >= 3 ? static_cast<int32_t>(c[2]) : 0;
    const bool outside = i < 0 || i >= static_cast<int64_t>(v.width) ||
                         (v.dims >= 2 && (j < 0 || j >= static_cast<int64_t>(v.height))) ||
                         (v.dims >= 3 && (k < 0 || k >= static_cast<int64_t>(v.depth)));
    Texel t = outside && v.linear ? Texel{} : s.at(i, j, k);
    store(t, returns_float(v), out);
    return;
  } else {
    x = as_float(c[0]);
    if (v.dims >= 2) y = as_float(c[1]);
    if (v.dims >= 3) z = as_float(c[2]);
  }
  const TextureView& w = *sv;
  Sampler s{w, layer};
  const bool norm = w.normalized_coords;
  const double u = texel_coord(x, static_cast<int64_t>(w.width), w.address[0], norm);
  const double t = w.dims >= 2 ? texel_coord(y, static_cast<int64_t>(w.height), w.address[1], norm) : 0;
  const double r = w.dims >= 3 ? texel_coord(z, static_cast<int64_t>(w.depth), w.address[2], norm) : 0;
  const bool as_f = returns_float(w);
  if (op.gather >= 0) {  // the bilinear footprint's texels, one component each
    const int64_t i = floor_index(u - 0.5), j = floor_index(t - 0.5);
    const Texel q[4] = {s.at(i, j + 1, 0), s.at(i + 1, j + 1, 0), s.at(i + 1, j, 0), s.at(i, j, 0)};
    for (int k = 0; k < 4; ++k) {
      if (as_f) std::memcpy(&out[k], &q[k].f[op.gather], 4);
      else out[k] = q[k].i[op.gather];
    }
    return;
  }
  if (!w.linear_filter || !as_f) {
    store(s.at(floor_index(u), floor_index(t), floor_index(r)), as_f, out);
    return;
  }
  const double ub = u - 0.5, tb = t - 0.5, rb = r - 0.5;
  const int64_t i = floor_index(ub), j = w.dims >= 2 ? floor_index(tb) : 0, k = w.dims >= 3 ? floor_index(rb) : 0;
  const int64_t f[3] = {axis_weight(ub), w.dims >= 2 ? axis_weight(tb) : 0, w.dims >= 3 ? axis_weight(rb) : 0};
  const unsigned axes = (1u << w.dims) - 1;
  double acc[4] = {0, 0, 0, 0};
  for (unsigned corner = 0; corner <= axes; ++corner) {
    if ((corner & axes) != corner) continue;
    const double weight = static_cast<double>(corner_weight(f, corner, axes)) / 256.0;
    const Texel q = s.at(i + (corner & 1), j + (corner >> 1 & 1), k + (corner >> 2 & 1));
    for (int ch = 0; ch < 4; ++ch) acc[ch] += weight * q.f[ch];
  }
  for (int ch = 0; ch < 4; ++ch) {
    const float f = static_cast<float>(acc[ch]);
    std::memcpy(&out[ch], &f, 4);
  }
}

uint32_t cucpu_rt_txq(BlockEnv*, uint64_t handle, uint32_t query, uint32_t surface) {
  const TextureView& v = view_of(handle, surface ? kSurfaceMagic : kTextureMagic);
  const uint64_t layers = v.cubemap ? v.depth / 6 : v.depth;
  switch (static_cast<TexQuery>(query)) {
    case TexQuery::kWidth: return static_cast<uint32_t>(v.width);
    case TexQuery::kHeight: return static_cast<uint32_t>(v.height);
    case TexQuery::kDepth: return v.dims >= 3 ? static_cast<uint32_t>(v.depth) : 1;
    case TexQuery::kArraySize: return v.layered ? static_cast<uint32_t>(layers) : 0;
    case TexQuery::kNormalizedCoords: return v.normalized_coords;
    case TexQuery::kFilterMode: return v.linear_filter;
    case TexQuery::kAddrMode0: return static_cast<uint32_t>(v.address[0]);
    case TexQuery::kAddrMode1: return static_cast<uint32_t>(v.address[1]);
    case TexQuery::kAddrMode2: return static_cast<uint32_t>(v.address[2]);
    case TexQuery::kNumMipmapLevels: return 1;
    default: return 0;
  }
}

}  // extern "C"

namespace cucpu::devrt {
namespace {

// A surface access's byte address, or null when it falls outside and the
// boundary mode drops it (kZero). kTrap faults; kClamp moves it to the
// nearest element inside.
uint8_t* surface_address(const TextureView& v, const SurfOp& op, const uint32_t* coords) {
  const bool layered = op.geometry == TexGeometry::kA1D || op.geometry == TexGeometry::kA2D;
  const uint32_t* c = coords + (layered ? 1 : 0);
  const int64_t row_bytes = static_cast<int64_t>(v.width * v.elem_bytes);
  int64_t x = static_cast<int32_t>(c[0]);
  int64_t y = v.dims >= 2 ? static_cast<int32_t>(c[1]) : 0;
  int64_t z = v.dims >= 3 ? static_cast<int32_t>(c[2]) : layered ? static_cast<int32_t>(coords[0]) : 0;
  const int64_t rows = static_cast<int64_t>(v.height), slabs = static_cast<int64_t>(v.depth);
  const bool inside = x >= 0 && x + op.bytes <= row_bytes && y >= 0 && y < rows && z >= 0 && z < slabs;
  if (!inside) {
    if (op.boundary == SurfBoundary::kZero) return nullptr;
    if (op.boundary == SurfBoundary::kTrap)
      raise_fault(FaultKind::kIllegalAddress, reinterpret_cast<uintptr_t>(v.base), std::string());
    const int64_t last = std::max<int64_t>(row_bytes - op.bytes, 0);
    x = x < 0 ? 0 : std::min(x, last) / op.bytes * op.bytes;
    y = std::min(std::max<int64_t>(y, 0), rows - 1);
    z = std::min(std::max<int64_t>(z, 0), slabs - 1);
  }
  if (x % op.bytes != 0) raise_fault(FaultKind::kMisalignedAddress, reinterpret_cast<uintptr_t>(v.base) + x, std::string());
  return const_cast<uint8_t*>(v.base) + static_cast<uint64_t>(z) * v.slice + static_cast<uint64_t>(y) * v.pitch +
         static_cast<uint64_t>(x);
}

}  // namespace
}  // namespace cucpu::devrt

extern "C" {

void cucpu_rt_suld(BlockEnv*, uint64_t handle, uint32_t op_word, const uint32_t* coords, uint8_t* data) {
  const TextureView& v = view_of(handle, kSurfaceMagic);
  const SurfOp op = SurfOp::unpack(op_word);
  if (const uint8_t* p = surface_address(v, op, coords)) std::memcpy(data, p, op.bytes);
  else std::memset(data, 0, op.bytes);
}

void cucpu_rt_sust(BlockEnv*, uint64_t handle, uint32_t op_word, const uint32_t* coords, const uint8_t* data) {
  const TextureView& v = view_of(handle, kSurfaceMagic);
  const SurfOp op = SurfOp::unpack(op_word);
  if (uint8_t* p = surface_address(v, op, coords)) std::memcpy(p, data, op.bytes);
}

}  // extern "C"
