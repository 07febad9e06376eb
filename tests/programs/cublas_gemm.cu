// cuBLAS GEMMs, unmodified from the toolkit: every precision a CPU user
// calls, plain, batched and strided-batched, against a host reference.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <complex>
#include <vector>

#include "check.h"

static cublasHandle_t handle;

// Column-major C = alpha * A(m x k) * B(k x n) + beta * C.
template <class T>
std::vector<T> host_gemm(int m, int n, int k, T alpha, const std::vector<T>& a, const std::vector<T>& b, T beta,
                         std::vector<T> c) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      T s = T(0);
      for (int p = 0; p < k; ++p) s += a[i + p * m] * b[p + j * k];
      c[i + j * m] = alpha * s + beta * c[i + j * m];
    }
  return c;
}

template <class T>
std::vector<T> ramp(size_t n, int salt) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = T(double((i * 7 + salt) % 13) / 8.0 - 0.75);
  return v;
}

template <class T>
T* to_device(const std::vector<T>& h) {
  T* d = nullptr;
  cudaMalloc(&d, h.size() * sizeof(T));
  cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}
template <class T>
std::vector<T> to_host(const T* d, size_t n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

template <class T>
bool close(const char* what, cublasStatus_t s, const std::vector<T>& got, const std::vector<T>& want, double tol) {
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += !(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
  if (s != CUBLAS_STATUS_SUCCESS || bad) std::printf("%s: status %d, %zu of %zu wrong\n", what, (int)s, bad, got.size());
  return s == CUBLAS_STATUS_SUCCESS && bad == 0;
}

template <class T, class G>
bool plain(const char* what, G gemm, int m, int n, int k, double tol) {
  auto a = ramp<T>(size_t(m) * k, 1), b = ramp<T>(size_t(k) * n, 2), c = ramp<T>(size_t(m) * n, 3);
  T alpha = T(1.5), beta = T(-0.5);
  T *da = to_device(a), *db = to_device(b), *dc = to_device(c);
  cublasStatus_t s = gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, db, k, &beta, dc, m);
  bool ok = close(what, s, to_host(dc, c.size()), host_gemm(m, n, k, alpha, a, b, beta, c), tol);
  cudaFree(da), cudaFree(db), cudaFree(dc);
  return ok;
}

bool strided_batched(int m, int n, int k, int batch) {
  const size_t sa = size_t(m) * k, sb = size_t(k) * n, sc = size_t(m) * n;
  auto a = ramp<float>(sa * batch, 4), b = ramp<float>(sb * batch, 5), c = ramp<float>(sc * batch, 6);
  float alpha = 1.0f, beta = 0.25f;
  float *da = to_device(a), *db = to_device(b), *dc = to_device(c);
  cublasStatus_t s = cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, sa, db, k,
                                               sb, &beta, dc, m, sc, batch);
  std::vector<float> want;
  for (int i = 0; i < batch; ++i) {
    std::vector<float> ai(a.begin() + i * sa, a.begin() + (i + 1) * sa), bi(b.begin() + i * sb, b.begin() + (i + 1) * sb),
        ci(c.begin() + i * sc, c.begin() + (i + 1) * sc);
    auto r = host_gemm(m, n, k, alpha, ai, bi, beta, ci);
    want.insert(want.end(), r.begin(), r.end());
  }
  bool ok = close("sgemm strided batched", s, to_host(dc, c.size()), want, 1e-4);
  cudaFree(da), cudaFree(db), cudaFree(dc);
  return ok;
}

bool batched(int m, int n, int k, int batch) {
  std::vector<double*> pa(batch), pb(batch), pc(batch);
  std::vector<std::vector<double>> a(batch), b(batch), c(batch);
  for (int i = 0; i < batch; ++i) {
    a[i] = ramp<double>(size_t(m) * k, i), b[i] = ramp<double>(size_t(k) * n, i + 1), c[i] = ramp<double>(size_t(m) * n, i + 2);
    pa[i] = to_device(a[i]), pb[i] = to_device(b[i]), pc[i] = to_device(c[i]);
  }
  double **da = to_device(pa), **db = to_device(pb), **dc = to_device(pc);
  double alpha = 2.0, beta = 1.0;
  cublasStatus_t s = cublasDgemmBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, db, k, &beta, dc, m,
                                        batch);
  bool ok = true;
  for (int i = 0; i < batch; ++i)
    ok &= close("dgemm batched", s, to_host(pc[i], c[i].size()), host_gemm(m, n, k, alpha, a[i], b[i], beta, c[i]), 1e-12);
  for (int i = 0; i < batch; ++i) cudaFree(pa[i]), cudaFree(pb[i]), cudaFree(pc[i]);
  cudaFree(da), cudaFree(db), cudaFree(dc);
  return ok;
}

// Half or bf16 inputs, f32 output and accumulation (cublasGemmEx).
template <class H>
bool mixed(const char* what, cudaDataType type, int m, int n, int k) {
  auto a = ramp<float>(size_t(m) * k, 7), b = ramp<float>(size_t(k) * n, 8), c = ramp<float>(size_t(m) * n, 9);
  std::vector<H> ha(a.begin(), a.end()), hb(b.begin(), b.end());
  H *da = to_device(ha), *db = to_device(hb);
  float* dc = to_device(c);
  float alpha = 1.0f, beta = 1.0f;
  cublasStatus_t s = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, type, m, db, type, k, &beta, dc,
                                  CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  bool ok = close(what, s, to_host(dc, c.size()), host_gemm(m, n, k, alpha, a, b, beta, c), 1e-3);
  cudaFree(da), cudaFree(db), cudaFree(dc);
  return ok;
}

