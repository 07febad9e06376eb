// Texture and surface objects (tests/kernels/texture.cu): the objects'
// API (creation, validation, the descriptors read back) and what kernels
// fetch through them: point and linear filtering, unnormalized and
// normalized coordinates, each address mode, the read modes, linear,
// pitched, 3D and layered resources, gathers, and surface loads and
// stores with each boundary mode. Expected values come from the model
// below (texel centres at i + 0.5; a linear filter's weights in 256ths,
// as driver 580's hardware weighs: each axis's fraction rounded half up,
// their product rounded half up, the corners by inclusion-exclusion;
// channels a format lacks read 0).
#include <cmath>
#include <cstring>

#include "kernels_util.h"

namespace {

const char* kTexturePtx = "ptx/texture.sm90.ptx";

// An array of w x h x d elements (h, d 0 for fewer dimensions) filled from `data`.
CUarray make_array(CUarray_format fmt, unsigned channels, size_t w, size_t h, size_t d, unsigned flags,
                   const void* data, size_t elem_bytes) {
  CUDA_ARRAY3D_DESCRIPTOR ad{};
  ad.Width = w;
  ad.Height = h;
  ad.Depth = d;
  ad.Format = fmt;
  ad.NumChannels = channels;
  ad.Flags = flags;
  CUarray a = nullptr;
  ASSERT_CU(cuArray3DCreate(&a, &ad));
  CUDA_MEMCPY3D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = data;
  c.srcPitch = w * elem_bytes;
  c.srcHeight = h ? h : 1;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = w * elem_bytes;
  c.Height = h ? h : 1;
  c.Depth = d ? d : 1;
  ASSERT_CU(cuMemcpy3D(&c));
  return a;
}

// Copies an array's rows (row_bytes each, rows x slices of them) to `out`.
void read_array(CUarray a, void* out, size_t row_bytes, size_t rows, size_t slices) {
  CUDA_MEMCPY3D c{};
  c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  c.srcArray = a;
  c.dstMemoryType = CU_MEMORYTYPE_HOST;
  c.dstHost = out;
  c.dstPitch = row_bytes;
  c.dstHeight = rows;
  c.WidthInBytes = row_bytes;
  c.Height = rows;
  c.Depth = slices;
  ASSERT_CU(cuMemcpy3D(&c));
}

struct TexSpec {
  CUaddress_mode address = CU_TR_ADDRESS_MODE_CLAMP;
  CUfilter_mode filter = CU_TR_FILTER_MODE_POINT;
  unsigned flags = 0;
  float border[4] = {0, 0, 0, 0};
};

CUtexObject texture_of(const CUDA_RESOURCE_DESC& rd, const TexSpec& s) {
  CUDA_TEXTURE_DESC td{};
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = s.address;
  td.filterMode = s.filter;
  td.flags = s.flags;
  std::memcpy(td.borderColor, s.border, sizeof td.borderColor);
  CUtexObject t = 0;
  ASSERT_CU(cuTexObjectCreate(&t, &rd, &td, nullptr));
  return t;
}

CUtexObject texture_of_array(CUarray a, const TexSpec& s) {
  CUDA_RESOURCE_DESC rd{};
  rd.resType = CU_RESOURCE_TYPE_ARRAY;
  rd.res.array.hArray = a;
  return texture_of(rd, s);
}

struct F4 {
  float x, y, z, w;
};
struct I4 {
  int32_t x, y, z, w;
};

// The model: a texel index after the address mode, or -1 for "outside"
// (border).
long address_index(long i, long n, CUaddress_mode m) {
  if (i >= 0 && i < n) return i;
  if (m == CU_TR_ADDRESS_MODE_BORDER) return -1;
  if (m == CU_TR_ADDRESS_MODE_WRAP) return ((i % n) + n) % n;
  if (m == CU_TR_ADDRESS_MODE_MIRROR) {
    long p = ((i % (2 * n)) + 2 * n) % (2 * n);
    return p < n ? p : 2 * n - 1 - p;
  }
  return i < 0 ? 0 : n - 1;
}

// A coordinate in texel units: normalized coordinates, rounded down to 21
// fractional bits, scaled by n (wrap and mirror fold them into [0, 1)
// first, as the hardware does).
double texel_coord(double c, long n, bool normalized, CUaddress_mode m) {
  if (!normalized) return c;
  c = std::floor(c * 2097152.0) / 2097152.0;
  if (m == CU_TR_ADDRESS_MODE_WRAP) c = c - std::floor(c);
  if (m == CU_TR_ADDRESS_MODE_MIRROR) {
    double f = std::floor(c);
    c = c - f;
    if (static_cast<long>(f) & 1) c = 1 - c;
  }
  return c * static_cast<double>(n);
}

// A one-channel float texture of w x h: the fetch at (x, y) per the model,
// all four channels (those the format lacks read as 0, a border texel's
// too).
F4 sample2d4(const std::vector<float>& v, long w, long h, float x, float y, const TexSpec& s) {
  const bool norm = s.flags & CU_TRSF_NORMALIZED_COORDINATES;
  double u = texel_coord(x, w, norm, s.address), t = texel_coord(y, h, norm, s.address);
  auto at = [&](long i, long j) -> F4 {
    long a = address_index(i, w, s.address), b = address_index(j, h, s.address);
    if (a < 0 || b < 0) return F4{s.border[0], 0, 0, 0};
    return F4{v[static_cast<size_t>(b * w + a)], 0, 0, 0};
  };
  if (s.filter == CU_TR_FILTER_MODE_POINT) return at(static_cast<long>(std::floor(u)), static_cast<long>(std::floor(t)));
  double ub = u - 0.5, tb = t - 0.5;
  long i = static_cast<long>(std::floor(ub)), j = static_cast<long>(std::floor(tb));
  const long a = static_cast<long>(std::floor((ub - std::floor(ub)) * 256 + 0.5));
  const long b = static_cast<long>(std::floor((tb - std::floor(tb)) * 256 + 0.5));
  const long ab = (a * b + 128) / 256;
  const F4 q[4] = {at(i, j), at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)};
  const float wt[4] = {static_cast<float>(256 - a - b + ab) / 256, static_cast<float>(a - ab) / 256,
                       static_cast<float>(b - ab) / 256, static_cast<float>(ab) / 256};
  F4 r{0, 0, 0, 0};
  for (int k = 0; k < 4; ++k) {
    r.x += wt[k] * q[k].x, r.y += wt[k] * q[k].y, r.z += wt[k] * q[k].z, r.w += wt[k] * q[k].w;
  }
  return r;
}
float sample2d(const std::vector<float>& v, long w, long h, float x, float y, const TexSpec& s) {
  return sample2d4(v, w, h, x, y, s).x;
}

