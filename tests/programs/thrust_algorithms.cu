// Thrust (and the CUB kernels under it), as ordinary programs use it: each
// result checked against the same computation on the host.
#include "check.h"
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <algorithm>
#include <numeric>
#include <vector>

struct Scramble {
  __host__ __device__ int operator()(int x) const { return static_cast<int>((x * 2654435761u) % 100003u); }
};

int main() {
  const int n = 1 << 18;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = Scramble()(i);
  thrust::device_vector<int> v(n);
  thrust::sequence(v.begin(), v.end());
  thrust::transform(v.begin(), v.end(), v.begin(), Scramble());
  CHECK(thrust::reduce(v.begin(), v.end(), 0LL) == std::accumulate(h.begin(), h.end(), 0LL));
  CHECK(thrust::reduce(v.begin(), v.end(), 0, thrust::maximum<int>()) == *std::max_element(h.begin(), h.end()));
  thrust::sort(v.begin(), v.end());
  std::sort(h.begin(), h.end());
  thrust::host_vector<int> sorted = v;
  CHECK(std::equal(h.begin(), h.end(), sorted.begin()));
  thrust::inclusive_scan(v.begin(), v.end(), v.begin());
  std::partial_sum(h.begin(), h.end(), h.begin());
  thrust::host_vector<int> scanned = v;
  CHECK(std::equal(h.begin(), h.end(), scanned.begin()));
  thrust::device_vector<float> keys(1000);
  thrust::device_vector<int> vals(1000);
  for (int i = 0; i < 1000; ++i) {
    keys[i] = static_cast<float>((i * 37) % 1000);
    vals[i] = i;
  }
  thrust::sort_by_key(keys.begin(), keys.end(), vals.begin());
  CHECK(keys[0] == 0.0f && keys[999] == 999.0f && vals[1] == 973);  // 973 * 37 = 36001, 1 (mod 1000)
  CHECK_CUDA(cudaDeviceSynchronize());
  return finish("thrust_algorithms");
}
