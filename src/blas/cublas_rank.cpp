// cuBLAS's gemv and syrk, on the host's BLAS like the GEMMs
// (cublas_gemm.cpp): NVIDIA's compute them with cuBLASLt's GEMM kernels,
// which cucpu cannot run (SASS alone), so they fail the same way.
#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <memory>

#include "blas/cublas_call.h"
#include "blas/host_blas.h"

using namespace cublas_call;

namespace {

size_t scalar_bytes(int type) { return type == kC64F ? 16 : type == kC32F || type == kR64F ? 8 : 4; }
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

struct Syrk final : Job {
  int type;
  host_blas::RankK r;
  void run() override {
    r.alpha = alpha;
    r.beta = beta;
    host_blas::syrk(type, r);
  }
};

Status syrk(Handle h, int type, int uplo, int trans, int64_t n, int64_t k, const void* alpha, const void* a,
            int64_t lda, const void* beta, void* c, int64_t ldc) {
  if (!h) return kNotInitialized;
  const bool complex = type == kC32F || type == kC64F;
  if ((uplo != 0 && uplo != 1) || (trans != kOpN && trans != kOpT && (complex || trans != kOpC)) || n < 0 || k < 0 ||
      lda < std::max<int64_t>(1, trans == kOpN ? n : k) || ldc < std::max<int64_t>(1, n))
    return kInvalidValue;
  if (!fits_int({n, k, lda, ldc})) return kNotSupported;
  auto job = std::make_unique<Syrk>();
  job->type = type;
  job->r = host_blas::RankK{uplo, trans == kOpC ? kOpT : trans, n, k, lda, ldc, a, c, nullptr, nullptr};
  job->scalar_bytes = scalar_bytes(type);
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
    return syrk(h, TYPE, uplo, trans, n, k, alpha, a, lda, beta, c, ldc);                                        \
  }
#define CUCPU_RANK_32(P, T, TYPE) CUCPU_DEFINE_RANK(P, T, TYPE, int, )
#define CUCPU_RANK_64(P, T, TYPE) CUCPU_DEFINE_RANK(P, T, TYPE, int64_t, _64)
CUCPU_TYPED(CUCPU_RANK_32)
CUCPU_TYPED(CUCPU_RANK_64)