std::vector<float> points2d(int n, float lo_x, float hi_x, float lo_y, float hi_y, uint64_t seed) {
  kt::Rng r(seed);
  std::vector<float> p(2 * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    p[2 * i] = lo_x + (hi_x - lo_x) * static_cast<float>(r.u32() % 100000) / 100000.0f;
    p[2 * i + 1] = lo_y + (hi_y - lo_y) * static_cast<float>(r.u32() % 100000) / 100000.0f;
  }
  return p;
}

bool near(float got, float want, float tol) { return std::fabs(got - want) <= tol * (1 + std::fabs(want)); }

// One-channel float texture, 7 x 5, fetched through tex_2d_scalar and
// tex_2d_f32 under `s`, at n random points of [lo, hi]^2 (texel units
// times the extent for normalized coordinates).
void check_2d(const char* what, const TexSpec& s, float lo, float hi, float tol) {
  const long w = 7, h = 5;
  std::vector<float> v(w * h);
  for (long j = 0; j < h; ++j)
    for (long i = 0; i < w; ++i) v[j * w + i] = static_cast<float>(10 * j + i) + 0.25f * static_cast<float>((i * j) % 3);
  CUarray a = make_array(CU_AD_FORMAT_FLOAT, 1, w, h, 0, 0, v.data(), 4);
  CUtexObject t = texture_of_array(a, s);
  const bool norm = s.flags & CU_TRSF_NORMALIZED_COORDINATES;
  const int n = 256;
  std::vector<float> p = norm ? points2d(n, lo, hi, lo, hi, 7) : points2d(n, lo * w, hi * w, lo * h, hi * h, 7);
  kt::Module m(kTexturePtx);
  kt::Buf<float> xy(p);
  kt::Buf<float> scalar(n);
  kt::Buf<F4> vec(n);
  kt::run(m.fn("tex_2d_scalar"), {1}, {n}, 0, t, xy.p, n, scalar.p);
  kt::run(m.fn("tex_2d_f32"), {1}, {n}, 0, t, xy.p, n, vec.p);
  std::vector<float> got = scalar.get();
  std::vector<F4> got4 = vec.get();
  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = sample2d(v, w, h, p[2 * i], p[2 * i + 1], s);
  kt::Checker ck(what, [&](size_t i) { return "(" + std::to_string(p[2 * i]) + ", " + std::to_string(p[2 * i + 1]) + ")"; });
  ck.ops(got, want, n, {"tex2D<float>"}, [&](float g, float e, size_t) { return near(g, e, tol); });
  std::vector<float> x4(n), rest(3 * n), rest_want(3 * n);
  for (int i = 0; i < n; ++i) {
    const F4 e = sample2d4(v, w, h, p[2 * i], p[2 * i + 1], s);
    x4[i] = got4[i].x;
    rest[i] = got4[i].y, rest[n + i] = got4[i].z, rest[2 * n + i] = got4[i].w;
    rest_want[i] = e.y, rest_want[n + i] = e.z, rest_want[2 * n + i] = e.w;
  }
  ck.ops(x4, got, n, {"tex2D<float4>.x == tex2D<float>"});
  ck.ops(rest, rest_want, n, {"y (absent)", "z (absent)", "w (absent)"},
         [&](float g, float e, size_t) { return near(g, e, tol); });
  ck.done();
  ASSERT_CU(cuTexObjectDestroy(t));
  ASSERT_CU(cuArrayDestroy(a));
}

}  // namespace

CONF_TEST(TexturePointClampUnnormalized) {
  check_2d("point, clamp", TexSpec{}, -0.5f, 1.5f, 0);
}

CONF_TEST(TexturePointBorderUnnormalized) {
  TexSpec s;
  s.address = CU_TR_ADDRESS_MODE_BORDER;
  s.border[0] = -7.5f;
  s.border[1] = 0.5f;
  s.border[3] = 3.0f;
  check_2d("point, border", s, -0.5f, 1.5f, 0);
}

CONF_TEST(TextureLinearClampUnnormalized) {
  TexSpec s;
  s.filter = CU_TR_FILTER_MODE_LINEAR;
  check_2d("linear, clamp", s, -0.3f, 1.3f, 2e-6f);
}

CONF_TEST(TextureLinearBorderUnnormalized) {
  TexSpec s;
  s.filter = CU_TR_FILTER_MODE_LINEAR;
  s.address = CU_TR_ADDRESS_MODE_BORDER;
  check_2d("linear, border", s, -0.3f, 1.3f, 2e-6f);
}

CONF_TEST(TextureNormalizedWrapAndMirror) {
  for (CUaddress_mode m : {CU_TR_ADDRESS_MODE_WRAP, CU_TR_ADDRESS_MODE_MIRROR, CU_TR_ADDRESS_MODE_CLAMP}) {
    for (CUfilter_mode f : {CU_TR_FILTER_MODE_POINT, CU_TR_FILTER_MODE_LINEAR}) {
      TexSpec s;
      s.address = m;
      s.filter = f;
      s.flags = CU_TRSF_NORMALIZED_COORDINATES;
      std::string what = "normalized, address mode " + std::to_string(m) + ", filter " + std::to_string(f);
      check_2d(what.c_str(), s, -2.0f, 3.0f, f == CU_TR_FILTER_MODE_LINEAR ? 2e-6f : 0);
    }
  }
}

