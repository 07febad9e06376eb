// cuSOLVER's dense routines, unmodified from the toolkit: an LU
// factorization and solve (getrf/getrs) and a Cholesky factorization and
// solve (potrf/potrs) of double matrices, checked by the residual.
#include <cusolverDn.h>

#include <cmath>
#include <vector>

#include "check.h"

// A diagonally dominant symmetric matrix (column-major), so both
// factorizations exist and are well conditioned.
std::vector<double> make_matrix(int n) {
  std::vector<double> a(size_t(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) a[i + size_t(j) * n] = i == j ? n + 1.0 : 1.0 / (1 + i + j);
  return a;
}

double residual(const std::vector<double>& a, const std::vector<double>& x, const std::vector<double>& b, int n) {
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += a[i + size_t(j) * n] * x[j];
    worst = std::max(worst, std::fabs(s - b[i]));
  }
  return worst;
}

template <class T>
T* to_device(const std::vector<T>& h) {
  T* d = nullptr;
  cudaMalloc(&d, h.size() * sizeof(T));
  cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}

bool solve(cusolverDnHandle_t h, int n, bool cholesky) {
  const auto a = make_matrix(n);
  std::vector<double> b(n);
  for (int i = 0; i < n; ++i) b[i] = std::sin(i + 1.0);
  double *da = to_device(a), *db = to_device(b), *work = nullptr;
  int *ipiv = nullptr, *info = nullptr, lwork = 0;
  cudaMalloc(&ipiv, n * sizeof(int));
  cudaMalloc(&info, sizeof(int));
  cusolverStatus_t s = cholesky ? cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, da, n, &lwork)
                                : cusolverDnDgetrf_bufferSize(h, n, n, da, n, &lwork);
  cudaMalloc(&work, (lwork + 1) * sizeof(double));
  if (s == CUSOLVER_STATUS_SUCCESS)
    s = cholesky ? cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, da, n, work, lwork, info)
                 : cusolverDnDgetrf(h, n, n, da, n, work, ipiv, info);
  if (s == CUSOLVER_STATUS_SUCCESS)
    s = cholesky ? cusolverDnDpotrs(h, CUBLAS_FILL_MODE_LOWER, n, 1, da, n, db, n, info)
                 : cusolverDnDgetrs(h, CUBLAS_OP_N, n, 1, da, n, ipiv, db, n, info);
  std::vector<double> x(n);
  int host_info = -1;
  cudaMemcpy(x.data(), db, n * sizeof(double), cudaMemcpyDeviceToHost);
  cudaMemcpy(&host_info, info, sizeof(int), cudaMemcpyDeviceToHost);
  const double r = residual(a, x, b, n);
  cudaFree(da), cudaFree(db), cudaFree(work), cudaFree(ipiv), cudaFree(info);
  const bool ok = s == CUSOLVER_STATUS_SUCCESS && host_info == 0 && r < 1e-9;
  if (!ok) std::printf("%s %d: status %d, info %d, residual %g\n", cholesky ? "potrf" : "getrf", n, (int)s, host_info, r);
  return ok;
}

int main() {
  cusolverDnHandle_t h;
  if (cusolverDnCreate(&h) != CUSOLVER_STATUS_SUCCESS) {
    std::printf("cusolverDnCreate failed\n");
    return finish("cusolver_factorizations") | 1;
  }
  CHECK(solve(h, 40, false));
  CHECK(solve(h, 300, false));
  CHECK(solve(h, 40, true));
  CHECK(solve(h, 300, true));
  cusolverDnDestroy(h);
  return finish("cusolver_factorizations");
}
