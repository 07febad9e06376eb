// Atomics on global and shared memory. Every thread applies the same kind
// of operation to one slot, so each slot's final value does not depend on
// the order (float and double adds use exactly representable sums).
// kernels_atomics.cpp replays the operations on the host; the slot numbers
// and per-thread operands below are its contract.
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned and_mask(int i) { return i % 3 == 0 ? ~(1u << ((i * 13) % 32)) : ~0u; }
__device__ __forceinline__ unsigned or_bits(int i) { return i % 4 == 0 ? 1u << ((i * 5) % 32) : 0u; }
__device__ __forceinline__ int minmax_val(int i) { return (i * 7919) % 1000 - 500; }
__device__ __forceinline__ unsigned uminmax_val(int i) { return (unsigned)i * 2654435761u; }
__device__ __forceinline__ unsigned long long u64_val(int i) { return (unsigned long long)i * 0x9e3779b97f4a7c15ull; }

// gi: 9 ints; gu: 6 unsigned; g64: 7 u64 (slots 5, 6 read as signed);
// gf: 1 float; gd: 1 double; gh: 4 halves (a __half, padding, a __half2). old_add, old_exch,
// old_inc: one entry per thread.
extern "C" __global__ void atomics_global(int* gi, unsigned* gu, unsigned long long* g64, float* gf, double* gd,
                                          __half* gh, int* old_add, int* old_exch, unsigned* old_inc) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  old_add[i] = atomicAdd(&gi[0], 1);
  atomicSub(&gi[1], i);
  atomicMin(&gi[2], minmax_val(i));
  atomicMax(&gi[3], minmax_val(i));
  atomicAnd(&gi[4], (int)and_mask(i));
  atomicOr(&gi[5], (int)or_bits(i));
  atomicXor(&gi[6], (int)(i * 0x9e3779b9u));
  old_exch[i] = atomicExch(&gi[7], i);
  int seen = gi[8], prev;
  while ((prev = atomicCAS(&gi[8], seen, seen + i)) != seen) seen = prev;

  old_inc[i] = atomicInc(&gu[0], 17u);
  atomicDec(&gu[1], 9u);
  atomicMin(&gu[2], uminmax_val(i));
  atomicMax(&gu[3], uminmax_val(i));
  atomicAdd_block(&gu[4], 1u);
  atomicAdd_system(&gu[5], 2u);

  atomicAdd(&g64[0], ((unsigned long long)i << 32) | 1ull);
  unsigned long long s64 = g64[1], p64;
  while ((p64 = atomicCAS(&g64[1], s64, s64 ^ u64_val(i))) != s64) s64 = p64;
  atomicMin(&g64[2], u64_val(i));
  atomicMax(&g64[3], u64_val(i));
  atomicOr(&g64[4], 1ull << (i % 64));
  atomicMin(reinterpret_cast<long long*>(&g64[5]), (long long)u64_val(i));
  atomicMax(reinterpret_cast<long long*>(&g64[6]), (long long)u64_val(i));

  atomicAdd(&gf[0], (i % 8) * 0.25f);
  atomicAdd(&gd[0], i * 0.5);
  atomicAdd(&gh[0], __float2half(1.0f));
  atomicAdd(reinterpret_cast<__half2*>(gh + 2), __floats2half2_rn(1.5f, 0.5f));
}