// Four-channel 8-bit data: normalized floats by default, the integers
// themselves with CU_TRSF_READ_AS_INTEGER; signed data alike.
CONF_TEST(TextureReadModes) {
  const long w = 4, h = 2;
  std::vector<uint8_t> u(w * h * 4);
  for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<uint8_t>(i * 37 + 5);
  kt::Module m(kTexturePtx);
  std::vector<float> p;
  for (long j = 0; j < h; ++j)
    for (long i = 0; i < w; ++i) p.push_back(static_cast<float>(i) + 0.5f), p.push_back(static_cast<float>(j) + 0.5f);
  const int n = static_cast<int>(w * h);
  kt::Buf<float> xy(p);
  kt::Checker ck("read modes");
  for (CUarray_format fmt : {CU_AD_FORMAT_UNSIGNED_INT8, CU_AD_FORMAT_SIGNED_INT8}) {
    const bool sgn = fmt == CU_AD_FORMAT_SIGNED_INT8;
    CUarray a = make_array(fmt, 4, w, h, 0, 0, u.data(), 4);
    CUtexObject tf = texture_of_array(a, TexSpec{});
    TexSpec si;
    si.flags = CU_TRSF_READ_AS_INTEGER;
    CUtexObject ti = texture_of_array(a, si);
    kt::Buf<F4> f(n);
    kt::Buf<I4> iv(n);
    kt::run(m.fn("tex_2d_f32"), {1}, {n}, 0, tf, xy.p, n, f.p);
    kt::run(m.fn(sgn ? "tex_2d_s32" : "tex_2d_u32"), {1}, {n}, 0, ti, xy.p, n, iv.p);
    std::vector<F4> gf = f.get();
    std::vector<I4> gi = iv.get();
    std::vector<float> got_f, want_f;
    std::vector<int32_t> got_i, want_i;
    for (int k = 0; k < n; ++k)
      for (int c = 0; c < 4; ++c) {
        const uint8_t raw = u[static_cast<size_t>(k * 4 + c)];
        const int value = sgn ? static_cast<int8_t>(raw) : raw;
        got_f.push_back((&gf[k].x)[c]);
        got_i.push_back((&gi[k].x)[c]);
        want_f.push_back(sgn ? std::fmax(static_cast<float>(value) / 127.0f, -1.0f) : static_cast<float>(value) / 255.0f);
        want_i.push_back(value);
      }
    ck.ops(got_f, want_f, got_f.size(), {sgn ? "s8 normalized" : "u8 normalized"},
           [](float g, float e, size_t) { return near(g, e, 1e-6f); });
    ck.ops(got_i, want_i, got_i.size(), {sgn ? "s8 as integer" : "u8 as integer"});
    ASSERT_CU(cuTexObjectDestroy(tf));
    ASSERT_CU(cuTexObjectDestroy(ti));
    ASSERT_CU(cuArrayDestroy(a));
  }
  ck.done();
}

// tex1Dfetch on linear memory: the element at the index; outside the
// range, zeros.
CONF_TEST(TextureLinearMemoryFetch) {
  const int count = 100;
  std::vector<F4> v(count);
  std::vector<I4> vi(count);
  for (int i = 0; i < count; ++i) {
    v[i] = {static_cast<float>(i), -static_cast<float>(i), 0.5f * static_cast<float>(i), 1000.0f + static_cast<float>(i)};
    vi[i] = {i, -i, i * i, 7};
  }
  kt::Buf<F4> data(v);
  kt::Buf<I4> idata(vi);
  CUDA_RESOURCE_DESC rd{};
  rd.resType = CU_RESOURCE_TYPE_LINEAR;
  rd.res.linear.devPtr = data.p;
  rd.res.linear.format = CU_AD_FORMAT_FLOAT;
  rd.res.linear.numChannels = 4;
  rd.res.linear.sizeInBytes = count * sizeof(F4);
  CUtexObject t = texture_of(rd, TexSpec{});
  rd.res.linear.devPtr = idata.p;
  rd.res.linear.format = CU_AD_FORMAT_SIGNED_INT32;
  TexSpec si;
  si.flags = CU_TRSF_READ_AS_INTEGER;
  CUtexObject ti = texture_of(rd, si);
  std::vector<int> idx = {0, 1, 50, 99, 100, 101, 5000, -1, -100};
  const int n = static_cast<int>(idx.size());
  kt::Module m(kTexturePtx);
  kt::Buf<int> ib(idx);
  kt::Buf<F4> out(n);
  kt::Buf<I4> iout(n);
  kt::run(m.fn("tex_1d_fetch_f32"), {1}, {n}, 0, t, ib.p, n, out.p);
  kt::run(m.fn("tex_1d_fetch_s32"), {1}, {n}, 0, ti, ib.p, n, iout.p);
  std::vector<F4> g = out.get();
  std::vector<I4> gi = iout.get();
  std::vector<float> got, want;
  std::vector<int32_t> goti, wanti;
  for (int k = 0; k < n; ++k) {
    const bool in = idx[k] >= 0 && idx[k] < count;
    const F4 e = in ? v[idx[k]] : F4{0, 0, 0, 0};
    const I4 ei = in ? vi[idx[k]] : I4{0, 0, 0, 0};
    for (int c = 0; c < 4; ++c) {
      got.push_back((&g[k].x)[c]), want.push_back((&e.x)[c]);
      goti.push_back((&gi[k].x)[c]), wanti.push_back((&ei.x)[c]);
    }
  }
  kt::Checker ck("tex1Dfetch", [&](size_t i) { return "index " + std::to_string(idx[i / 4]); });
  ck.ops(got, want, got.size(), {"float4"});
  ck.ops(goti, wanti, goti.size(), {"int4"});
  ck.done();
  ASSERT_CU(cuTexObjectDestroy(t));
  ASSERT_CU(cuTexObjectDestroy(ti));
}

