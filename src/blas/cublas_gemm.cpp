// cuBLAS's GEMM entry points, computed by the host's BLAS (OpenBLAS), for
// programs cucpu runs. `cucpu run` preloads this library ahead of NVIDIA's
// libcublas: every other cuBLAS call goes to NVIDIA's, unmodified.
//
// Why (docs/architecture.md, "NVIDIA's libraries"): for the GEMMs programs
// call most, cuBLASLt's heuristic on an sm_12x device chooses CUTLASS
// kernels it ships as SASS alone (cutlass_80_simt_sgemm_*, ..._s1688gemm_*),
// which cucpu cannot run, and it keeps choosing them whatever their
// attributes or occupancy say.
//
// Each call is checked as cuBLAS checks it, then enqueued on the handle's
// stream as a host function (cuLaunchHostFunc), so it runs in stream order
// and is captured into graphs like a kernel. Scalars in host memory are
// read at the call; in device memory (CUBLAS_POINTER_MODE_DEVICE), when
// the GEMM runs. Types this file does not compute go to NVIDIA's function.
#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>

#include "blas/cublas_call.h"
#include "blas/host_blas.h"

using namespace cublas_call;

namespace {

// cublasComputeType_t values that compute in float or double.
bool float_compute(int c) { return c == 68 || c == 69 || c == 74 || c == 75 || c == 77 || c == kR32F; }
bool double_compute(int c) { return c == 70 || c == 71 || c == kR64F; }

size_t type_bytes(int t) {
  switch (t) {
    case kR16F: case kR16BF: return 2;
    case kR32F: return 4;
    case kR64F: case kC32F: return 8;
    case kC64F: return 16;
    default: return 0;
  }
}

// One GEMM call: C_i = alpha op(A_i) op(B_i) + beta C_i for i < batch.
struct Gemm final : Job {
  void run() override;
  int a_type = kR32F, c_type = kR32F;  // B's type is A's
  int transa = kOpN, transb = kOpN;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, batch = 1;
  // Operands: the matrices with strides between batch members, or (arrays)
  // device arrays of pointers to them.
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  bool arrays = false;
};

Status check(const Gemm& g) {
  auto op_ok = [](int op) { return op == kOpN || op == kOpT || op == kOpC; };
  if (!op_ok(g.transa) || !op_ok(g.transb) || g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 0) return kInvalidValue;
  const int64_t a_rows = g.transa == kOpN ? g.m : g.k, b_rows = g.transb == kOpN ? g.k : g.n;
  if (g.lda < std::max<int64_t>(1, a_rows) || g.ldb < std::max<int64_t>(1, b_rows) ||
      g.ldc < std::max<int64_t>(1, g.m))
    return kInvalidValue;
  // The host's CBLAS takes int sizes.
  for (int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc})
    if (v > INT_MAX) return kNotSupported;
  return kSuccess;
}

const void* member(const void* base, int64_t i, int64_t stride, size_t bytes, bool arrays) {
  if (arrays) return static_cast<const void* const*>(base)[i];
  return static_cast<const unsigned char*>(base) + i * stride * static_cast<int64_t>(bytes);
}

// Runs on the stream (a host function): every member of the batch.
void Gemm::run() {
  const size_t ab = type_bytes(a_type), cb = type_bytes(c_type);
  for (int64_t i = 0; i < batch; ++i) {
    host_blas::Product p{transa, transb, m, n, k, lda, ldb, ldc};
    p.a = member(a, i, stride_a, ab, arrays);
    p.b = member(b, i, stride_b, ab, arrays);
    p.c = const_cast<void*>(member(c, i, stride_c, cb, arrays));
    p.alpha = alpha;
    p.beta = beta;
    host_blas::gemm(a_type, c_type, p);
  }
}

