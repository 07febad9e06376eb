// Warp matrix cuts. Fragment layouts of mma.m16n8k16 / m16n8k8 follow the
// PTX ISA's figures (groupID = lane / 4, tig = lane % 4); wmma uses
// cucpu's own layout (see lower_matrix.cpp).
#include "ptx/warp_matrix.h"

#include "ptx/half_bits.h"

#include <cmath>
#include <cstring>

namespace cucpu::ptx {

namespace {

float half_bits_to_float(uint16_t h, bool bf16) {
  if (bf16) {
    uint32_t x = uint32_t{h} << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
  return ptx::half_bits_to_float(h);
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

void resolve_mma(const CutSite& site, uint64_t* const in[32], uint64_t* const out[32]) {
  const bool bf = site.is_signed, f32acc = site.wide;
  int M = 16, N = 8, K = 16;
  if (site.mode == kMmaM16N8K8) K = 8;
  if (site.mode == kWmmaM16N16K16) N = 16;
  float a[16][16] = {}, bm[16][16] = {}, c[16][16] = {};
  const int a_words = site.mode == kWmmaM16N16K16 ? 4 : K / 4;  // b32 words of A per lane
  const int b_words = site.mode == kWmmaM16N16K16 ? 4 : K / 8;
  for (int l = 0; l < 32; ++l) {
    const uint64_t* x = in[l];
    if (!x) continue;
    const int g = l / 4, t = l % 4;
    if (site.mode == kWmmaM16N16K16) {
      for (int j = 0; j < 8; ++j) {
        const int e = l * 8 + j;
        a[e / 16][e % 16] = half_bits_to_float(half_of(word(x, j / 2), j), bf);
        bm[e / 16][e % 16] = half_bits_to_float(half_of(word(x, a_words + j / 2), j), bf);
        const uint32_t cw = word(x, a_words + b_words + (f32acc ? j : j / 2));
        float cv;
        if (f32acc) std::memcpy(&cv, &cw, 4);
        else cv = half_bits_to_float(half_of(cw, j), false);
        c[e / 16][e % 16] = cv;
      }
      continue;
    }
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
    if (site.mode == kWmmaM16N16K16) {
      for (int j = 0; j < 8; ++j) {
        const int e = l * 8 + j;
        put(j, d[e / 16][e % 16]);
      }
    } else {
      for (int i = 0; i < 4; ++i) put(i, d[i < 2 ? g : g + 8][t * 2 + (i & 1)]);
    }
  }
}

}  // namespace cucpu::ptx