// A pitched 2D resource in device memory, point and linear filtered.
CONF_TEST(TexturePitch2D) {
  const long w = 9, h = 6;
  CUdeviceptr base = 0;
  size_t pitch = 0;
  ASSERT_CU(cuMemAllocPitch(&base, &pitch, w * 4, h, 4));
  std::vector<float> v(w * h);
  for (long i = 0; i < w * h; ++i) v[i] = static_cast<float>(i % 13) * 1.5f - 3;
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = v.data();
  c.srcPitch = w * 4;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = base;
  c.dstPitch = pitch;
  c.WidthInBytes = w * 4;
  c.Height = h;
  ASSERT_CU(cuMemcpy2D(&c));
  CUDA_RESOURCE_DESC rd{};
  rd.resType = CU_RESOURCE_TYPE_PITCH2D;
  rd.res.pitch2D.devPtr = base;
  rd.res.pitch2D.format = CU_AD_FORMAT_FLOAT;
  rd.res.pitch2D.numChannels = 1;
  rd.res.pitch2D.width = w;
  rd.res.pitch2D.height = h;
  rd.res.pitch2D.pitchInBytes = pitch;
  kt::Module m(kTexturePtx);
  const int n = 128;
  std::vector<float> p = points2d(n, -1, static_cast<float>(w) + 1, -1, static_cast<float>(h) + 1, 11);
  kt::Buf<float> xy(p);
  kt::Checker ck("pitch2D", [&](size_t i) { return "(" + std::to_string(p[2 * i]) + ", " + std::to_string(p[2 * i + 1]) + ")"; });
  for (CUfilter_mode f : {CU_TR_FILTER_MODE_POINT, CU_TR_FILTER_MODE_LINEAR}) {
    TexSpec s;
    s.filter = f;
    CUtexObject t = texture_of(rd, s);
    kt::Buf<float> out(n);
    kt::run(m.fn("tex_2d_scalar"), {1}, {n}, 0, t, xy.p, n, out.p);
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[i] = sample2d(v, w, h, p[2 * i], p[2 * i + 1], s);
    ck.ops(out.get(), want, n, {f == CU_TR_FILTER_MODE_POINT ? "point" : "linear"},
           [](float g, float e, size_t) { return near(g, e, 2e-6f); });
    ASSERT_CU(cuTexObjectDestroy(t));
  }
  ck.done();
  ASSERT_CU(cuMemFree(base));
}

// A 3D float4 array, point filtered at texel centres and clamped outside;
// and a 2D layered array, each layer its own image.
CONF_TEST(Texture3DAndLayered) {
  const long w = 4, h = 3, d = 5;
  std::vector<F4> v(w * h * d);
  for (long i = 0; i < w * h * d; ++i)
    v[i] = {static_cast<float>(i), static_cast<float>(i % w), static_cast<float>(i / w % h), static_cast<float>(i / (w * h))};
  CUarray a3 = make_array(CU_AD_FORMAT_FLOAT, 4, w, h, d, 0, v.data(), 16);
  CUtexObject t3 = texture_of_array(a3, TexSpec{});
  CUarray al = make_array(CU_AD_FORMAT_FLOAT, 4, w, h, d, CUDA_ARRAY3D_LAYERED, v.data(), 16);
  CUtexObject tl = texture_of_array(al, TexSpec{});
  std::vector<float> p3;
  std::vector<float> p2;
  std::vector<int> layer;
  std::vector<long> want3, want2;
  kt::Rng r(3);
  const int n = 96;
  for (int k = 0; k < n; ++k) {
    long x = r.range(-2, static_cast<int>(w) + 1), y = r.range(-2, static_cast<int>(h) + 1),
         z = r.range(-2, static_cast<int>(d) + 1);
    p3.push_back(static_cast<float>(x) + 0.5f), p3.push_back(static_cast<float>(y) + 0.5f),
        p3.push_back(static_cast<float>(z) + 0.5f);
    long cx = std::min(std::max(x, 0L), w - 1), cy = std::min(std::max(y, 0L), h - 1),
         cz = std::min(std::max(z, 0L), d - 1);
    want3.push_back((cz * h + cy) * w + cx);
    p2.push_back(static_cast<float>(x) + 0.5f), p2.push_back(static_cast<float>(y) + 0.5f);
    long lz = z < 0 ? d - 1 : std::min(z, d - 1);  // the index reads as unsigned: negative is past the last
    layer.push_back(static_cast<int>(z));
    want2.push_back((lz * h + cy) * w + cx);
  }
  kt::Module m(kTexturePtx);
  kt::Buf<float> b3(p3), b2(p2);
  kt::Buf<int> bl(layer);
  kt::Buf<F4> o3(n), o2(n);
  kt::run(m.fn("tex_3d_f32"), {1}, {n}, 0, t3, b3.p, n, o3.p);
  kt::run(m.fn("tex_2d_layered_f32"), {1}, {n}, 0, tl, b2.p, bl.p, n, o2.p);
  std::vector<F4> g3 = o3.get(), g2 = o2.get();
  std::vector<float> got, want;
  for (int k = 0; k < n; ++k) got.push_back(g3[k].x), want.push_back(v[want3[k]].x);
  for (int k = 0; k < n; ++k) got.push_back(g2[k].x), want.push_back(v[want2[k]].x);
  kt::Checker ck("3D and layered", [&](size_t i) {
    return "(" + std::to_string(p3[3 * i]) + ", " + std::to_string(p3[3 * i + 1]) + ", " + std::to_string(p3[3 * i + 2]) + ")";
  });
  ck.ops(got, want, n, {"tex3D", "tex2DLayered"});
  ck.done();
  ASSERT_CU(cuTexObjectDestroy(t3));
  ASSERT_CU(cuTexObjectDestroy(tl));
  ASSERT_CU(cuArrayDestroy(a3));
  ASSERT_CU(cuArrayDestroy(al));
}

