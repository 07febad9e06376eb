// Warp collectives: shuffles of 32- and 64-bit values with sub-warp widths,
// votes, __activemask in divergent code, match, and __syncwarp. Blocks are
// whole warps unless a kernel says otherwise. kernels_warp.cpp models each
// shuffle with the PTX ISA's shfl.sync lane arithmetic.

__device__ __forceinline__ unsigned lane_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}

// Shuffle kinds idx/up/down/xor (in that order) of four value types: int,
// float, double, long long. out[(type * 4 + kind) * n + i] holds the result
// bits. idx reads lane (lane * 7 + src_add) % 32, taken modulo width.
extern "C" __global__ void shuffles(const int* in, unsigned long long* out, int width, int delta, int src_add) {
  const unsigned full = 0xffffffffu;
  int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  int v = in[i];
  int src = (int)((lane_id() * 7 + src_add) % 32);
  float fv = v * 0.5f;
  double dv = v * 0.25 + 1e10;
  long long lv = ((long long)v << 32) ^ (long long)i * 0x10001;
  out[0 * n + i] = (unsigned)__shfl_sync(full, v, src, width);
  out[1 * n + i] = (unsigned)__shfl_up_sync(full, v, delta, width);
  out[2 * n + i] = (unsigned)__shfl_down_sync(full, v, delta, width);
  out[3 * n + i] = (unsigned)__shfl_xor_sync(full, v, delta, width);
  out[4 * n + i] = __float_as_uint(__shfl_sync(full, fv, src, width));
  out[5 * n + i] = __float_as_uint(__shfl_up_sync(full, fv, delta, width));
  out[6 * n + i] = __float_as_uint(__shfl_down_sync(full, fv, delta, width));
  out[7 * n + i] = __float_as_uint(__shfl_xor_sync(full, fv, delta, width));
  out[8 * n + i] = __double_as_longlong(__shfl_sync(full, dv, src, width));
  out[9 * n + i] = __double_as_longlong(__shfl_up_sync(full, dv, delta, width));
  out[10 * n + i] = __double_as_longlong(__shfl_down_sync(full, dv, delta, width));
  out[11 * n + i] = __double_as_longlong(__shfl_xor_sync(full, dv, delta, width));
  out[12 * n + i] = __shfl_sync(full, lv, src, width);
  out[13 * n + i] = __shfl_up_sync(full, lv, delta, width);
  out[14 * n + i] = __shfl_down_sync(full, lv, delta, width);
  out[15 * n + i] = __shfl_xor_sync(full, lv, delta, width);
}

// Twelve words per thread at out[k * n + i]:
//  0 ballot(v & 1)   1 any(v == 7)   2 all(v >= 0)
//  3 __activemask() inside `if (v & 2)`, complemented in the else branch
//  4 ballot of (v & 4) over each half-warp separately (half-warp masks)
//  5 popc(ballot(v & 8))
//  6 after __syncwarp: the next lane's value through shared memory
//  7 odd lanes only, __syncwarp(0xaaaaaaaa): lane+2's value; even lanes 0
//  8 match_any(v % 5)   9 match_all(v >> 12) mask   10 its predicate
// 11 match_any(64-bit (v % 3) << 40)
extern "C" __global__ void votes(const int* in, unsigned* out) {
  const unsigned full = 0xffffffffu;
  __shared__ int sh[1024], sh2[1024];
  int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  unsigned lane = lane_id();
  int wbase = threadIdx.x & ~31;
  int v = in[i];
  out[0 * n + i] = __ballot_sync(full, v & 1);
  out[1 * n + i] = __any_sync(full, v == 7);
  out[2 * n + i] = __all_sync(full, v >= 0);
  unsigned am;
  if (v & 2)
    am = __activemask();
  else
    am = ~__activemask();
  out[3 * n + i] = am;
  unsigned half;
  if (lane < 16)
    half = __ballot_sync(0x0000ffffu, v & 4);
  else
    half = __ballot_sync(0xffff0000u, v & 4);
  out[4 * n + i] = half;
  out[5 * n + i] = __popc(__ballot_sync(full, v & 8));
  sh[threadIdx.x] = v;
  __syncwarp();
  out[6 * n + i] = sh[wbase + ((lane + 1) & 31)];
  unsigned odd = 0;
  if (lane & 1) {
    sh2[threadIdx.x] = v * 3;
    __syncwarp(0xaaaaaaaau);
    odd = sh2[wbase + ((lane + 2) & 31)];
  }
  out[7 * n + i] = odd;
  out[8 * n + i] = __match_any_sync(full, v % 5);
  int pred = 0;
  out[9 * n + i] = __match_all_sync(full, v >> 12, &pred);
  out[10 * n + i] = pred;
  out[11 * n + i] = __match_any_sync(full, (long long)(v % 3) << 40);
}

// Launched with 48 threads: the second warp is half populated.
extern "C" __global__ void activemask_partial(unsigned* out) {
  out[threadIdx.x] = __activemask();
  out[48 + threadIdx.x] = __ballot_sync(__activemask(), threadIdx.x & 1);
}

// A butterfly reduction and an inclusive scan with shuffles, per warp.
extern "C" __global__ void warp_reduce_scan(const int* in, int* sum, int* scan) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i], s = v;
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  sum[i] = s;
  int x = v;
  for (int o = 1; o < 32; o <<= 1) {
    int y = __shfl_up_sync(0xffffffffu, x, o);
    if ((int)lane_id() >= o) x += y;
  }
  scan[i] = x;
}

// A NaN made by arithmetic in one lane (-inf * 0), moved to every lane by
// a shuffle, and summed down the warp by shuffles: what the lanes store is
// the GPU's canonical NaN, whichever rows hold the values between shuffles.
extern "C" __global__ void shfl_of_a_computed_nan(const float* in, unsigned* out) {
  float v = in[threadIdx.x] * 0.0f;
  const float moved = __shfl_sync(0xffffffffu, v, 7);
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  out[threadIdx.x] = __float_as_uint(v);
  out[32 + threadIdx.x] = __float_as_uint(moved);
}
