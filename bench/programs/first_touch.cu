// New device memory's first touch: a Thrust vector of 16 Mi ints built
// (allocated and filled), filled again three times, then a plain 64 MiB
// allocation set twice. The first set of new memory pays its page faults.
#include <thrust/device_vector.h>
#include <thrust/fill.h>

#include <chrono>
#include <cstdio>

int main() {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  const int n = 1 << 24;
  const auto t0 = Clock::now();
  thrust::device_vector<int> v(n, 1);
  cudaDeviceSynchronize();
  const auto t1 = Clock::now();
  for (int i = 0; i < 3; ++i) thrust::fill(v.begin(), v.end(), i);
  cudaDeviceSynchronize();
  const auto t2 = Clock::now();
  int* raw = nullptr;
  cudaMalloc(&raw, n * sizeof(int));
  const auto t3 = Clock::now();
  cudaMemset(raw, 0, n * sizeof(int));
  cudaDeviceSynchronize();
  const auto t4 = Clock::now();
  cudaMemset(raw, 1, n * sizeof(int));
  cudaDeviceSynchronize();
  const auto t5 = Clock::now();
  std::printf("vector built %.1f ms, filled %.1f ms a time; first memset %.1f ms, second %.1f ms\n", ms(t0, t1),
              ms(t1, t2) / 3, ms(t3, t4), ms(t4, t5));
  return 0;
}