Status enqueue(Handle h, const Gemm& g, const void* alpha, const void* beta) {
  if (!h) return kNotInitialized;
  if (Status s = check(g)) return s;
  auto job = std::make_unique<Gemm>(g);
  job->scalar_bytes = scalar_bytes(g.c_type);
  return cublas_call::enqueue(h, std::move(job), alpha, beta, g.m == 0 || g.n == 0 || g.batch == 0);
}

Gemm make(int type, int c_type, int ta, int tb, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
          const void* b, int64_t ldb, void* c, int64_t ldc) {
  Gemm g;
  g.a_type = type, g.c_type = c_type, g.transa = ta, g.transb = tb;
  g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = ldc;
  g.a = a, g.b = b, g.c = c;
  return g;
}

// GemmEx's types: inputs of one type, computed in float or double.
bool ex_supported(int a_type, int b_type, int c_type, int compute) {
  if (a_type != b_type) return false;
  if (float_compute(compute))
    return ((a_type == kR32F || a_type == kR16F || a_type == kR16BF) && (c_type == kR32F || c_type == a_type)) ||
           (a_type == kC32F && c_type == kC32F);
  if (double_compute(compute)) return (a_type == kR64F || a_type == kC64F) && c_type == a_type;
  return false;
}

}  // namespace

// The entry points, 32- and 64-bit sizes alike, from one table.
#define CUCPU_TYPED_GEMMS(X) \
  X(S, float, kR32F)         \
  X(D, double, kR64F)        \
  X(C, std::complex<float>, kC32F) \
  X(Z, std::complex<double>, kC64F)

#define CUCPU_DEFINE_GEMMS(P, T, TYPE, I, SUFFIX)                                                                  \
  extern "C" Status cublas##P##gemm_v2##SUFFIX(Handle h, int ta, int tb, I m, I n, I k, const T* alpha,          \
                                                 const T* a, I lda, const T* b, I ldb, const T* beta, T* c,    \
                                                 I ldc) {                                                      \
    return enqueue(h, make(TYPE, TYPE, ta, tb, m, n, k, a, lda, b, ldb, c, ldc), alpha, beta);                 \
  }                                                                                                            \
  extern "C" Status cublas##P##gemmStridedBatched##SUFFIX(Handle h, int ta, int tb, I m, I n, I k,              \
                                                          const T* alpha, const T* a, I lda, long long sa,     \
                                                          const T* b, I ldb, long long sb, const T* beta,      \
                                                          T* c, I ldc, long long sc, I batch) {                \
    Gemm g = make(TYPE, TYPE, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);                                        \
    g.stride_a = sa, g.stride_b = sb, g.stride_c = sc, g.batch = batch;                                        \
    return enqueue(h, g, alpha, beta);                                                                         \
  }                                                                                                            \
  extern "C" Status cublas##P##gemmBatched##SUFFIX(Handle h, int ta, int tb, I m, I n, I k, const T* alpha,    \
                                                   const T* const* a, I lda, const T* const* b, I ldb,         \
                                                   const T* beta, T* const* c, I ldc, I batch) {               \
    Gemm g = make(TYPE, TYPE, ta, tb, m, n, k, a, lda, b, ldb, const_cast<T**>(c), ldc);                       \
    g.arrays = true, g.batch = batch;                                                                          \
    return enqueue(h, g, alpha, beta);                                                                         \
  }
#define CUCPU_GEMMS_32(P, T, TYPE) CUCPU_DEFINE_GEMMS(P, T, TYPE, int, )
#define CUCPU_GEMMS_64(P, T, TYPE) CUCPU_DEFINE_GEMMS(P, T, TYPE, int64_t, _64)
CUCPU_TYPED_GEMMS(CUCPU_GEMMS_32)
CUCPU_TYPED_GEMMS(CUCPU_GEMMS_64)