// tex2Dgather: component c of the four texels a bilinear fetch at (x, y)
// would weigh, in the order (i, j+1), (i+1, j+1), (i+1, j), (i, j).
CONF_TEST(TextureGather) {
  const long w = 5, h = 4;
  std::vector<F4> v(w * h);
  for (long i = 0; i < w * h; ++i)
    v[i] = {static_cast<float>(i), static_cast<float>(100 + i), static_cast<float>(200 + i), static_cast<float>(300 + i)};
  CUarray a = make_array(CU_AD_FORMAT_FLOAT, 4, w, h, 0, CUDA_ARRAY3D_TEXTURE_GATHER, v.data(), 16);
  CUtexObject t = texture_of_array(a, TexSpec{});
  const int n = 64;
  std::vector<float> p = points2d(n, -1, static_cast<float>(w) + 1, -1, static_cast<float>(h) + 1, 5);
  kt::Module m(kTexturePtx);
  kt::Buf<float> xy(p);
  kt::Buf<F4> out(4 * n);
  kt::run(m.fn("tex_gather_f32"), {1}, {n}, 0, t, xy.p, n, out.p);
  std::vector<F4> g = out.get();
  std::vector<float> got, want;
  for (int k = 0; k < n; ++k) {
    long i = static_cast<long>(std::floor(p[2 * k] - 0.5f)), j = static_cast<long>(std::floor(p[2 * k + 1] - 0.5f));
    auto at = [&](long x, long y, int c) {
      x = address_index(x, w, CU_TR_ADDRESS_MODE_CLAMP), y = address_index(y, h, CU_TR_ADDRESS_MODE_CLAMP);
      return (&v[y * w + x].x)[c];
    };
    for (int c = 0; c < 4; ++c) {
      const F4& r = g[4 * k + c];
      got.push_back(r.x), got.push_back(r.y), got.push_back(r.z), got.push_back(r.w);
      want.push_back(at(i, j + 1, c)), want.push_back(at(i + 1, j + 1, c)), want.push_back(at(i + 1, j, c)),
          want.push_back(at(i, j, c));
    }
  }
  kt::Checker ck("tex2Dgather", [&](size_t i) { return "(" + std::to_string(p[i / 16 * 2]) + ", " + std::to_string(p[i / 16 * 2 + 1]) + ")"; });
  ck.ops(got, want, got.size(), {"gather"});
  ck.done();
  ASSERT_CU(cuTexObjectDestroy(t));
  ASSERT_CU(cuArrayDestroy(a));
}

// Surfaces: a 2D int surface read and written in place; reads outside it
// with the zero and clamp modes; a write outside it with the zero mode
// dropped; 1D float4 and 3D uchar4 surfaces.
CONF_TEST(SurfaceLoadsAndStores) {
  const long w = 6, h = 5;
  std::vector<int32_t> v(w * h);
  for (long i = 0; i < w * h; ++i) v[i] = static_cast<int32_t>(i * 3 - 20);
  CUarray a = make_array(CU_AD_FORMAT_SIGNED_INT32, 1, w, h, 0, CUDA_ARRAY3D_SURFACE_LDST, v.data(), 4);
  CUDA_RESOURCE_DESC rd{};
  rd.resType = CU_RESOURCE_TYPE_ARRAY;
  rd.res.array.hArray = a;
  CUsurfObject s = 0;
  ASSERT_CU(cuSurfObjectCreate(&s, &rd));
  kt::Module m(kTexturePtx);
  kt::run(m.fn("surf_2d_rw"), {1, 1}, {8, 8}, 0, s, static_cast<int>(w), static_cast<int>(h));
  std::vector<int32_t> pts = {0, 0, 20, 4, -4, 0, 0, -1, 24, 0, 100, 100, -400, 2, 8, 7, 4, 2};
  const int n = static_cast<int>(pts.size() / 2);
  kt::Buf<int32_t> bp(pts), zero(n), clamp(n);
  kt::run(m.fn("surf_2d_read_modes"), {1}, {n}, 0, s, bp.p, n, zero.p, clamp.p);
  kt::run(m.fn("surf_2d_write"), {1}, {1}, 0, s, 4 * static_cast<int>(w), 0, 12345, 0);
  std::vector<int32_t> back(w * h);
  read_array(a, back.data(), w * 4, h, 1);
  std::vector<int32_t> want(w * h), wz(n), wc(n);
  for (long i = 0; i < w * h; ++i) want[i] = 2 * v[i] + 1;
  for (int k = 0; k < n; ++k) {
    long bx = pts[2 * k], y = pts[2 * k + 1];
    long x = bx >= 0 ? bx / 4 : -1;
    const bool in = bx >= 0 && x < w && y >= 0 && y < h;
    wz[k] = in ? want[y * w + x] : 0;
    long cx = std::min(std::max(bx / 4, 0L), w - 1), cy = std::min(std::max(y, 0L), h - 1);
    wc[k] = want[cy * w + cx];
  }
  kt::Checker ck("surfaces", [&](size_t i) { return "(" + std::to_string(pts[2 * i]) + ", " + std::to_string(pts[2 * i + 1]) + ")"; });
  ck.ops(back, want, back.size(), {"read, write back"});
  ck.ops(zero.get(), wz, n, {"read, zero mode"});
  ck.ops(clamp.get(), wc, n, {"read, clamp mode"});

  const long w1 = 10;
  std::vector<F4> v1(w1);
  for (long i = 0; i < w1; ++i) v1[i] = {static_cast<float>(i), 0.5f, -1.0f, 100.0f};
  CUarray a1 = make_array(CU_AD_FORMAT_FLOAT, 4, w1, 0, 0, CUDA_ARRAY3D_SURFACE_LDST, v1.data(), 16);
  rd.res.array.hArray = a1;
  CUsurfObject s1 = 0;
  ASSERT_CU(cuSurfObjectCreate(&s1, &rd));
  kt::run(m.fn("surf_1d_f4"), {1}, {16}, 0, s1, static_cast<int>(w1));
  std::vector<F4> b1(w1);
  ASSERT_CU(cuMemcpyAtoH(b1.data(), a1, 0, w1 * 16));
  std::vector<float> g1, e1;
  for (long i = 0; i < w1; ++i)
    for (int k = 0; k < 4; ++k) g1.push_back((&b1[i].x)[k]), e1.push_back((&v1[i].x)[k] + 1);
  ck.ops(g1, e1, g1.size(), {"1D float4"});

  const long w3 = 3, h3 = 2, d3 = 4;
  std::vector<uint8_t> v3(w3 * h3 * d3 * 4);
  for (size_t i = 0; i < v3.size(); ++i) v3[i] = static_cast<uint8_t>(i * 11);
  CUarray a3 = make_array(CU_AD_FORMAT_UNSIGNED_INT8, 4, w3, h3, d3, CUDA_ARRAY3D_SURFACE_LDST, v3.data(), 4);
  rd.res.array.hArray = a3;
  CUsurfObject s3 = 0;
  ASSERT_CU(cuSurfObjectCreate(&s3, &rd));
  kt::run(m.fn("surf_3d_u8x4"), {static_cast<int>(d3)}, {4, 4}, 0, s3, static_cast<int>(w3), static_cast<int>(h3),
          static_cast<int>(d3));
  std::vector<uint8_t> b3(v3.size());
  read_array(a3, b3.data(), w3 * 4, h3, d3);
  std::vector<uint8_t> e3(v3.size());
  for (size_t i = 0; i < v3.size(); ++i) e3[i] = static_cast<uint8_t>(v3[i] + 1);
  ck.ops(b3, e3, b3.size(), {"3D uchar4"});
  ck.done();
  ASSERT_CU(cuSurfObjectDestroy(s));
  ASSERT_CU(cuSurfObjectDestroy(s1));
  ASSERT_CU(cuSurfObjectDestroy(s3));
  ASSERT_CU(cuArrayDestroy(a));
  ASSERT_CU(cuArrayDestroy(a1));
  ASSERT_CU(cuArrayDestroy(a3));
}

