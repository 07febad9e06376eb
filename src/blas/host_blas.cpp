#include "blas/host_blas.h"

#include <dlfcn.h>

#include <cstring>
#include <vector>

#include "base/half_bits.h"

namespace host_blas {
namespace {

// CBLAS's ABI: column-major is 102; NoTrans 111, Trans 112, ConjTrans 113.
constexpr int kColMajor = 102;
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                       int);
using Xgemm = void (*)(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*,
                       void*, int);

using Sgemv = void (*)(int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Dgemv = void (*)(int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
using Xgemv = void (*)(int, int, int, int, const void*, const void*, int, const void*, int, const void*, void*, int);
using Ssyrk = void (*)(int, int, int, int, int, float, const float*, int, float, float*, int);
using Dsyrk = void (*)(int, int, int, int, int, double, const double*, int, double, double*, int);
using Xsyrk = void (*)(int, int, int, int, int, const void*, const void*, int, const void*, void*, int);
using Ssyr2k = void (*)(int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Dsyr2k = void (*)(int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
using Xsyr2k = void (*)(int, int, int, int, int, const void*, const void*, int, const void*, int, const void*, void*,
                        int);
using Cherk = void (*)(int, int, int, int, int, float, const void*, int, float, void*, int);
using Zherk = void (*)(int, int, int, int, int, double, const void*, int, double, void*, int);
using Cher2k = void (*)(int, int, int, int, int, const void*, const void*, int, const void*, int, float, void*, int);
using Zher2k = void (*)(int, int, int, int, int, const void*, const void*, int, const void*, int, double, void*, int);

struct Library {
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  Xgemm cgemm = nullptr, zgemm = nullptr;
  Sgemv sgemv = nullptr;
  Dgemv dgemv = nullptr;
  Xgemv cgemv = nullptr, zgemv = nullptr;
  Ssyrk ssyrk = nullptr;
  Dsyrk dsyrk = nullptr;
  Xsyrk csyrk = nullptr, zsyrk = nullptr;
  Ssyr2k ssyr2k = nullptr;
  Dsyr2k dsyr2k = nullptr;
  Xsyr2k csyr2k = nullptr, zsyr2k = nullptr;
  Cherk cherk = nullptr;
  Zherk zherk = nullptr;
  Cher2k cher2k = nullptr;
  Zher2k zher2k = nullptr;
};

const Library& library() {
  static const Library lib = [] {
    Library l;
    for (const char* name : {"libopenblas.so.0", "libcblas.so.3", "libblas.so.3"}) {
      void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (!h) continue;
      l.sgemm = reinterpret_cast<Sgemm>(dlsym(h, "cblas_sgemm"));
      l.dgemm = reinterpret_cast<Dgemm>(dlsym(h, "cblas_dgemm"));
      l.cgemm = reinterpret_cast<Xgemm>(dlsym(h, "cblas_cgemm"));
      l.zgemm = reinterpret_cast<Xgemm>(dlsym(h, "cblas_zgemm"));
      l.sgemv = reinterpret_cast<Sgemv>(dlsym(h, "cblas_sgemv"));
      l.dgemv = reinterpret_cast<Dgemv>(dlsym(h, "cblas_dgemv"));
      l.cgemv = reinterpret_cast<Xgemv>(dlsym(h, "cblas_cgemv"));
      l.zgemv = reinterpret_cast<Xgemv>(dlsym(h, "cblas_zgemv"));
      l.ssyrk = reinterpret_cast<Ssyrk>(dlsym(h, "cblas_ssyrk"));
      l.dsyrk = reinterpret_cast<Dsyrk>(dlsym(h, "cblas_dsyrk"));
      l.csyrk = reinterpret_cast<Xsyrk>(dlsym(h, "cblas_csyrk"));
      l.zsyrk = reinterpret_cast<Xsyrk>(dlsym(h, "cblas_zsyrk"));
      l.ssyr2k = reinterpret_cast<Ssyr2k>(dlsym(h, "cblas_ssyr2k"));
      l.dsyr2k = reinterpret_cast<Dsyr2k>(dlsym(h, "cblas_dsyr2k"));
      l.csyr2k = reinterpret_cast<Xsyr2k>(dlsym(h, "cblas_csyr2k"));
      l.zsyr2k = reinterpret_cast<Xsyr2k>(dlsym(h, "cblas_zsyr2k"));
      l.cherk = reinterpret_cast<Cherk>(dlsym(h, "cblas_cherk"));
      l.zherk = reinterpret_cast<Zherk>(dlsym(h, "cblas_zherk"));
      l.cher2k = reinterpret_cast<Cher2k>(dlsym(h, "cblas_cher2k"));
      l.zher2k = reinterpret_cast<Zher2k>(dlsym(h, "cblas_zher2k"));
      if (l.sgemm && l.dgemm && l.cgemm && l.zgemm && l.sgemv && l.dgemv && l.cgemv && l.zgemv && l.ssyrk &&
          l.dsyrk && l.csyrk && l.zsyrk && l.ssyr2k && l.dsyr2k && l.csyr2k && l.zsyr2k && l.cherk && l.zherk &&
          l.cher2k && l.zher2k)
        break;
      l = Library{};
    }
    return l;
  }();
  return lib;
}

int op(int cublas_op) { return 111 + cublas_op; }

constexpr int kR32F = 0, kR64F = 1, kR16F = 2, kC32F = 4, kC64F = 5, kR16BF = 14;

// A column-major matrix of `rows` x `cols` (leading dimension ld) of half
// or bf16, widened to float with the same leading dimension.
std::vector<float> widen(const void* src, int type, int64_t rows, int64_t cols, int64_t ld) {
  if (rows <= 0 || cols <= 0) return {};
  std::vector<float> out(static_cast<size_t>(ld * (cols - 1) + rows));
  const auto* h = static_cast<const uint16_t*>(src);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i)
      out[static_cast<size_t>(j * ld + i)] = type == kR16F ? cucpu::half_bits_to_float(h[j * ld + i]) : cucpu::bf16_bits_to_float(h[j * ld + i]);
  return out;
}
void narrow(const std::vector<float>& src, void* dst, int type, int64_t rows, int64_t cols, int64_t ld) {
  auto* h = static_cast<uint16_t*>(dst);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      const float v = src[static_cast<size_t>(j * ld + i)];
      h[j * ld + i] = type == kR16F ? cucpu::float_to_half_bits(v) : cucpu::float_to_bf16_bits(v);
    }
}

}  // namespace

bool available() { return library().sgemm != nullptr; }

void gemm(int a_type, int c_type, const Product& p) {
  const Library& l = library();
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  const int lda = static_cast<int>(p.lda), ldb = static_cast<int>(p.ldb), ldc = static_cast<int>(p.ldc);
  const int ta = op(p.transa), tb = op(p.transb);
  switch (a_type) {
    case kR64F:
      l.dgemm(kColMajor, ta, tb, m, n, k, *static_cast<const double*>(p.alpha), static_cast<const double*>(p.a), lda,
              static_cast<const double*>(p.b), ldb, *static_cast<const double*>(p.beta), static_cast<double*>(p.c),
              ldc);
      return;
    case kC32F: l.cgemm(kColMajor, ta, tb, m, n, k, p.alpha, p.a, lda, p.b, ldb, p.beta, p.c, ldc); return;
    case kC64F: l.zgemm(kColMajor, ta, tb, m, n, k, p.alpha, p.a, lda, p.b, ldb, p.beta, p.c, ldc); return;
    default: break;
  }
  const float alpha = *static_cast<const float*>(p.alpha), beta = *static_cast<const float*>(p.beta);
  const float* a = static_cast<const float*>(p.a);
  const float* b = static_cast<const float*>(p.b);
  std::vector<float> wa, wb, wc;
  if (a_type != kR32F) {
    wa = widen(p.a, a_type, p.transa == 0 ? p.m : p.k, p.transa == 0 ? p.k : p.m, p.lda);
    wb = widen(p.b, a_type, p.transb == 0 ? p.k : p.n, p.transb == 0 ? p.n : p.k, p.ldb);
    a = wa.data(), b = wb.data();
  }
  if (c_type == kR32F) {
    l.sgemm(kColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, static_cast<float*>(p.c), ldc);
    return;
  }
  wc = widen(p.c, c_type, p.m, p.n, p.ldc);
  l.sgemm(kColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, wc.data(), ldc);
  narrow(wc, p.c, c_type, p.m, p.n, p.ldc);
}

void gemv(int type, const Vector& v) {
  const Library& l = library();
  const int m = static_cast<int>(v.m), n = static_cast<int>(v.n), lda = static_cast<int>(v.lda);
  const int incx = static_cast<int>(v.incx), incy = static_cast<int>(v.incy), t = op(v.trans);
  switch (type) {
    case kR32F:
      l.sgemv(kColMajor, t, m, n, *static_cast<const float*>(v.alpha), static_cast<const float*>(v.a), lda,
              static_cast<const float*>(v.x), incx, *static_cast<const float*>(v.beta), static_cast<float*>(v.y), incy);
      return;
    case kR64F:
      l.dgemv(kColMajor, t, m, n, *static_cast<const double*>(v.alpha), static_cast<const double*>(v.a), lda,
              static_cast<const double*>(v.x), incx, *static_cast<const double*>(v.beta), static_cast<double*>(v.y),
              incy);
      return;
    case kC32F: l.cgemv(kColMajor, t, m, n, v.alpha, v.a, lda, v.x, incx, v.beta, v.y, incy); return;
    default: l.zgemv(kColMajor, t, m, n, v.alpha, v.a, lda, v.x, incx, v.beta, v.y, incy); return;
  }
}

void syrk(int type, const RankK& r) {
  const Library& l = library();
  const int uplo = r.uplo == 0 ? 122 : 121, t = op(r.trans);  // CblasLower, CblasUpper
  const int n = static_cast<int>(r.n), k = static_cast<int>(r.k), lda = static_cast<int>(r.lda);
  const int ldc = static_cast<int>(r.ldc);
  switch (type) {
    case kR32F:
      l.ssyrk(kColMajor, uplo, t, n, k, *static_cast<const float*>(r.alpha), static_cast<const float*>(r.a), lda,
              *static_cast<const float*>(r.beta), static_cast<float*>(r.c), ldc);
      return;
    case kR64F:
      l.dsyrk(kColMajor, uplo, t, n, k, *static_cast<const double*>(r.alpha), static_cast<const double*>(r.a), lda,
              *static_cast<const double*>(r.beta), static_cast<double*>(r.c), ldc);
      return;
    case kC32F: l.csyrk(kColMajor, uplo, t, n, k, r.alpha, r.a, lda, r.beta, r.c, ldc); return;
    default: l.zsyrk(kColMajor, uplo, t, n, k, r.alpha, r.a, lda, r.beta, r.c, ldc); return;
  }
}

void syr2k(int type, const RankK& r, const void* b, int64_t ldb) {
  const Library& l = library();
  const int uplo = r.uplo == 0 ? 122 : 121, t = op(r.trans);
  const int n = static_cast<int>(r.n), k = static_cast<int>(r.k), lda = static_cast<int>(r.lda);
  const int ldc = static_cast<int>(r.ldc), ld_b = static_cast<int>(ldb);
  switch (type) {
    case kR32F:
      l.ssyr2k(kColMajor, uplo, t, n, k, *static_cast<const float*>(r.alpha), static_cast<const float*>(r.a), lda,
               static_cast<const float*>(b), ld_b, *static_cast<const float*>(r.beta), static_cast<float*>(r.c), ldc);
      return;
    case kR64F:
      l.dsyr2k(kColMajor, uplo, t, n, k, *static_cast<const double*>(r.alpha), static_cast<const double*>(r.a), lda,
               static_cast<const double*>(b), ld_b, *static_cast<const double*>(r.beta), static_cast<double*>(r.c),
               ldc);
      return;
    case kC32F: l.csyr2k(kColMajor, uplo, t, n, k, r.alpha, r.a, lda, b, ld_b, r.beta, r.c, ldc); return;
    default: l.zsyr2k(kColMajor, uplo, t, n, k, r.alpha, r.a, lda, b, ld_b, r.beta, r.c, ldc); return;
  }
}

void herk(int type, const RankK& r) {
  const Library& l = library();
  const int uplo = r.uplo == 0 ? 122 : 121, t = op(r.trans);
  const int n = static_cast<int>(r.n), k = static_cast<int>(r.k), lda = static_cast<int>(r.lda);
  if (type == kC32F)
    l.cherk(kColMajor, uplo, t, n, k, *static_cast<const float*>(r.alpha), r.a, lda, *static_cast<const float*>(r.beta),
            r.c, static_cast<int>(r.ldc));
  else
    l.zherk(kColMajor, uplo, t, n, k, *static_cast<const double*>(r.alpha), r.a, lda,
            *static_cast<const double*>(r.beta), r.c, static_cast<int>(r.ldc));
}

void her2k(int type, const RankK& r, const void* b, int64_t ldb) {
  const Library& l = library();
  const int uplo = r.uplo == 0 ? 122 : 121, t = op(r.trans);
  const int n = static_cast<int>(r.n), k = static_cast<int>(r.k), lda = static_cast<int>(r.lda);
  if (type == kC32F)
    l.cher2k(kColMajor, uplo, t, n, k, r.alpha, r.a, lda, b, static_cast<int>(ldb), *static_cast<const float*>(r.beta),
             r.c, static_cast<int>(r.ldc));
  else
    l.zher2k(kColMajor, uplo, t, n, k, r.alpha, r.a, lda, b, static_cast<int>(ldb),
             *static_cast<const double*>(r.beta), r.c, static_cast<int>(r.ldc));
}

}  // namespace host_blas
