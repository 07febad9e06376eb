// cuSPARSE's generic API, unmodified from the toolkit: a CSR matrix times
// a vector (SpMV) and times a dense matrix (SpMM), against a host product.
#include <cusparse.h>

#include <cmath>
#include <vector>

#include "check.h"

struct Csr {
  int rows, cols;
  std::vector<int> offsets, columns;
  std::vector<float> values;
};

// A banded matrix with a few far entries: rows of 1 to 5 nonzeros.
Csr make_matrix(int rows, int cols) {
  Csr m{rows, cols, {0}, {}, {}};
  for (int r = 0; r < rows; ++r) {
    for (int c = r - 1; c <= r + 1; ++c)
      if (c >= 0 && c < cols && (r + c) % 3 != 0) m.columns.push_back(c), m.values.push_back(float(r % 7 - c % 5) / 4);
    if (r % 4 == 0 && cols > r + 9) m.columns.push_back(r + 9), m.values.push_back(0.5f);
    m.offsets.push_back(int(m.columns.size()));
  }
  return m;
}

template <class T>
T* to_device(const std::vector<T>& h) {
  T* d = nullptr;
  cudaMalloc(&d, h.size() * sizeof(T) + 1);
  cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}

bool within(const char* what, cusparseStatus_t s, const std::vector<float>& got, const std::vector<float>& want) {
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) bad += std::fabs(got[i] - want[i]) > 1e-4f * (1 + std::fabs(want[i]));
  if (s != CUSPARSE_STATUS_SUCCESS || bad) std::printf("%s: status %d, %zu of %zu wrong\n", what, (int)s, bad, want.size());
  return s == CUSPARSE_STATUS_SUCCESS && bad == 0;
}

int main() {
  cusparseHandle_t handle;
  if (cusparseCreate(&handle) != CUSPARSE_STATUS_SUCCESS) {
    std::printf("cusparseCreate failed\n");
    return finish("cusparse_products") | 1;
  }
  const Csr a = make_matrix(300, 280);
  const int nnz = int(a.values.size()), k = 5;
  int *offsets = to_device(a.offsets), *columns = to_device(a.columns);
  float* values = to_device(a.values);
  cusparseSpMatDescr_t mat;
  cusparseCreateCsr(&mat, a.rows, a.cols, nnz, offsets, columns, values, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                    CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
  std::vector<float> x(a.cols), b(size_t(a.cols) * k);
  for (int i = 0; i < a.cols; ++i) x[i] = float(i % 11) - 5;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 9) / 2 - 2;
  float *dx = to_device(x), *dy = to_device(std::vector<float>(a.rows, 1.0f)), *db = to_device(b),
        *dc = to_device(std::vector<float>(size_t(a.rows) * k, 0.0f));
  cusparseDnVecDescr_t vx, vy;
  cusparseCreateDnVec(&vx, a.cols, dx, CUDA_R_32F);
  cusparseCreateDnVec(&vy, a.rows, dy, CUDA_R_32F);
  const float alpha = 2.0f, beta = 0.5f;
  size_t bytes = 0;
  void* work = nullptr;
  cusparseStatus_t s = cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vx, &beta, vy,
                                               CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes);
  cudaMalloc(&work, bytes + 1);
  if (s == CUSPARSE_STATUS_SUCCESS)
    s = cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vx, &beta, vy, CUDA_R_32F,
                     CUSPARSE_SPMV_ALG_DEFAULT, work);
  std::vector<float> y(a.rows), want(a.rows);
  cudaMemcpy(y.data(), dy, a.rows * sizeof(float), cudaMemcpyDeviceToHost);
  for (int r = 0; r < a.rows; ++r) {
    float sum = 0;
    for (int i = a.offsets[r]; i < a.offsets[r + 1]; ++i) sum += a.values[i] * x[a.columns[i]];
    want[r] = alpha * sum + beta * 1.0f;
  }
  CHECK(within("spmv", s, y, want));

  cusparseDnMatDescr_t mb, mc;
  cusparseCreateDnMat(&mb, a.cols, k, a.cols, db, CUDA_R_32F, CUSPARSE_ORDER_COL);
  cusparseCreateDnMat(&mc, a.rows, k, a.rows, dc, CUDA_R_32F, CUSPARSE_ORDER_COL);
  void* work2 = nullptr;
  s = cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat,
                              mb, &beta, mc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes);
  cudaMalloc(&work2, bytes + 1);
  if (s == CUSPARSE_STATUS_SUCCESS)
    s = cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, mb, &beta,
                     mc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, work2);
  std::vector<float> c(size_t(a.rows) * k), wantc(c.size());
  cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost);
  for (int j = 0; j < k; ++j)
    for (int r = 0; r < a.rows; ++r) {
      float sum = 0;
      for (int i = a.offsets[r]; i < a.offsets[r + 1]; ++i) sum += a.values[i] * b[a.columns[i] + size_t(j) * a.cols];
      wantc[r + size_t(j) * a.rows] = alpha * sum;
    }
  CHECK(within("spmm", s, c, wantc));
  cusparseDestroySpMat(mat);
  cusparseDestroyDnVec(vx), cusparseDestroyDnVec(vy);
  cusparseDestroyDnMat(mb), cusparseDestroyDnMat(mc);
  cusparseDestroy(handle);
  return finish("cusparse_products");
}
