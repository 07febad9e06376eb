// Warp matrix products (wmma) of every shape and type sm_90 offers but the
// sub-byte ones: f16 and bf16 inputs at m16n16k16, m32n8k16 and m8n32k16,
// tf32 at m16n16k8, f64 at m8n8k4, s8 and u8 at the three 16-deep shapes.
// One warp per launch: D = A * B + C, A (M x K) and B (K x N) in the
// layouts each kernel's name gives (r: row-major, c: column-major), C and D
// M x N row-major (or column-major where the name ends in _dc).
// kernels_wmma.cpp holds the host products.
#include <mma.h>

using namespace nvcuda;

template <int M, int N, int K, class In, class Store, class Acc, class LA, class LB>
__device__ void product(const Store* A, const Store* B, const Acc* C, Acc* D, wmma::layout_t dl) {
  wmma::fragment<wmma::matrix_a, M, N, K, In, LA> fa;
  wmma::fragment<wmma::matrix_b, M, N, K, In, LB> fb;
  wmma::fragment<wmma::accumulator, M, N, K, Acc> fc;
  constexpr bool a_row = std::is_same<LA, wmma::row_major>::value;
  constexpr bool b_row = std::is_same<LB, wmma::row_major>::value;
  wmma::load_matrix_sync(fa, A, a_row ? K : M);
  wmma::load_matrix_sync(fb, B, b_row ? N : K);
  wmma::load_matrix_sync(fc, C, dl == wmma::mem_row_major ? N : M, dl);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(D, fc, dl == wmma::mem_row_major ? N : M, dl);
}

#define PRODUCT(name, M, N, K, In, Store, Acc, LA, LB, DL)                                          \
  extern "C" __global__ void name(const Store* A, const Store* B, const Acc* C, Acc* D) {          \
    product<M, N, K, In, Store, Acc, wmma::LA, wmma::LB>(A, B, C, D, wmma::DL);                   \
  }

PRODUCT(wmma_f16_f32_m32n8k16_rc, 32, 8, 16, __half, __half, float, row_major, col_major, mem_row_major)
PRODUCT(wmma_f16_f32_m8n32k16_rc, 8, 32, 16, __half, __half, float, row_major, col_major, mem_row_major)
PRODUCT(wmma_f16_f32_m32n8k16_cr_dc, 32, 8, 16, __half, __half, float, col_major, row_major, mem_col_major)
PRODUCT(wmma_f16_f16_m16n16k16_rr, 16, 16, 16, __half, __half, __half, row_major, row_major, mem_row_major)
PRODUCT(wmma_f16_f16_m32n8k16_rc, 32, 8, 16, __half, __half, __half, row_major, col_major, mem_row_major)
PRODUCT(wmma_bf16_f32_m16n16k16_rc, 16, 16, 16, __nv_bfloat16, __nv_bfloat16, float, row_major, col_major, mem_row_major)
PRODUCT(wmma_bf16_f32_m32n8k16_rc, 32, 8, 16, __nv_bfloat16, __nv_bfloat16, float, row_major, col_major, mem_row_major)
PRODUCT(wmma_bf16_f32_m8n32k16_cr, 8, 32, 16, __nv_bfloat16, __nv_bfloat16, float, col_major, row_major, mem_row_major)
PRODUCT(wmma_f64_m8n8k4_rc, 8, 8, 4, double, double, double, row_major, col_major, mem_row_major)
PRODUCT(wmma_f64_m8n8k4_cr_dc, 8, 8, 4, double, double, double, col_major, row_major, mem_col_major)
PRODUCT(wmma_s8_m16n16k16_rc, 16, 16, 16, signed char, signed char, int, row_major, col_major, mem_row_major)
PRODUCT(wmma_s8_m32n8k16_rc, 32, 8, 16, signed char, signed char, int, row_major, col_major, mem_row_major)
PRODUCT(wmma_s8_m8n32k16_rr, 8, 32, 16, signed char, signed char, int, row_major, row_major, mem_row_major)
PRODUCT(wmma_u8_m16n16k16_rc, 16, 16, 16, unsigned char, unsigned char, int, row_major, col_major, mem_row_major)

// tf32: the fragments' floats rounded to tf32 before the product, as
// programs do (wmma::__float_to_tf32).
extern "C" __global__ void wmma_tf32_m16n16k8_rc(const float* A, const float* B, const float* C, float* D) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
  wmma::load_matrix_sync(fa, A, 8);
  wmma::load_matrix_sync(fb, B, 8);
  wmma::load_matrix_sync(fc, C, 16, wmma::mem_row_major);
  for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
  for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(D, fc, 16, wmma::mem_row_major);
}

// Element-wise work on a fragment (scaling the accumulator), as programs
// do between products: every element, whatever the layout.
extern "C" __global__ void wmma_f16_f32_m16n16k16_scaled(const __half* A, const __half* B, float* D, float s) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 1.0f);
  wmma::load_matrix_sync(fa, A, 16);
  wmma::load_matrix_sync(fb, B, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  for (int i = 0; i < fc.num_elements; ++i) fc.x[i] *= s;
  wmma::store_matrix_sync(D, fc, 16, wmma::mem_row_major);
}
