// Hand-written counterparts of bench/kernels/throughput.cu: the same
// algorithms (element-wise saxpy; 256-element tree reductions with one
// atomic add per block; 16 x 16 tiles; a point-wise stencil; per-block
// histograms added to the global one bin by bin), split over one thread
// per core.
#include "hand_kernels.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace bench {

unsigned hand_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

namespace {

// Runs body(begin, end) over [0, count) split into one range per thread.
template <class F>
void parallel(long count, F body) {
  const unsigned t = hand_threads();
  std::vector<std::thread> pool;
  const long chunk = (count + t - 1) / t;
  for (unsigned k = 0; k < t; ++k) {
    const long b = k * chunk, e = std::min(count, b + chunk);
    if (b >= e) break;
    pool.emplace_back([=] { body(b, e); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace

void hand_saxpy(int n, float a, const float* x, float* y) {
  parallel(n, [=](long b, long e) {
    for (long i = b; i < e; ++i) y[i] = a * x[i] + y[i];
  });
}

float hand_block_reduce(const float* in, int n) {
  std::atomic<float> total{0.f};
  const long blocks = (n + 255) / 256;
  parallel(blocks, [&](long b, long e) {
    float local = 0.f;
    for (long blk = b; blk < e; ++blk) {
      float v[256];
      for (int i = 0; i < 256; ++i) {
        const long k = blk * 256 + i;
        v[i] = k < n ? in[k] : 0.f;
      }
      for (int w = 128; w > 0; w >>= 1)
        for (int i = 0; i < w; ++i) v[i] += v[i + w];
      local += v[0];
    }
    float cur = total.load();
    while (!total.compare_exchange_weak(cur, cur + local)) {
    }
  });
  return total.load();
}

void hand_sgemm(const float* A, const float* B, float* C, int n) {
  const int tiles = n / 16;
  parallel(static_cast<long>(tiles) * tiles, [=](long b, long e) {
    for (long t = b; t < e; ++t) {
      const int ti = static_cast<int>(t / tiles), tj = static_cast<int>(t % tiles);
      float acc[16][16] = {};
      float As[16][16], Bs[16][16];
      for (int k = 0; k < n; k += 16) {
        for (int r = 0; r < 16; ++r)
          for (int c = 0; c < 16; ++c) {
            As[r][c] = A[(ti * 16 + r) * n + k + c];
            Bs[r][c] = B[(k + r) * n + tj * 16 + c];
          }
        for (int r = 0; r < 16; ++r)
          for (int j = 0; j < 16; ++j)
            for (int c = 0; c < 16; ++c) acc[r][c] += As[r][j] * Bs[j][c];
      }
      for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) C[(ti * 16 + r) * n + tj * 16 + c] = acc[r][c];
    }
  });
}

void hand_stencil5(const float* in, float* out, int w, int h, float c0, float c1) {
  parallel(h - 2, [=](long b, long e) {
    for (long y = b + 1; y < e + 1; ++y) {
      const float* r = in + y * w;
      float* o = out + y * w;
      for (int x = 1; x < w - 1; ++x) o[x] = c0 * r[x] + c1 * (r[x - 1] + r[x + 1] + r[x - w] + r[x + w]);
    }
  });
}

void hand_histogram256(const uint32_t* data, int words, uint32_t* bins, int blocks) {
  std::atomic<uint32_t> total[256];
  for (int b = 0; b < 256; ++b) total[b].store(bins[b], std::memory_order_relaxed);
  const long stride = static_cast<long>(blocks) * 256;
  parallel(blocks, [&](long b, long e) {
    for (long blk = b; blk < e; ++blk) {
      uint32_t s[256] = {};  // the block's shared bins; one thread runs the block
      for (long base = blk * 256; base < words; base += stride) {
        const long end = std::min<long>(words, base + 256);
        for (long i = base; i < end; ++i) {
          const uint32_t v = data[i];
          ++s[v & 255u];
          ++s[(v >> 8) & 255u];
          ++s[(v >> 16) & 255u];
          ++s[v >> 24];
        }
      }
      for (int k = 0; k < 256; ++k)
        if (s[k]) total[k].fetch_add(s[k], std::memory_order_relaxed);
    }
  });
  for (int b = 0; b < 256; ++b) bins[b] = total[b].load(std::memory_order_relaxed);
}

}  // namespace bench