#define CUCPU_DEFINE_GEMM_EX(I, SUFFIX)                                                                           \
  extern "C" Status cublasGemmEx##SUFFIX(Handle h, int ta, int tb, I m, I n, I k, const void* alpha,             \
                                          const void* a, int at, I lda, const void* b, int bt, I ldb,            \
                                          const void* beta, void* c, int ct, I ldc, int compute, int algo) {     \
    if (!ex_supported(at, bt, ct, compute))                                                                       \
      return nvidia<decltype(&cublasGemmEx##SUFFIX)>("cublasGemmEx" #SUFFIX)(h, ta, tb, m, n, k, alpha, a, at,   \
                                                                             lda, b, bt, ldb, beta, c, ct, ldc, \
                                                                             compute, algo);                    \
    return enqueue(h, make(at, ct, ta, tb, m, n, k, a, lda, b, ldb, c, ldc), alpha, beta);                        \
  }                                                                                                               \
  extern "C" Status cublasGemmStridedBatchedEx##SUFFIX(                                                           \
      Handle h, int ta, int tb, I m, I n, I k, const void* alpha, const void* a, int at, I lda, long long sa,     \
      const void* b, int bt, I ldb, long long sb, const void* beta, void* c, int ct, I ldc, long long sc,        \
      I batch, int compute, int algo) {                                                                          \
    if (!ex_supported(at, bt, ct, compute))                                                                       \
      return nvidia<decltype(&cublasGemmStridedBatchedEx##SUFFIX)>("cublasGemmStridedBatchedEx" #SUFFIX)(        \
          h, ta, tb, m, n, k, alpha, a, at, lda, sa, b, bt, ldb, sb, beta, c, ct, ldc, sc, batch, compute, algo); \
    Gemm g = make(at, ct, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);                                               \
    g.stride_a = sa, g.stride_b = sb, g.stride_c = sc, g.batch = batch;                                           \
    return enqueue(h, g, alpha, beta);                                                                            \
  }                                                                                                               \
  extern "C" Status cublasGemmBatchedEx##SUFFIX(Handle h, int ta, int tb, I m, I n, I k, const void* alpha,      \
                                                 const void* const* a, int at, I lda, const void* const* b,       \
                                                 int bt, I ldb, const void* beta, void* const* c, int ct, I ldc,  \
                                                 I batch, int compute, int algo) {                                \
    if (!ex_supported(at, bt, ct, compute))                                                                       \
      return nvidia<decltype(&cublasGemmBatchedEx##SUFFIX)>("cublasGemmBatchedEx" #SUFFIX)(                      \
          h, ta, tb, m, n, k, alpha, a, at, lda, b, bt, ldb, beta, c, ct, ldc, batch, compute, algo);             \
    Gemm g = make(at, ct, ta, tb, m, n, k, a, lda, b, ldb, const_cast<void**>(c), ldc);                           \
    g.arrays = true, g.batch = batch;                                                                             \
    return enqueue(h, g, alpha, beta);                                                                            \
  }
// cublasSgemmEx: GemmEx computed in float, its scalars floats.
#define CUCPU_DEFINE_SGEMM_EX(I, SUFFIX)                                                                           \
  extern "C" Status cublasSgemmEx##SUFFIX(Handle h, int ta, int tb, I m, I n, I k, const float* alpha,            \
                                           const void* a, int at, I lda, const void* b, int bt, I ldb,            \
                                           const float* beta, void* c, int ct, I ldc) {                           \
    if (!ex_supported(at, bt, ct, kR32F) || at == kC32F)                                                          \
      return nvidia<decltype(&cublasSgemmEx##SUFFIX)>("cublasSgemmEx" #SUFFIX)(h, ta, tb, m, n, k, alpha, a, at, \
                                                                               lda, b, bt, ldb, beta, c, ct,    \
                                                                               ldc);                            \
    return enqueue(h, make(at, ct, ta, tb, m, n, k, a, lda, b, ldb, c, ldc), alpha, beta);                        \
  }
CUCPU_DEFINE_SGEMM_EX(int, )
CUCPU_DEFINE_SGEMM_EX(int64_t, _64)
CUCPU_DEFINE_GEMM_EX(int, )
CUCPU_DEFINE_GEMM_EX(int64_t, _64)
