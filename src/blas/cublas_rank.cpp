// cuBLAS's gemv and rank-k updates (syrk, syr2k, herk, her2k), on the
// host's BLAS like the GEMMs (cublas_gemm.cpp): NVIDIA's compute them with
// cuBLASLt's GEMM kernels, which cucpu cannot run (SASS alone), so they
// fail the same way.
#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <memory>

#include "blas/cublas_call.h"
#include "blas/host_blas.h"

using namespace cublas_call;

namespace {

bool fits_int(std::initializer_list<int64_t> values) {
  for (int64_t v : values)
    if (v > INT_MAX || v < INT_MIN) return false;
  return true;
}

struct Gemv final : Job {
  int type;
  host_blas::Vector v;
  void run() override {
    v.alpha = alpha;
    v.beta = beta;
    host_blas::gemv(type, v);
  }
};

Status gemv(Handle h, int type, int trans, int64_t m, int64_t n, const void* alpha, const void* a, int64_t lda,
            const void* x, int64_t incx, const void* beta, void* y, int64_t incy) {
  if (!h) return kNotInitialized;
  if ((trans != kOpN && trans != kOpT && trans != kOpC) || m < 0 || n < 0 || lda < std::max<int64_t>(1, m) ||
      incx == 0 || incy == 0)
    return kInvalidValue;
  if (!fits_int({m, n, lda, incx, incy})) return kNotSupported;
  auto job = std::make_unique<Gemv>();
  job->type = type;
  job->v = host_blas::Vector{trans, m, n, lda, incx, incy, a, x, y, nullptr, nullptr};
  job->scalar_bytes = scalar_bytes(type);
  return enqueue(h, std::move(job), alpha, beta, m == 0 || n == 0);
}

enum class RankKind { kSyrk, kSyr2k, kHerk, kHer2k };

struct Rank final : Job {
  RankKind kind;
  int type;
  host_blas::RankK r;
  const void* b = nullptr;
  int64_t ldb = 0;
  void run() override {
    r.alpha = alpha;
    r.beta = beta;
    switch (kind) {
      case RankKind::kSyrk: host_blas::syrk(type, r); return;
      case RankKind::kSyr2k: host_blas::syr2k(type, r, b, ldb); return;
      case RankKind::kHerk: host_blas::herk(type, r); return;
      case RankKind::kHer2k: host_blas::her2k(type, r, b, ldb); return;
    }
  }
};

// `b`: syr2k's and her2k's second matrix (ldb checked as lda is).
Status rank(Handle h, RankKind kind, int type, int uplo, int trans, int64_t n, int64_t k, const void* alpha,
            const void* a, int64_t lda, const void* b, int64_t ldb, const void* beta, void* c, int64_t ldc) {
  if (!h) return kNotInitialized;
  const bool complex = type == kC32F || type == kC64F;
  const bool hermitian = kind == RankKind::kHerk || kind == RankKind::kHer2k;
  const bool two = kind == RankKind::kSyr2k || kind == RankKind::kHer2k;
  const bool trans_ok = hermitian ? trans == kOpN || trans == kOpC
                                  : trans == kOpN || trans == kOpT || (!complex && trans == kOpC);
  const int64_t rows = trans == kOpN ? n : k;
  if ((uplo != 0 && uplo != 1) || !trans_ok || n < 0 || k < 0 || lda < std::max<int64_t>(1, rows) ||
      (two && ldb < std::max<int64_t>(1, rows)) || ldc < std::max<int64_t>(1, n))
    return kInvalidValue;
  if (!fits_int({n, k, lda, ldb, ldc})) return kNotSupported;
  auto job = std::make_unique<Rank>();
  job->kind = kind;
  job->type = type;
  job->r = host_blas::RankK{uplo, !hermitian && trans == kOpC ? kOpT : trans, n, k, lda, ldc, a, c, nullptr, nullptr};
  job->b = b;
  job->ldb = ldb;
  // herk's scalars and her2k's beta are real.
  const size_t real = type == kC64F ? 8 : 4;
  job->scalar_bytes = kind == RankKind::kHerk ? real : scalar_bytes(type);
  job->beta_bytes = hermitian ? real : 0;
  return enqueue(h, std::move(job), alpha, beta, n == 0);
}

}  // namespace

#define CUCPU_TYPED(X)               \
  X(S, float, kR32F)                 \
  X(D, double, kR64F)                \
  X(C, std::complex<float>, kC32F)   \
  X(Z, std::complex<double>, kC64F)

#define CUCPU_DEFINE_RANK(P, T, TYPE, I, SUFFIX)                                                                   \
  extern "C" Status cublas##P##gemv_v2##SUFFIX(Handle h, int trans, I m, I n, const T* alpha, const T* a, I lda,  \
                                                 const T* x, I incx, const T* beta, T* y, I incy) {              \
    return gemv(h, TYPE, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);                                    \
  }                                                                                                              \
  extern "C" Status cublas##P##syrk_v2##SUFFIX(Handle h, int uplo, int trans, I n, I k, const T* alpha,           \
                                                 const T* a, I lda, const T* beta, T* c, I ldc) {                \
    return rank(h, RankKind::kSyrk, TYPE, uplo, trans, n, k, alpha, a, lda, nullptr, 0, beta, c, ldc);          \
  }                                                                                                              \
  extern "C" Status cublas##P##syr2k_v2##SUFFIX(Handle h, int uplo, int trans, I n, I k, const T* alpha,          \
                                                  const T* a, I lda, const T* b, I ldb, const T* beta, T* c,     \
                                                  I ldc) {                                                       \
    return rank(h, RankKind::kSyr2k, TYPE, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);             \
  }
#define CUCPU_RANK_32(P, T, TYPE) CUCPU_DEFINE_RANK(P, T, TYPE, int, )
#define CUCPU_RANK_64(P, T, TYPE) CUCPU_DEFINE_RANK(P, T, TYPE, int64_t, _64)
CUCPU_TYPED(CUCPU_RANK_32)
CUCPU_TYPED(CUCPU_RANK_64)

// The Hermitian rank-k updates: R is the real type of the complex T.
#define CUCPU_DEFINE_HERMITIAN(P, T, R, TYPE, I, SUFFIX)                                                          \
  extern "C" Status cublas##P##herk_v2##SUFFIX(Handle h, int uplo, int trans, I n, I k, const R* alpha,           \
                                                 const T* a, I lda, const R* beta, T* c, I ldc) {                \
    return rank(h, RankKind::kHerk, TYPE, uplo, trans, n, k, alpha, a, lda, nullptr, 0, beta, c, ldc);          \
  }                                                                                                              \
  extern "C" Status cublas##P##her2k_v2##SUFFIX(Handle h, int uplo, int trans, I n, I k, const T* alpha,          \
                                                  const T* a, I lda, const T* b, I ldb, const R* beta, T* c,     \
                                                  I ldc) {                                                       \
    return rank(h, RankKind::kHer2k, TYPE, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);             \
  }
CUCPU_DEFINE_HERMITIAN(C, std::complex<float>, float, kC32F, int, )
CUCPU_DEFINE_HERMITIAN(Z, std::complex<double>, double, kC64F, int, )
CUCPU_DEFINE_HERMITIAN(C, std::complex<float>, float, kC32F, int64_t, _64)
CUCPU_DEFINE_HERMITIAN(Z, std::complex<double>, double, kC64F, int64_t, _64)