// The same operations on shared memory, one set of slots per block; each
// block writes its 16 results to out[blockIdx.x * 16 ...] and the old values
// of its shared add to old_add.
extern "C" __global__ void atomics_shared(unsigned long long* out, int* old_add) {
  __shared__ int si[8];
  __shared__ unsigned su[3];
  __shared__ unsigned long long s64[3];
  __shared__ float sf;
  __shared__ double sd;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t == 0) {
    si[0] = 0;
    si[1] = 1000000;
    si[2] = 1 << 30;
    si[3] = -(1 << 30);
    si[4] = -1;
    si[5] = 0;
    si[6] = 0x12345678;
    si[7] = 0;
    su[0] = 0;
    su[1] = 5;
    su[2] = 0;
    s64[0] = 0;
    s64[1] = 0;
    s64[2] = ~0ull;
    sf = 0.0f;
    sd = 0.0;
  }
  __syncthreads();
  old_add[i] = atomicAdd(&si[0], 1);
  atomicSub(&si[1], t);
  atomicMin(&si[2], minmax_val(i));
  atomicMax(&si[3], minmax_val(i));
  atomicAnd(&si[4], (int)and_mask(i));
  atomicOr(&si[5], (int)or_bits(i));
  atomicXor(&si[6], (int)(i * 0x9e3779b9u));
  int seen = si[7], prev;
  while ((prev = atomicCAS(&si[7], seen, seen + t)) != seen) seen = prev;
  atomicInc(&su[0], 17u);
  atomicDec(&su[1], 9u);
  atomicMax(&su[2], uminmax_val(i));
  atomicAdd(&s64[0], (unsigned long long)t << 33);
  unsigned long long c = s64[1], p;
  while ((p = atomicCAS(&s64[1], c, c + u64_val(i))) != c) c = p;
  atomicMin(&s64[2], u64_val(i));
  atomicAdd(&sf, (t % 4) * 0.5f);
  atomicAdd(&sd, t * 0.25);
  __syncthreads();
  if (t == 0) {
    unsigned long long* o = out + blockIdx.x * 16;
    for (int j = 0; j < 8; ++j) o[j] = (unsigned)si[j];
    for (int j = 0; j < 3; ++j) o[8 + j] = su[j];
    for (int j = 0; j < 3; ++j) o[11 + j] = s64[j];
    o[14] = __float_as_uint(sf);
    o[15] = __double_as_longlong(sd);
  }
}

// A 256-bin histogram of bytes: per-block shared bins merged into global.
extern "C" __global__ void histogram(const unsigned char* data, unsigned* bins, int n) {
  __shared__ unsigned local[256];
  local[threadIdx.x] = 0;  // blocks of 256
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  if (local[threadIdx.x]) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

// Sums `in` across the grid: each block publishes a partial sum, fences, and
// takes a ticket; the block that draws the last ticket adds the partials.
// The ticket counter wraps back to 0, so the kernel can run again.
__device__ unsigned fence_tickets;

extern "C" __global__ void fence_reduce(const int* in, volatile int* partial, int* result, unsigned* last_block) {
  __shared__ int s[256];
  __shared__ bool am_last;
  int t = threadIdx.x;  // blocks of 256
  s[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    unsigned ticket = atomicInc(&fence_tickets, gridDim.x - 1);
    am_last = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (am_last && t == 0) {
    int total = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b];
    *result = total;
    *last_block = blockIdx.x;
  }
}

// Block sums reduced into a few global targets by thread 0 of each block:
// atomics whose results are unused (nvcc emits `red`), after a plain store
// of each element. Blocks of 128.
extern "C" __global__ void grid_reductions(const int* __restrict__ in, int* doubled, float* fsum, unsigned* usum,
                                           unsigned long long* umax64, int* smin, unsigned* bits, double* dsum) {
  __shared__ int s[128];
  const int t = threadIdx.x, i = blockIdx.x * 128 + t;
  doubled[i] = 2 * in[i];
  s[t] = in[i];
  __syncthreads();
  for (int w = 64; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) {
    atomicAdd(fsum, (float)s[0]);
    atomicAdd(usum, (unsigned)s[0]);
    atomicMax(umax64, (unsigned long long)blockIdx.x * 1000 + (unsigned)(s[0] & 255));
    atomicMin(smin, s[0] - (int)blockIdx.x);
    atomicOr(bits, 1u << (blockIdx.x % 32));
    atomicAdd(dsum, (double)s[0] * 0.5);
  }
}

// Thread 0 of each block adds 1 to the counter (a `red`), then reads it
// with an atomic that returns the old value: that value counts its own add.
extern "C" __global__ void reduce_then_read(unsigned* counter, unsigned* min_seen) {
  if (threadIdx.x == 0) {
    atomicAdd(counter, 1u);
    const unsigned seen = atomicAdd(counter, 1u);
    atomicMin(min_seen, seen);
  }
}

// A plain store after a reduction to the same word, in one thread: the
// store comes last in the thread's order, so the word ends as the store.
extern "C" __global__ void reduce_then_store(unsigned* word) {
  if (threadIdx.x == 0) {
    atomicAdd(word, 5u);
    *word = 7u;
  }
}