// The objects' API: bad arguments, descriptors read back, destroyed handles.
CONF_TEST(TextureObjectApi) {
  float data[16] = {};
  CUarray a = make_array(CU_AD_FORMAT_FLOAT, 1, 4, 4, 0, 0, data, 4);
  CUDA_RESOURCE_DESC rd{};
  rd.resType = CU_RESOURCE_TYPE_ARRAY;
  rd.res.array.hArray = a;
  CUDA_TEXTURE_DESC td{};
  td.addressMode[0] = CU_TR_ADDRESS_MODE_WRAP;
  td.addressMode[1] = CU_TR_ADDRESS_MODE_BORDER;
  td.filterMode = CU_TR_FILTER_MODE_LINEAR;
  td.flags = CU_TRSF_NORMALIZED_COORDINATES;
  td.borderColor[2] = 0.25f;
  CUtexObject t = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexObjectCreate(nullptr, &rd, &td, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexObjectCreate(&t, nullptr, &td, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexObjectCreate(&t, &rd, nullptr, nullptr));
  CUDA_RESOURCE_DESC bad = rd;
  bad.flags = 1;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexObjectCreate(&t, &bad, &td, nullptr));
  bad = rd;
  bad.res.array.hArray = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexObjectCreate(&t, &bad, &td, nullptr));
  bad.resType = static_cast<CUresourcetype>(77);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexObjectCreate(&t, &bad, &td, nullptr));
  ASSERT_CU(cuTexObjectCreate(&t, &rd, &td, nullptr));
  EXPECT_TRUE(t != 0);
  CUDA_RESOURCE_DESC rb{};
  ASSERT_CU(cuTexObjectGetResourceDesc(&rb, t));
  EXPECT_TRUE(rb.resType == CU_RESOURCE_TYPE_ARRAY && rb.res.array.hArray == a);
  CUDA_TEXTURE_DESC tb{};
  ASSERT_CU(cuTexObjectGetTextureDesc(&tb, t));
  // Recorded field by field: what the driver hands back.
  conf::info_value("tex_desc_address0", tb.addressMode[0]);
  conf::info_value("tex_desc_address1", tb.addressMode[1]);
  conf::info_value("tex_desc_address2", tb.addressMode[2]);
  conf::info_value("tex_desc_filter", tb.filterMode);
  conf::info_value("tex_desc_flags", tb.flags);
  conf::info_value("tex_desc_border2_x1000", static_cast<long long>(tb.borderColor[2] * 1000));
  conf::info_value("tex_desc_max_anisotropy", tb.maxAnisotropy);
  conf::info_value("tex_desc_mipmap_filter", tb.mipmapFilterMode);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexObjectGetResourceDesc(nullptr, t));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexObjectGetTextureDesc(nullptr, t));
  ASSERT_CU(cuTexObjectDestroy(t));

  // Linear memory: the pointer must meet the texture alignment.
  kt::Buf<float> lin(1024);
  int align = 0;
  ASSERT_CU(cuDeviceGetAttribute(&align, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 0));
  conf::info_value("texture_alignment", align);
  CUDA_RESOURCE_DESC lr{};
  lr.resType = CU_RESOURCE_TYPE_LINEAR;
  lr.res.linear.devPtr = lin.p + 4;
  lr.res.linear.format = CU_AD_FORMAT_FLOAT;
  lr.res.linear.numChannels = 1;
  lr.res.linear.sizeInBytes = 1000;
  CUDA_TEXTURE_DESC point{};
  conf::info("tex_linear_misaligned", cuTexObjectCreate(&t, &lr, &point, nullptr));
  lr.res.linear.devPtr = lin.p;
  lr.res.linear.numChannels = 3;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuTexObjectCreate(&t, &lr, &point, nullptr));
  lr.res.linear.numChannels = 1;
  lr.res.linear.devPtr = 0;
  conf::info("tex_linear_null", cuTexObjectCreate(&t, &lr, &point, nullptr));

  // Recorded: the edges the documentation leaves open.
  {
    CUarray ia = make_array(CU_AD_FORMAT_SIGNED_INT32, 1, 4, 4, 0, 0, data, 4);
    CUDA_RESOURCE_DESC ir{};
    ir.resType = CU_RESOURCE_TYPE_ARRAY;
    ir.res.array.hArray = ia;
    CUDA_TEXTURE_DESC lin_filter{};
    lin_filter.filterMode = CU_TR_FILTER_MODE_LINEAR;
    CUtexObject x = 0;
    CUresult r = cuTexObjectCreate(&x, &ir, &point, nullptr);
    conf::info("tex_int32_normalized_read", r);
    if (r == CUDA_SUCCESS) cuTexObjectDestroy(x);
    r = cuTexObjectCreate(&x, &ir, &lin_filter, nullptr);
    conf::info("tex_int32_linear_filter", r);
    if (r == CUDA_SUCCESS) cuTexObjectDestroy(x);
    CUDA_TEXTURE_DESC bad_mode{};
    bad_mode.addressMode[0] = static_cast<CUaddress_mode>(9);
    conf::info("tex_bad_address_mode", cuTexObjectCreate(&x, &rd, &bad_mode, nullptr));
    CUDA_TEXTURE_DESC bad_flags{};
    bad_flags.flags = 0x100;
    conf::info("tex_bad_flags", cuTexObjectCreate(&x, &rd, &bad_flags, nullptr));
    ASSERT_CU(cuArrayDestroy(ia));
    conf::info("tex_destroy_zero", cuTexObjectDestroy(0));
    ASSERT_CU(cuTexObjectCreate(&x, &rd, &point, nullptr));
    ASSERT_CU(cuTexObjectDestroy(x));
    CUDA_RESOURCE_DESC after{};
    conf::info("tex_get_after_destroy", cuTexObjectGetResourceDesc(&after, x));
    CUDA_RESOURCE_VIEW_DESC view{};
    ASSERT_CU(cuTexObjectCreate(&x, &rd, &point, nullptr));
    conf::info("tex_get_view_without_one", cuTexObjectGetResourceViewDesc(&view, x));
    ASSERT_CU(cuTexObjectDestroy(x));
    lr.res.linear.devPtr = lin.p;
    lr.res.linear.sizeInBytes = 1002;  // not a whole number of elements
    r = cuTexObjectCreate(&x, &lr, &point, nullptr);
    conf::info("tex_linear_partial_element", r);
    if (r == CUDA_SUCCESS) cuTexObjectDestroy(x);
    lr.res.linear.sizeInBytes = 1000;
  }

  // Surfaces need an array made for them.
  CUsurfObject s = 0;
  // A null output pointer: a segmentation fault on driver 580
  // (tools/probes/texture_probe.cpp), INVALID_VALUE on cucpu.
  if (conf::on_cucpu()) EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuSurfObjectCreate(nullptr, &rd));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuSurfObjectCreate(&s, nullptr));
  // An array made without SURFACE_LDST: driver 580 accepts it.
  ASSERT_CU(cuSurfObjectCreate(&s, &rd));
  ASSERT_CU(cuSurfObjectDestroy(s));
  EXPECT_CU(CUDA_SUCCESS, cuSurfObjectDestroy(0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuSurfObjectCreate(&s, &lr));  // not an array
  CUarray sa = make_array(CU_AD_FORMAT_FLOAT, 1, 4, 4, 0, CUDA_ARRAY3D_SURFACE_LDST, data, 4);
  rd.res.array.hArray = sa;
  ASSERT_CU(cuSurfObjectCreate(&s, &rd));
  CUDA_RESOURCE_DESC sb{};
  ASSERT_CU(cuSurfObjectGetResourceDesc(&sb, s));
  EXPECT_TRUE(sb.resType == CU_RESOURCE_TYPE_ARRAY && sb.res.array.hArray == sa);
  ASSERT_CU(cuSurfObjectDestroy(s));
  ASSERT_CU(cuArrayDestroy(sa));
  ASSERT_CU(cuArrayDestroy(a));
}

