// Features that need sm_80 or newer: cp.async with commit/wait groups,
// mma.sync m16n8k16 (f16 inputs, f32 accumulators), the __reduce_*_sync
// warp reductions (redux.sync) and min/max with NaN propagation.
// kernels_sm80.cpp holds the host side.
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ size_t gmem_addr(const void* p) { return __cvta_generic_to_global(p); }

// Copies ints global -> shared with cp.async in three groups (one block of
// 128 threads): 16-byte .cg copies, 4-byte .ca copies, and 16-byte copies
// of which only 8 source bytes are read (the rest zero filled). out[0..895]
// is shared memory after the final wait; out[896 + t] a sum read after
// waiting for the first two groups only.
extern "C" __global__ void cp_async_copy(const int* in, int* out) {
  __shared__ __align__(16) int s[1024];
  int t = threadIdx.x;
  // Group 1: s[0..511] from in[0..511], four ints per thread.
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(&s[t * 4])), "l"(gmem_addr(&in[t * 4]))
               : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  // Group 2: s[512..639] from in[t] reversed, one int per thread.
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_addr(&s[512 + t])), "l"(gmem_addr(&in[127 - t]))
               : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  // Group 3, threads below 64: s[640 + 4t ..] gets in[4t], in[4t+1], 0, 0.
  if (t < 64)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, 8;" ::"r"(smem_addr(&s[640 + t * 4])),
                 "l"(gmem_addr(&in[t * 4]))
                 : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 1;" ::: "memory");  // groups 1 and 2 are done
  __syncthreads();
  int early = s[(t * 37) % 512] + s[512 + t];
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  for (int j = t; j < 896; j += 128) out[j] = s[j];
  out[896 + t] = early;
}

// cp.async's optional operands (one block of 64 threads): an ignore-src
// predicate (true: zeros, the source unread) and a cache policy after the
// size or after a src-size. out[4t..4t+3] = s1 (ignore-src when t % 3 == 0),
// out[256 + 4t ..] = s2 (whole copy, with a policy), out[512 + 4t ..] = s3
// (src-size 4 with a policy: one int, then zeros).
extern "C" __global__ void cp_async_operands(const int* in, int* out) {
  __shared__ __align__(16) int s1[256], s2[256], s3[256];
  const int t = threadIdx.x;
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; cp.async.cg.shared.global [%0], [%1], 16, p; }" ::"r"(
                   smem_addr(&s1[t * 4])),
               "l"(gmem_addr(&in[t * 4])), "r"(t % 3 == 0 ? 1 : 0)
               : "memory");
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(smem_addr(&s2[t * 4])),
               "l"(gmem_addr(&in[t * 4])), "l"(policy)
               : "memory");
  asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], 16, 4, %2;" ::"r"(smem_addr(&s3[t * 4])),
               "l"(gmem_addr(&in[t * 4])), "l"(policy)
               : "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  for (int k = 0; k < 4; ++k) {
    out[4 * t + k] = s1[4 * t + k];
    out[256 + 4 * t + k] = s2[4 * t + k];
    out[512 + 4 * t + k] = s3[4 * t + k];
  }
}

// One m16n8k16 mma per warp: D = A (16x16 f16, row-major) * B (16x8 f16,
// column-major, i.e. B^T stored row-major) + C (16x8 f32, row-major).
// Fragments follow the PTX ISA's layout for this shape.
extern "C" __global__ void mma_m16n8k16(const __half* A, const __half* B, const float* C, float* D) {
  unsigned lane = threadIdx.x, g = lane >> 2, tg = lane & 3;
  auto pack = [](__half lo, __half hi) {
    return (unsigned)__half_as_ushort(lo) | (unsigned)__half_as_ushort(hi) << 16;
  };
  unsigned a[4], b[2];
  a[0] = pack(A[g * 16 + tg * 2], A[g * 16 + tg * 2 + 1]);
  a[1] = pack(A[(g + 8) * 16 + tg * 2], A[(g + 8) * 16 + tg * 2 + 1]);
  a[2] = pack(A[g * 16 + tg * 2 + 8], A[g * 16 + tg * 2 + 9]);
  a[3] = pack(A[(g + 8) * 16 + tg * 2 + 8], A[(g + 8) * 16 + tg * 2 + 9]);
  // B column n = g, rows k = 2tg, 2tg+1 (then +8); stored as B[n * 16 + k].
  b[0] = pack(B[g * 16 + tg * 2], B[g * 16 + tg * 2 + 1]);
  b[1] = pack(B[g * 16 + tg * 2 + 8], B[g * 16 + tg * 2 + 9]);
  float c[4] = {C[g * 8 + tg * 2], C[g * 8 + tg * 2 + 1], C[(g + 8) * 8 + tg * 2], C[(g + 8) * 8 + tg * 2 + 1]};
  float d[4];
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  D[g * 8 + tg * 2] = d[0];
  D[g * 8 + tg * 2 + 1] = d[1];
  D[(g + 8) * 8 + tg * 2] = d[2];
  D[(g + 8) * 8 + tg * 2 + 1] = d[3];
}

// Warp reductions, out[k * n + i]: add, min, max (unsigned), min, max
// (signed), and, or, xor; then the same add over the odd lanes only
// (even lanes write 0).
extern "C" __global__ void warp_reduce(const unsigned* in, unsigned* out) {
  const unsigned full = 0xffffffffu;
  int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  unsigned v = in[i];
  out[0 * n + i] = __reduce_add_sync(full, v);
  out[1 * n + i] = __reduce_min_sync(full, v);
  out[2 * n + i] = __reduce_max_sync(full, v);
  out[3 * n + i] = (unsigned)__reduce_min_sync(full, (int)v);
  out[4 * n + i] = (unsigned)__reduce_max_sync(full, (int)v);
  out[5 * n + i] = __reduce_and_sync(full, v);
  out[6 * n + i] = __reduce_or_sync(full, v);
  out[7 * n + i] = __reduce_xor_sync(full, v);
  unsigned odd = 0;
  if (threadIdx.x & 1) odd = __reduce_add_sync(0xaaaaaaaau, v);
  out[8 * n + i] = odd;
}

// min/max that return NaN when either input is NaN (.NaN), next to the
// plain forms that return the other input; f32, f16x2 and f64 where the
// ISA has them. out[k * n + i] as raw bits.
extern "C" __global__ void minmax_nan(const float* a, const float* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  out[0 * n + i] = __float_as_uint(r);
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  out[1 * n + i] = __float_as_uint(r);
  asm("min.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  out[2 * n + i] = __float_as_uint(r);
  asm("max.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  out[3 * n + i] = __float_as_uint(r);
  __half2 hx = __floats2half2_rn(x, y), hy = __floats2half2_rn(y, x);
  __half2 hn = __hmin2_nan(hx, hy), hm = __hmax2_nan(hx, hy);
  out[4 * n + i] = *reinterpret_cast<unsigned*>(&hn);
  out[5 * n + i] = *reinterpret_cast<unsigned*>(&hm);
}
