// Hand-written counterparts of bench/kernels/throughput.cu: the same
// algorithms (element-wise saxpy; 256-element tree reductions with one
// atomic add per block; 16 x 16 tiles), split over one thread per core.
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

}  // namespace bench
