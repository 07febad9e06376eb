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

// The 64-bit quasi-random generators, as 64-bit integers.
static bool same_64(curandRngType_t type, const char* name, size_t n) {
  curandGenerator_t dev, host;
  if (curandCreateGenerator(&dev, type) != CURAND_STATUS_SUCCESS) {
    std::printf("%s: curandCreateGenerator failed\n", name);
    return false;
  }
  curandCreateGeneratorHost(&host, type);
  unsigned long long* d = nullptr;
  cudaMalloc(&d, n * sizeof(unsigned long long));
  std::vector<unsigned long long> got(n), want(n);
  curandStatus_t s = curandGenerateLongLong(dev, d, n);
  curandGenerateLongLong(host, want.data(), n);
  cudaMemcpy(got.data(), d, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
  size_t differ = 0;
  for (size_t i = 0; i < n; ++i) differ += got[i] != want[i];
  if (s != CURAND_STATUS_SUCCESS || differ) std::printf("%s: status %d, %zu of %zu differ\n", name, (int)s, differ, n);
  cudaFree(d);
  curandDestroyGenerator(dev);
  curandDestroyGenerator(host);
  return s == CURAND_STATUS_SUCCESS && differ == 0;
}

// Poisson and log-normal draws: the same numbers as the host generator's.
static bool same_distributions(size_t n) {
  curandGenerator_t dev, host;
  curandCreateGenerator(&dev, CURAND_RNG_PSEUDO_PHILOX4_32_10);
  curandCreateGeneratorHost(&host, CURAND_RNG_PSEUDO_PHILOX4_32_10);
  unsigned* dp = nullptr;
  float* dl = nullptr;
  cudaMalloc(&dp, n * sizeof(unsigned));
  cudaMalloc(&dl, n * sizeof(float));
  std::vector<unsigned> gp(n), wp(n);
  std::vector<float> gl(n), wl(n);
  curandStatus_t s1 = curandGeneratePoisson(dev, dp, n, 4.5);
  curandGeneratePoisson(host, wp.data(), n, 4.5);
  curandStatus_t s2 = curandGenerateLogNormal(dev, dl, n, 0.5f, 0.25f);
  curandGenerateLogNormal(host, wl.data(), n, 0.5f, 0.25f);
  cudaMemcpy(gp.data(), dp, n * sizeof(unsigned), cudaMemcpyDeviceToHost);
  cudaMemcpy(gl.data(), dl, n * sizeof(float), cudaMemcpyDeviceToHost);
  size_t bad_p = 0, bad_l = 0;
  for (size_t i = 0; i < n; ++i) {
    bad_p += gp[i] != wp[i];
    bad_l += std::fabs(gl[i] - wl[i]) > 1e-5f * std::fabs(wl[i]);
  }
  if (s1 || s2 || bad_p || bad_l)
    std::printf("poisson/lognormal: status %d %d, %zu and %zu of %zu differ\n", (int)s1, (int)s2, bad_p, bad_l, n);
  cudaFree(dp);
  cudaFree(dl);
  curandDestroyGenerator(dev);
  curandDestroyGenerator(host);
  return !s1 && !s2 && !bad_p && !bad_l;
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
  CHECK(same_64(CURAND_RNG_QUASI_SOBOL64, "sobol64", n));
  CHECK(same_64(CURAND_RNG_QUASI_SCRAMBLED_SOBOL64, "scrambled_sobol64", n));
  CHECK(same_distributions(n));
  CHECK(normal_moments(1 << 20));
  return finish("curand_generators");
}