// A store outside a surface with the trap mode faults the launch: the
// synchronization reports it (a child process: the fault is sticky).
CONF_TEST(FaultChildSurfaceTrap) {
  if (!kt::in_fault_child()) throw conf::Skip{"runs in a child process of SurfaceTrapFaults"};
  CUdevice dev;
  ASSERT_CU(cuDeviceGet(&dev, 0));
  CUcontext own = nullptr;
  ASSERT_CU(cuCtxCreate(&own, nullptr, 0, dev));
  {
    int32_t data[16] = {};
    CUarray a = make_array(CU_AD_FORMAT_SIGNED_INT32, 1, 4, 4, 0, CUDA_ARRAY3D_SURFACE_LDST, data, 4);
    CUDA_RESOURCE_DESC rd{};
    rd.resType = CU_RESOURCE_TYPE_ARRAY;
    rd.res.array.hArray = a;
    CUsurfObject s = 0;
    ASSERT_CU(cuSurfObjectCreate(&s, &rd));
    kt::Module m(kTexturePtx);
    ASSERT_CU(kt::launch(m.fn("surf_2d_write"), {1}, {1}, 0, nullptr, s, 64, 0, 1, 1));
    CUresult r = cuCtxSynchronize();
    conf::info("surface_trap_sync", r);
    EXPECT_TRUE(r != CUDA_SUCCESS);
  }
  cuCtxDestroy(own);
}

CONF_TEST(SurfaceTrapFaults) {
  if (kt::in_fault_child()) throw conf::Skip{"the parent of FaultChildSurfaceTrap"};
  kt::run_in_child("FaultChildSurfaceTrap");
}

namespace {

// The corner weights of a linear fetch, in 256ths, over `dims` axes whose
// upper weights are f[] (the model's inclusion-exclusion over the rounded
// products of the axes' weights).
long corner_weight(const long f[3], unsigned corner, int dims) {
  const unsigned axes = (1u << dims) - 1;
  long w = 0;
  for (unsigned s = 0; s <= axes; ++s) {
    if ((s & corner) != corner) continue;
    long num = 1, den = 1;
    int n = 0;
    for (int ax = 0; ax < dims; ++ax)
      if (s >> ax & 1) {
        num *= f[ax];
        if (n++) den *= 256;
      }
    const long product = n == 0 ? 256 : (num + den / 2) / den;
    w += (__builtin_popcount(s & ~corner) & 1 ? -1 : 1) * product;
  }
  return w;
}

}  // namespace

