// cuRAND's device generators, unmodified from the toolkit: each fills
// device memory, and the host API's generator of the same kind (which runs
// the same algorithm on the CPU) must give the same numbers.
#include <curand.h>

#include <cmath>
#include <vector>

#include "check.h"

static bool same_uniform(curandRngType_t type, const char* name, size_t n) {
  curandGenerator_t dev, host;
  if (curandCreateGenerator(&dev, type) != CURAND_STATUS_SUCCESS) {
    std::printf("%s: curandCreateGenerator failed\n", name);
    return false;
  }
  curandCreateGeneratorHost(&host, type);
  curandSetPseudoRandomGeneratorSeed(dev, 1234);
  curandSetPseudoRandomGeneratorSeed(host, 1234);
  float* d = nullptr;
  cudaMalloc(&d, n * sizeof(float));
  std::vector<float> got(n), want(n);
  curandStatus_t s = curandGenerateUniform(dev, d, n);
  curandGenerateUniform(host, want.data(), n);
  cudaMemcpy(got.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost);
  size_t differ = 0;
  for (size_t i = 0; i < n; ++i) differ += got[i] != want[i];
  if (s != CURAND_STATUS_SUCCESS || differ) std::printf("%s: status %d, %zu of %zu differ\n", name, (int)s, differ, n);
  cudaFree(d);
  curandDestroyGenerator(dev);
  curandDestroyGenerator(host);
  return s == CURAND_STATUS_SUCCESS && differ == 0;
}

static bool normal_moments(size_t n) {
  curandGenerator_t g;
  curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10);
  double* d = nullptr;
  cudaMalloc(&d, n * sizeof(double));
  curandStatus_t s = curandGenerateNormalDouble(g, d, n, 2.0, 3.0);
  std::vector<double> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(double), cudaMemcpyDeviceToHost);
  double sum = 0, sq = 0;
  for (double v : h) sum += v, sq += v * v;
  const double mean = sum / n, var = sq / n - mean * mean;
  cudaFree(d);
  curandDestroyGenerator(g);
  if (s != CURAND_STATUS_SUCCESS || std::fabs(mean - 2.0) > 0.05 || std::fabs(var - 9.0) > 0.3) {
    std::printf("normal: status %d, mean %f, variance %f\n", (int)s, mean, var);
    return false;
  }
  return true;
}

int main() {
  const size_t n = 1 << 16;
  CHECK(same_uniform(CURAND_RNG_PSEUDO_XORWOW, "xorwow", n));
  CHECK(same_uniform(CURAND_RNG_PSEUDO_MRG32K3A, "mrg32k3a", n));
  CHECK(same_uniform(CURAND_RNG_PSEUDO_MTGP32, "mtgp32", n));
  CHECK(same_uniform(CURAND_RNG_PSEUDO_MT19937, "mt19937", n));
  CHECK(same_uniform(CURAND_RNG_PSEUDO_PHILOX4_32_10, "philox", n));
  CHECK(same_uniform(CURAND_RNG_QUASI_SOBOL32, "sobol32", n));
  CHECK(same_uniform(CURAND_RNG_QUASI_SCRAMBLED_SOBOL32, "scrambled_sobol32", n));
  CHECK(normal_moments(1 << 20));
  return finish("curand_generators");
}
