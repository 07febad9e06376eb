// Warp matrix cuts. Fragment layouts of mma.m16n8k16 / m16n8k8 follow the
// PTX ISA's figures (groupID = lane / 4, tig = lane % 4); wmma uses
// cucpu's own layout (warp_matrix.h).
#include "devrt/warp_matrix.h"

#include "base/half_bits.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace cucpu::devrt {

namespace {

float half_bits_to_float(uint16_t h, bool bf16) {
  if (bf16) {
    uint32_t x = uint32_t{h} << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
  return cucpu::half_bits_to_float(h);
}

// The i-th b32 word a lane packed into its exchange slots.
uint32_t word(const uint64_t* in, int i) { return static_cast<uint32_t>(in[i / 2] >> (32 * (i % 2))); }
void set_word(uint64_t* out, int i, uint32_t w) {
  const uint64_t shift = 32 * static_cast<uint64_t>(i % 2);
  out[i / 2] = (out[i / 2] & ~(uint64_t{0xffffffff} << shift)) | (uint64_t{w} << shift);
}
uint16_t half_of(uint32_t w, int i) { return static_cast<uint16_t>(w >> (16 * (i & 1))); }

}  // namespace

void resolve_ldmatrix(const CutSite& site, uint64_t* const in[32], uint64_t* const out[32]) {
  const int matrices = site.mode;
  for (int l = 0; l < 32; ++l) {
    if (!out[l]) continue;
    const int r = l / 4, c = 2 * (l % 4);
    for (int m = 0; m < matrices; ++m) {
      uint16_t e[2];
      for (int k = 0; k < 2; ++k) {
        // Row `row` of matrix m comes from the address lane m*8+row supplied.
        const int row = site.wide ? c + k : r, col = site.wide ? r : c + k;
        const uint64_t* src = in[m * 8 + row];
        if (!src) {
          e[k] = 0;
          continue;
        }
        std::memcpy(&e[k], reinterpret_cast<const uint8_t*>(src[0]) + 2 * col, 2);
      }
      out[l][m] = uint32_t{e[0]} | uint32_t{e[1]} << 16;
    }
  }
}

WmmaDims wmma_dims(uint8_t mode) {
  switch (mode) {
    case kWmmaM32N8K16: return {32, 8, 16};
    case kWmmaM8N32K16: return {8, 32, 16};
    case kWmmaM16N16K8: return {16, 16, 8};
    case kWmmaM8N8K4: return {8, 8, 4};
    default: return {16, 16, 16};
  }
}

int wmma_input_bits(uint8_t input) {
  switch (input) {
    case kMmaF16: case kMmaBF16: return 16;
    case kMmaTF32: return 32;
    case kMmaF64: return 64;
    default: return 8;
  }
}

namespace {

// The bits-wide field `index` of a lane's packed words, from word `first` on.
uint64_t field(const uint64_t* x, int first, int bits, int index) {
  const int bit = index * bits;
  if (bits == 64) return uint64_t{word(x, first + bit / 32)} | uint64_t{word(x, first + bit / 32 + 1)} << 32;
  return (word(x, first + bit / 32) >> (bit % 32)) & ((uint64_t{1} << bits) - 1);
}
void set_field(uint64_t* y, int bits, int index, uint64_t v) {
  const int bit = index * bits;
  if (bits == 64) {
    set_word(y, bit / 32, static_cast<uint32_t>(v));
    set_word(y, bit / 32 + 1, static_cast<uint32_t>(v >> 32));
    return;
  }
  const uint32_t mask = static_cast<uint32_t>(((uint64_t{1} << bits) - 1) << (bit % 32));
  const uint32_t w = word(y, bit / 32);
  set_word(y, bit / 32, (w & ~mask) | (static_cast<uint32_t>(v << (bit % 32)) & mask));
}

double as_f32(uint64_t bits) {
  const uint32_t w = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}
double as_f64(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// A wmma product in cucpu's fragment layout (warp_matrix.h): D = A * B + C,
// floats accumulated in float (f64 in double) one product at a time in k
// order, integers exactly (wrapping, or clamped with .satfinite).
void resolve_wmma(const CutSite& site, uint64_t* const in[32], uint64_t* const out[32]) {
  const WmmaDims d = wmma_dims(site.mode);
  const uint8_t input = mma_input(site.mma_types);
  const int in_bits = wmma_input_bits(input);
  const bool f16_in = input == kMmaF16, integer = input == kMmaS8 || input == kMmaU8;
  const int c_bits = input == kMmaF64 ? 64 : f16_in && !(site.mma_types & kMmaCF32) ? 16 : 32;
  const int d_bits = input == kMmaF64 ? 64 : f16_in && !(site.mma_types & kMmaDF32) ? 16 : 32;
  const int ea = d.m * d.k / 32, eb = d.k * d.n / 32, ec = d.m * d.n / 32;
  const int b_first = (ea * in_bits + 31) / 32;  // C comes in the result slots (abi.h)
  // The inputs as doubles (exact for every input type), C likewise.
  auto input_value = [&](uint64_t v) -> double {
    switch (input) {
      case kMmaF16: return half_bits_to_float(static_cast<uint16_t>(v), false);
      case kMmaBF16: return half_bits_to_float(static_cast<uint16_t>(v), true);
      case kMmaTF32: return as_f32(v & ~uint64_t{0x1fff});  // the tensor core reads tf32's 19 bits
      case kMmaF64: return as_f64(v);
      case kMmaS8: return static_cast<int8_t>(v);
      default: return static_cast<uint8_t>(v);
    }
  };
  auto acc_value = [&](uint64_t v) -> double {
    if (c_bits == 16) return half_bits_to_float(static_cast<uint16_t>(v), false);
    if (c_bits == 64) return as_f64(v);
    if (integer) return static_cast<int32_t>(v);
    return as_f32(v);
  };
  // The largest tiles: A or B of 512 elements (32 x 16), C of 256. On the
  // stack: a cut runs once per warp and product, so no allocation here.
  double a[512] = {}, bm[512] = {}, c[256] = {};
  for (int l = 0; l < 32; ++l) {
    const uint64_t* x = in[l];
    if (!x) continue;
    for (int j = 0; j < ea; ++j) a[static_cast<size_t>(l * ea + j)] = input_value(field(x, 0, in_bits, j));
    for (int j = 0; j < eb; ++j) bm[static_cast<size_t>(l * eb + j)] = input_value(field(x, b_first, in_bits, j));
    for (int j = 0; j < ec; ++j) c[static_cast<size_t>(l * ec + j)] = acc_value(field(out[l], 0, c_bits, j));
  }
  for (int l = 0; l < 32; ++l) {
    uint64_t* y = out[l];
    if (!y) continue;
    for (int j = 0; j < ec; ++j) {
      const int e = l * ec + j, row = e / d.n, col = e % d.n;
      uint64_t bits;
      if (integer) {
        int64_t acc = static_cast<int64_t>(c[static_cast<size_t>(e)]);
        for (int k = 0; k < d.k; ++k)
          acc += static_cast<int64_t>(a[static_cast<size_t>(row * d.k + k)]) *
                 static_cast<int64_t>(bm[static_cast<size_t>(k * d.n + col)]);
        if (site.mma_types & kMmaSatfinite) acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
        bits = static_cast<uint32_t>(static_cast<int32_t>(static_cast<uint32_t>(acc)));
      } else if (input == kMmaF64) {
        double acc = c[static_cast<size_t>(e)];
        for (int k = 0; k < d.k; ++k)
          acc = std::fma(a[static_cast<size_t>(row * d.k + k)], bm[static_cast<size_t>(k * d.n + col)], acc);
        std::memcpy(&bits, &acc, 8);
      } else {
        float acc = static_cast<float>(c[static_cast<size_t>(e)]);
        for (int k = 0; k < d.k; ++k)
          acc = std::fma(static_cast<float>(a[static_cast<size_t>(row * d.k + k)]),
                         static_cast<float>(bm[static_cast<size_t>(k * d.n + col)]), acc);
        if (d_bits == 16) {
          bits = float_to_half_bits(acc);
        } else {
          uint32_t w;
          std::memcpy(&w, &acc, 4);
          bits = w;
        }
      }
      set_field(y, d_bits, j, bits);
    }
  }
}

WmmaDims mma_dims(uint8_t mode) {
  switch (mode) {
    case kMmaM16N8K8: return {16, 8, 8};
    case kMmaM16N8K4: return {16, 8, 4};
    case kMmaM8N8K4: return {8, 8, 4};
    case kMmaM16N8K32: return {16, 8, 32};
    default: return {16, 8, 16};
  }
}

// Where element i of lane l's fragment lies in its matrix, for the ISA's
// layouts of tf32, f64 and 8-bit integer mma.sync (g = lane / 4, t = lane % 4).
struct Cell {
  int row, col;
};
Cell a_cell(uint8_t mode, uint8_t input, int g, int t, int i) {
  if (input == kMmaF64) return {g, t};
  if (input == kMmaTF32) return mode == kMmaM16N8K8 ? Cell{g + 8 * (i & 1), t + 4 * (i >> 1)} : Cell{g + 8 * i, t};
  if (mode == kMmaM16N8K16) return {g + 8 * (i >> 2), 4 * t + (i & 3)};
  return {g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)};  // m16n8k32
}
Cell b_cell(uint8_t mode, uint8_t input, int g, int t, int i) {
  if (input == kMmaF64) return {t, g};
  if (input == kMmaTF32) return {t + 4 * i, g};
  if (mode == kMmaM16N8K16) return {4 * t + i, g};
  return {4 * t + (i & 3) + 16 * (i >> 2), g};  // m16n8k32
}
Cell c_cell(uint8_t input, int g, int t, int i) {
  if (input == kMmaF64) return {g, 2 * t + i};
  return {g + 8 * (i >> 1), 2 * t + (i & 1)};
}

// An mma.sync of tf32, f64 or 8-bit integer inputs: the product as
// resolve_wmma computes it, the fragments in the ISA's layouts.
void resolve_laid_out_mma(const CutSite& site, uint64_t* const in[32], uint64_t* const out[32]) {
  const WmmaDims d = mma_dims(site.mode);
  const uint8_t input = mma_input(site.mma_types);
  const int bits = wmma_input_bits(input), c_bits = input == kMmaF64 ? 64 : 32;
  const bool integer = input == kMmaS8 || input == kMmaU8;
  // B's kind differs from A's: the other sign (8-bit integers), the other fp8.
  const bool b_other = (site.mma_types & kMmaBOtherSign) != 0;
  const bool b_signed = (input == kMmaS8) != b_other;
  const int a_fp8 = input == kMmaE5M2 ? 1 : 0, b_fp8 = a_fp8 ^ (b_other ? 1 : 0);
  const MmaFragments fr = mma_fragments(site.mode, input);
  const int ea = d.m * d.k / 32, eb = d.k * d.n / 32, ec = d.m * d.n / 32;
  auto value = [&](uint64_t v, bool is_signed, int fp8_kind) -> double {
    switch (input) {
      case kMmaTF32: return as_f32(v & ~uint64_t{0x1fff});
      case kMmaF64: return as_f64(v);
      case kMmaE4M3: case kMmaE5M2: return fp8_to_float(static_cast<uint8_t>(v), fp8_kind);
      default: return is_signed ? static_cast<int8_t>(v) : static_cast<uint8_t>(v);
    }
  };
  double a[16][32] = {}, bm[32][8] = {}, c[16][8] = {};
  for (int l = 0; l < 32; ++l) {
    const uint64_t* x = in[l];
    if (!x) continue;
    const int g = l / 4, t = l % 4;
    for (int i = 0; i < ea; ++i) {
      const Cell e = a_cell(site.mode, input, g, t, i);
      a[e.row][e.col] = value(field(x, 0, bits, i), input == kMmaS8, a_fp8);
    }
    for (int i = 0; i < eb; ++i) {
      const Cell e = b_cell(site.mode, input, g, t, i);
      bm[e.row][e.col] = value(field(x, fr.a_words, bits, i), b_signed, b_fp8);
    }
    for (int i = 0; i < ec; ++i) {
      const Cell e = c_cell(input, g, t, i);
      const uint64_t v = field(x, fr.a_words + fr.b_words, c_bits, i);
      c[e.row][e.col] = c_bits == 64 ? as_f64(v) : integer ? static_cast<int32_t>(v) : as_f32(v);
    }
  }
  for (int l = 0; l < 32; ++l) {
    uint64_t* y = out[l];
    if (!y) continue;
    const int g = l / 4, t = l % 4;
    for (int i = 0; i < ec; ++i) {
      const Cell e = c_cell(input, g, t, i);
      uint64_t bits_out;
      if (integer) {
        int64_t acc = static_cast<int64_t>(c[e.row][e.col]);
        for (int k = 0; k < d.k; ++k)
          acc += static_cast<int64_t>(a[e.row][k]) * static_cast<int64_t>(bm[k][e.col]);
        if (site.mma_types & kMmaSatfinite) acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
        bits_out = static_cast<uint32_t>(acc);
      } else if (input == kMmaF64) {
        double acc = c[e.row][e.col];
        for (int k = 0; k < d.k; ++k) acc = std::fma(a[e.row][k], bm[k][e.col], acc);
        std::memcpy(&bits_out, &acc, 8);
      } else {
        float acc = static_cast<float>(c[e.row][e.col]);
        for (int k = 0; k < d.k; ++k)
          acc = std::fma(static_cast<float>(a[e.row][k]), static_cast<float>(bm[k][e.col]), acc);
        uint32_t w;
        std::memcpy(&w, &acc, 4);
        bits_out = w;
      }
      set_field(y, c_bits, i, bits_out);
    }
  }
}

}  // namespace

MmaFragments mma_fragments(uint8_t mode, uint8_t input) {
  const WmmaDims d = mma_dims(mode);
  const int bits = wmma_input_bits(input), c_bits = input == kMmaF64 ? 64 : 32;
  return {d.m * d.k / 32 * bits / 32, d.k * d.n / 32 * bits / 32, d.m * d.n / 32 * c_bits / 32};
}

void resolve_mma(const CutSite& site, uint64_t* const in[32], uint64_t* const out[32]) {
  if (site.mode >= kWmmaM16N16K16) {
    resolve_wmma(site, in, out);
    return;
  }
  const uint8_t input = mma_input(site.mma_types);
  if (input != kMmaF16 && input != kMmaBF16) {
    resolve_laid_out_mma(site, in, out);
    return;
  }
  const bool bf = site.is_signed, f32acc = site.wide;
  int M = 16, N = 8, K = 16;
  if (site.mode == kMmaM16N8K8) K = 8;
  float a[16][16] = {}, bm[16][16] = {}, c[16][16] = {};
  const int a_words = K / 4;  // b32 words of A per lane
  const int b_words = K / 8;
  for (int l = 0; l < 32; ++l) {
    const uint64_t* x = in[l];
    if (!x) continue;
    const int g = l / 4, t = l % 4;
    for (int i = 0; i < 2 * a_words; ++i) {
      const int row = (i % 4) < 2 ? g : g + 8, col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      a[row][col] = half_bits_to_float(half_of(word(x, i / 2), i), bf);
    }
    for (int i = 0; i < 2 * b_words; ++i) {
      const int row = t * 2 + (i & 1) + (i >= 2 ? 8 : 0);
      bm[row][g] = half_bits_to_float(half_of(word(x, a_words + i / 2), i), bf);
    }
    for (int i = 0; i < 4; ++i) {
      const int row = i < 2 ? g : g + 8, col = t * 2 + (i & 1);
      const uint32_t cw = word(x, a_words + b_words + (f32acc ? i : i / 2));
      float cv;
      if (f32acc) std::memcpy(&cv, &cw, 4);
      else cv = half_bits_to_float(half_of(cw, i), false);
      c[row][col] = cv;
    }
  }
  float d[16][16];
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float acc = c[m][n];
      for (int k = 0; k < K; ++k) acc = std::fma(a[m][k], bm[k][n], acc);
      d[m][n] = acc;
    }
  for (int l = 0; l < 32; ++l) {
    uint64_t* y = out[l];
    if (!y) continue;
    const int g = l / 4, t = l % 4;
    auto put = [&](int i, float v) {
      if (f32acc) {
        uint32_t w;
        std::memcpy(&w, &v, 4);
        set_word(y, i, w);
      } else {
        const uint32_t cur = i % 2 ? word(y, i / 2) : 0;
        const uint32_t h = float_to_half_bits(v);
        set_word(y, i / 2, i % 2 ? (cur & 0xffff) | h << 16 : h);
      }
    };
    for (int i = 0; i < 4; ++i) put(i, d[i < 2 ? g : g + 8][t * 2 + (i & 1)]);
  }
}

}  // namespace cucpu::devrt