// A 3D float texture, linearly filtered (clamped), at random points.
CONF_TEST(Texture3DLinear) {
  const long w = 4, h = 3, d = 5;
  std::vector<float> v(w * h * d);
  for (long i = 0; i < w * h * d; ++i) v[i] = static_cast<float>((i * 7) % 23) - 5;
  CUarray a = make_array(CU_AD_FORMAT_FLOAT, 1, w, h, d, 0, v.data(), 4);
  TexSpec s;
  s.filter = CU_TR_FILTER_MODE_LINEAR;
  CUtexObject t = texture_of_array(a, s);
  kt::Rng r(17);
  const int n = 128;
  std::vector<float> p(3 * n);
  for (auto& c : p) c = -1.0f + 7.0f * static_cast<float>(r.u32() % 100000) / 100000.0f;
  kt::Module m(kTexturePtx);
  kt::Buf<float> bp(p);
  kt::Buf<F4> out(n);
  kt::run(m.fn("tex_3d_f32"), {1}, {n}, 0, t, bp.p, n, out.p);
  std::vector<F4> g = out.get();
  std::vector<float> got(n), want(n);
  const long ext[3] = {w, h, d};
  for (int k = 0; k < n; ++k) {
    long lo[3], f[3];
    for (int ax = 0; ax < 3; ++ax) {
      const double u = static_cast<double>(p[3 * k + ax]) - 0.5;
      lo[ax] = static_cast<long>(std::floor(u));
      f[ax] = static_cast<long>(std::floor((u - std::floor(u)) * 256 + 0.5));
    }
    double acc = 0;
    for (unsigned c = 0; c < 8; ++c) {
      long idx[3];
      for (int ax = 0; ax < 3; ++ax) idx[ax] = address_index(lo[ax] + (c >> ax & 1), ext[ax], CU_TR_ADDRESS_MODE_CLAMP);
      acc += static_cast<double>(corner_weight(f, c, 3)) / 256 * v[(idx[2] * h + idx[1]) * w + idx[0]];
    }
    got[k] = g[k].x;
    want[k] = static_cast<float>(acc);
  }
  kt::Checker ck("3D linear", [&](size_t i) {
    return "(" + std::to_string(p[3 * i]) + ", " + std::to_string(p[3 * i + 1]) + ", " + std::to_string(p[3 * i + 2]) + ")";
  });
  // Driver 580 rounds the eight corner weights of a 3D fetch by a rule of
  // its own: each within 2/256 of this model's, their absolute differences
  // summing to at most 10/256 (tools/probes/texture_probe.cpp, 4,913
  // points). cucpu weighs by the model exactly; the driver is held to that
  // bound: half the differences, times the spread of the texels' values.
  const float spread = 22.0f;  // the values lie in [-5, 17]
  const bool exact = conf::on_cucpu();
  ck.ops(got, want, n, {"tex3D linear"}, [&](float x, float e, size_t) {
    return exact ? near(x, e, 2e-6f) : std::fabs(x - e) <= 5.0f / 256.0f * spread;
  });
  ck.done();
  ASSERT_CU(cuTexObjectDestroy(t));
  ASSERT_CU(cuArrayDestroy(a));
}

// Half floats read as floats; a cube map's faces picked by the major axis
// of the direction, each face's texels by the two other coordinates.
CONF_TEST(TextureHalfAndCubemap) {
  kt::Module m(kTexturePtx);
  kt::Checker ck("half and cube map");
  {
    const uint16_t halves[4] = {0x3e00, 0xc080, 0x63d0, 0x0001};  // 1.5, -2.25, 1000, the smallest subnormal
    CUarray a = make_array(CU_AD_FORMAT_HALF, 1, 2, 2, 0, 0, halves, 2);
    CUtexObject t = texture_of_array(a, TexSpec{});
    std::vector<float> p = {0.5f, 0.5f, 1.5f, 0.5f, 0.5f, 1.5f, 1.5f, 1.5f};
    kt::Buf<float> bp(p), out(4);
    kt::run(m.fn("tex_2d_scalar"), {1}, {4}, 0, t, bp.p, 4, out.p);
    ck.ops(out.get(), std::vector<float>{1.5f, -2.25f, 1000.0f, 5.9604645e-08f}, 4, {"half texels"});
    ASSERT_CU(cuTexObjectDestroy(t));
    ASSERT_CU(cuArrayDestroy(a));
  }
  // Six 2 x 2 faces; texel (i, j) of face f holds 10 f + 2 j + i.
  std::vector<float> faces(6 * 4);
  for (int f = 0; f < 6; ++f)
    for (int k = 0; k < 4; ++k) faces[f * 4 + k] = static_cast<float>(10 * f + k);
  CUarray cube = make_array(CU_AD_FORMAT_FLOAT, 1, 2, 2, 6, CUDA_ARRAY3D_CUBEMAP, faces.data(), 4);
  CUtexObject t = texture_of_array(cube, TexSpec{});
  // Per face: the major axis, and the directions of the other two axes
  // that s and t follow (+x: s = -z, t = -y; -x: s = z, t = -y; +y: s = x,
  // t = z; -y: s = x, t = -z; +z: s = x, t = -y; -z: s = -x, t = -y).
  struct Face {
    int major, sign, s_axis, s_sign, t_axis, t_sign;
  };
  const Face table[6] = {{0, 1, 2, -1, 1, -1}, {0, -1, 2, 1, 1, -1}, {1, 1, 0, 1, 2, 1},
                         {1, -1, 0, 1, 2, -1}, {2, 1, 0, 1, 1, -1}, {2, -1, 0, -1, 1, -1}};
  std::vector<float> dirs;
  std::vector<float> want;
  for (int f = 0; f < 6; ++f)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) {
        float dir[3] = {0, 0, 0};
        dir[table[f].major] = static_cast<float>(table[f].sign);
        dir[table[f].s_axis] = static_cast<float>(table[f].s_sign) * (i ? 0.5f : -0.5f);
        dir[table[f].t_axis] = static_cast<float>(table[f].t_sign) * (j ? 0.5f : -0.5f);
        dirs.insert(dirs.end(), dir, dir + 3);
        want.push_back(static_cast<float>(10 * f + 2 * j + i));
      }
  const int n = static_cast<int>(want.size());
  kt::Buf<float> bd(dirs);
  kt::Buf<F4> out(n);
  kt::run(m.fn("tex_cube_f32"), {1}, {n}, 0, t, bd.p, n, out.p);
  std::vector<F4> g = out.get();
  std::vector<float> got(n);
  for (int k = 0; k < n; ++k) got[k] = g[k].x;
  ck.ops(got, want, n, {"cube map texels"});
  ck.done();
  ASSERT_CU(cuTexObjectDestroy(t));
  ASSERT_CU(cuArrayDestroy(cube));
}
