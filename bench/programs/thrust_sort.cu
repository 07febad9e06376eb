// Thrust's sort of N unsigned keys (CUB's onesweep radix sort underneath),
// ITERS times from the same input: prints each sort's time and whether the
// result is sorted. usage: thrust_sort [N] [ITERS]
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/sort.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : (1 << 22);
  const int iters = argc > 2 ? std::atoi(argv[2]) : 3;
  thrust::host_vector<unsigned> h(n);
  unsigned x = 12345;
  for (int i = 0; i < n; ++i) h[i] = x = x * 1664525u + 1013904223u;
  thrust::device_vector<unsigned> input = h, keys(n);
  for (int it = 0; it < iters; ++it) {
    thrust::copy(input.begin(), input.end(), keys.begin());
    const auto t0 = std::chrono::steady_clock::now();
    thrust::sort(keys.begin(), keys.end());
    cudaDeviceSynchronize();
    std::printf("sort %d of %d keys: %.3f s\n", it, n,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  thrust::host_vector<unsigned> out = keys;
  std::sort(h.begin(), h.end());
  const bool ok = std::equal(h.begin(), h.end(), out.begin());
  std::printf("%s\n", ok ? "sorted" : "NOT SORTED");
  return ok ? 0 : 1;
}