// gemv and syrk, which cuBLAS computes with its GEMM machinery.
bool gemv_and_syrk(int n) {
  auto a = ramp<double>(size_t(n) * n, 11), x = ramp<double>(n, 12), y = ramp<double>(n, 13);
  double *da = to_device(a), *dx = to_device(x), *dy = to_device(y), *dc = to_device(std::vector<double>(n * n, 1.0));
  const double alpha = 2.0, beta = 0.5;
  cublasStatus_t s1 = cublasDgemv(handle, CUBLAS_OP_T, n, n, &alpha, da, n, dx, 1, &beta, dy, 1);
  std::vector<double> want_y(n);
  for (int j = 0; j < n; ++j) {
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += a[i + size_t(j) * n] * x[i];
    want_y[j] = alpha * sum + beta * y[j];
  }
  bool ok = close("dgemv", s1, to_host(dy, n), want_y, 1e-12);
  cublasStatus_t s2 = cublasDsyrk(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, n, &alpha, da, n, &beta, dc, n);
  std::vector<double> c = to_host(dc, size_t(n) * n), got, want;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      double sum = 0;
      for (int k = 0; k < n; ++k) sum += a[i + size_t(k) * n] * a[j + size_t(k) * n];
      got.push_back(c[i + size_t(j) * n]);
      want.push_back(alpha * sum + beta * 1.0);
    }
  ok &= close("dsyrk", s2, got, want, 1e-12);
  cudaFree(da), cudaFree(dx), cudaFree(dy), cudaFree(dc);
  return ok;
}

// syr2k and herk: the lower triangles against the host's sums.
bool rank_updates(int n) {
  auto a = ramp<double>(size_t(n) * n, 14), b = ramp<double>(size_t(n) * n, 15);
  double *da = to_device(a), *db = to_device(b), *dc = to_device(std::vector<double>(size_t(n) * n, 0.0));
  const double alpha = 1.5, beta = 0.0;
  cublasStatus_t s1 = cublasDsyr2k(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, n, &alpha, da, n, db, n, &beta, dc, n);
  std::vector<double> c = to_host(dc, size_t(n) * n), got, want;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      double sum = 0;
      for (int k = 0; k < n; ++k) sum += a[i + size_t(k) * n] * b[j + size_t(k) * n] + b[i + size_t(k) * n] * a[j + size_t(k) * n];
      got.push_back(c[i + size_t(j) * n]);
      want.push_back(alpha * sum);
    }
  bool ok = close("dsyr2k", s1, got, want, 1e-12);
  std::vector<std::complex<double>> z(size_t(n) * n);
  for (size_t i = 0; i < z.size(); ++i) z[i] = {a[i], b[i]};
  auto* dz = to_device(z);
  auto* dh = to_device(std::vector<std::complex<double>>(size_t(n) * n));
  cublasStatus_t s2 = cublasZherk(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, n, &alpha,
                                  reinterpret_cast<cuDoubleComplex*>(dz), n, &beta,
                                  reinterpret_cast<cuDoubleComplex*>(dh), n);
  std::vector<std::complex<double>> h = to_host(dh, size_t(n) * n), hg, hw;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      std::complex<double> sum = 0;
      for (int k = 0; k < n; ++k) sum += z[i + size_t(k) * n] * std::conj(z[j + size_t(k) * n]);
      hg.push_back(h[i + size_t(j) * n]);
      hw.push_back(alpha * sum);
    }
  ok &= close("zherk", s2, hg, hw, 1e-12);
  cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dz), cudaFree(dh);
  return ok;
}

int main() {
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::printf("cublasCreate failed\n");
    return finish("cublas_gemm") | 1;
  }
  CHECK((plain<float>("sgemm", cublasSgemm, 64, 48, 40, 1e-4)));
  CHECK((plain<float>("sgemm large", cublasSgemm, 256, 256, 256, 1e-4)));
  CHECK((plain<double>("dgemm", cublasDgemm, 33, 17, 29, 1e-12)));
  auto cgemm = [](cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                  const std::complex<float>* al, const std::complex<float>* a, int lda, const std::complex<float>* b,
                  int ldb, const std::complex<float>* be, std::complex<float>* c, int ldc) {
    return cublasCgemm(h, ta, tb, m, n, k, reinterpret_cast<const cuComplex*>(al), reinterpret_cast<const cuComplex*>(a),
                       lda, reinterpret_cast<const cuComplex*>(b), ldb, reinterpret_cast<const cuComplex*>(be),
                       reinterpret_cast<cuComplex*>(c), ldc);
  };
  auto zgemm = [](cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                  const std::complex<double>* al, const std::complex<double>* a, int lda, const std::complex<double>* b,
                  int ldb, const std::complex<double>* be, std::complex<double>* c, int ldc) {
    return cublasZgemm(h, ta, tb, m, n, k, reinterpret_cast<const cuDoubleComplex*>(al),
                       reinterpret_cast<const cuDoubleComplex*>(a), lda, reinterpret_cast<const cuDoubleComplex*>(b), ldb,
                       reinterpret_cast<const cuDoubleComplex*>(be), reinterpret_cast<cuDoubleComplex*>(c), ldc);
  };
  CHECK((plain<std::complex<float>>("cgemm", cgemm, 32, 24, 16, 1e-4)));
  CHECK((plain<std::complex<double>>("zgemm", zgemm, 20, 12, 8, 1e-12)));
  CHECK(strided_batched(32, 32, 32, 5));
  CHECK(batched(16, 8, 12, 3));
  CHECK(mixed<__half>("half gemm", CUDA_R_16F, 64, 64, 64));
  CHECK(mixed<__nv_bfloat16>("bf16 gemm", CUDA_R_16BF, 64, 64, 64));
  CHECK(gemv_and_syrk(96));
  CHECK(rank_updates(40));
  cublasDestroy(handle);
  return finish("cublas_gemm");
}
