// The host's BLAS (OpenBLAS, else the reference CBLAS), opened on first
// use, and the GEMM of cuBLAS's types on it: f32, f64 and their complexes
// as they are; f16 and bf16 inputs (and outputs) widened to f32, as cuBLAS
// computes them with CUBLAS_COMPUTE_32F.
#pragma once

#include <cstdint>

namespace host_blas {

// One column-major product C = alpha op(A) op(B) + beta C (cuBLAS's
// operation codes: 0 N, 1 T, 2 C). alpha and beta point to scalars of
// the compute type (float for f16 and bf16).
struct Product {
  int transa, transb;
  int64_t m, n, k, lda, ldb, ldc;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  const void* alpha = nullptr;
  const void* beta = nullptr;
};

// y = alpha op(A) x + beta y (A m x n), and the lower (uplo 0) or upper
// (uplo 1) triangle of C = alpha op(A) op(A)^T + beta C (C n x n, A n x k
// for op N), in cuBLAS's codes; `type` is R_32F, R_64F, C_32F or C_64F.
struct Vector {
  int trans;
  int64_t m, n, lda, incx, incy;
  const void* a;
  const void* x;
  void* y;
  const void* alpha;
  const void* beta;
};
void gemv(int type, const Vector& v);
struct RankK {
  int uplo, trans;
  int64_t n, k, lda, ldc;
  const void* a;
  void* c;
  const void* alpha;
  const void* beta;
};
void syrk(int type, const RankK& r);
// C = alpha op(A) op(B)^T + alpha op(B) op(A)^T + beta C, lower or upper.
void syr2k(int type, const RankK& r, const void* b, int64_t ldb);
// The Hermitian forms (complex types): herk's alpha and beta are real,
// her2k's beta is.
void herk(int type, const RankK& r);
void her2k(int type, const RankK& r, const void* b, int64_t ldb);

// Whether a BLAS library could be opened (thread-safe; opens it once).
bool available();
// `a_type` is A's and B's cudaDataType, `c_type` C's (R_32F, R_64F, C_32F,
// C_64F, R_16F, R_16BF).
void gemm(int a_type, int c_type, const Product& p);

}  // namespace host_blas
