// Inputs of the stencil and histogram throughput kernels and their answers
// computed on the host, one thread, straightforwardly; shared by the CUDA
// (kernel_throughput_bench.cpp) and OpenCL (opencl_bench.cpp) benchmarks so
// that every peer runs on the same data and is checked against the same
// answer. Header only, no CUDA or OpenCL.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace bench {

constexpr int kStencilN = 4096;  // the grid is kStencilN x kStencilN floats
constexpr float kStencilC0 = 0.5f, kStencilC1 = 0.125f;

// Small integers (0..31): every sum and product of the stencil is exact in
// float, so each peer's answer must equal stencil_reference() bit for bit,
// whatever it contracts into fused multiply-adds.
inline std::vector<float> stencil_input() {
  std::vector<float> g(size_t{kStencilN} * kStencilN);
  for (int y = 0; y < kStencilN; ++y)
    for (int x = 0; x < kStencilN; ++x) g[static_cast<size_t>(y) * kStencilN + x] = static_cast<float>((x * 3 + y * 5) & 31);
  return g;
}

// The 5-point stencil at the interior points; border points stay 0 (every
// peer's output starts zeroed and the kernels leave the border alone).
inline std::vector<float> stencil_reference(const std::vector<float>& in) {
  const int n = kStencilN;
  std::vector<float> out(in.size(), 0.f);
  for (int y = 1; y < n - 1; ++y)
    for (int x = 1; x < n - 1; ++x) {
      const size_t i = static_cast<size_t>(y) * n + x;
      out[i] = kStencilC0 * in[i] + kStencilC1 * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
    }
  return out;
}

// Null when out (the whole grid) equals want bit for bit, else what is wrong.
inline const char* stencil_error(const float* out, const std::vector<float>& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (out[i] != want[i]) {
      std::fprintf(stderr, "stencil: first difference at (%zu, %zu): %g, host %g\n", i % kStencilN, i / kStencilN,
                   out[i], want[i]);
      return "stencil differs from the host's answer";
    }
  return nullptr;
}

constexpr int kHistBytes = 64 << 20;        // 64 Mi bytes
constexpr int kHistWords = kHistBytes / 4;  // packed four to a uint32, as the kernels read them
constexpr int kHistBlocks = 256;            // grid of the grid-stride launch, 256 threads a block

// Pseudo-random bytes (xorshift32), four to a word.
inline std::vector<uint32_t> histogram_input() {
  std::vector<uint32_t> words(kHistWords);
  uint32_t s = 2463534242u;
  for (auto& w : words) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    w = s;
  }
  return words;
}

inline std::array<uint32_t, 256> histogram_reference(const std::vector<uint32_t>& words) {
  std::array<uint32_t, 256> bins{};
  for (uint32_t w : words)
    for (int k = 0; k < 4; ++k) ++bins[(w >> (8 * k)) & 255u];
  return bins;
}

// Null when bins is the right answer, else what is wrong (for SkipWithError).
inline const char* histogram_error(const uint32_t* bins, const std::array<uint32_t, 256>& want) {
  uint64_t total = 0;
  for (int b = 0; b < 256; ++b) total += bins[b];
  if (total != uint64_t{kHistBytes}) {
    std::fprintf(stderr, "histogram: sums to %llu, not %d\n", static_cast<unsigned long long>(total), kHistBytes);
    return "histogram does not sum to the input's byte count";
  }
  for (int b = 0; b < 256; ++b)
    if (bins[b] != want[b]) {
      std::fprintf(stderr, "histogram: bin %d is %u, host %u\n", b, bins[b], want[b]);
      return "histogram differs from the host's count";
    }
  return nullptr;
}

}  // namespace bench
