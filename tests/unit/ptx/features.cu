#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cassert>
namespace cg = cooperative_groups;
extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int n) {
  __shared__ float As[16][16], Bs[16][16];
  int tx = threadIdx.x, ty = threadIdx.y, row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  float acc = 0;
  for (int k = 0; k < n; k += 16) {
    As[ty][tx] = A[row * n + k + tx]; Bs[ty][tx] = B[(k + ty) * n + col];
    __syncthreads();
    #pragma unroll
    for (int j = 0; j < 16; ++j) acc += As[ty][j] * Bs[j][tx];
    __syncthreads();
  }
  C[row * n + col] = acc;
}
extern "C" __global__ void atomics(int* i, unsigned* u, unsigned long long* ull, float* f, double* d, __half* h) {
  atomicAdd(i, 1); atomicSub(i + 1, 2); atomicExch(i + 2, 5); atomicMin(i + 3, -(int)threadIdx.x); atomicMax(i + 4, threadIdx.x);
  atomicInc(u, 10); atomicDec(u + 1, 10); atomicCAS(u + 2, 0, 7); atomicAnd(u + 3, ~1u); atomicOr(u + 4, 1u << threadIdx.x); atomicXor(u + 5, 3);
  atomicAdd(ull, 1ull); atomicCAS(ull + 1, 0ull, 9ull); atomicMax(ull + 2, (unsigned long long)threadIdx.x);
  atomicAdd(f, 1.5f); atomicAdd(d, 2.5); atomicAdd(h, __float2half(1.0f));
  __threadfence(); __threadfence_block(); __threadfence_system();
}
extern "C" __global__ void warp(int* out) {
  int l = threadIdx.x & 31;
  out[threadIdx.x] = __shfl_sync(0xffffffff, l, 3) + __shfl_up_sync(0xffffffff, l, 1, 16) + __shfl_xor_sync(0xffffffff, l, 5, 8) +
    __ballot_sync(0xffffffff, l & 1) + __any_sync(0xffffffff, l == 3) + __all_sync(0xffffffff, l < 40) + __match_any_sync(0xffffffff, l / 4) +
    __reduce_add_sync(0xffffffff, l) + __reduce_max_sync(0xffffffff, l) + __popc(__activemask()) + __syncthreads_count(l & 1) + __syncthreads_or(l == 2) + __syncthreads_and(1);
  double dv = __shfl_down_sync(0xffffffff, (double)l, 2); out[64 + threadIdx.x] = (int)dv;
  if (l < 10) out[128 + threadIdx.x] = __activemask();
  auto g = cg::this_thread_block(); auto t = cg::tiled_partition<8>(g); out[192 + threadIdx.x] = t.thread_rank() + cg::reduce(t, l, cg::plus<int>()); g.sync();
}
extern "C" __global__ void halfs(__half2* a, __nv_bfloat162* b, float* o) {
  int i = threadIdx.x;
  a[i] = __hfma2(a[i], a[i], a[i]); b[i] = __hmul2(b[i], b[i]);
  o[i] = __half2float(__hadd(__low2half(a[i]), __high2half(a[i]))) + __bfloat162float(b[i].x) + __expf(o[i]) + __sinf(o[i]) + rsqrtf(o[i]) + __fdividef(o[i], 3.f) + __frcp_rz(o[i]) + __fadd_ru(o[i], 1e-8f) + sqrtf(o[i]) + __float2int_rd(o[i]) + __uint2float_rz(i * 12345679u);
}
extern "C" __global__ void ints(long long* o, int a, unsigned b, long long c) {
  int i = threadIdx.x;
  o[i] = __mulhi(a, i) + __umulhi(b, i) + __mul64hi(c, i) + __clz(a + i) + __ffs(b + i) + __brev(b) + __byte_perm(a, b, 0x5140) + __funnelshift_l(a, b, i) + __dp4a(a, (int)b, 3) + __sad(a, i, 1) + (a / (i - 3)) + (c % (i + 1)) + __popcll(c) + max(a, i) + abs(a) + __usad(b, i, 2) + __hadd(a, i) + __rhadd(a, i);
}
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
extern "C" __global__ void rec(int* o) { o[threadIdx.x] = fib(threadIdx.x); assert(threadIdx.x < 1000); }
extern "C" __global__ void dyn(float* o) { extern __shared__ float s[]; s[threadIdx.x] = threadIdx.x; __syncthreads(); o[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x] + (float)clock64() * 0 ; }
