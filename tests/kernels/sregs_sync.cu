// Special registers (ids and dimensions in 3D, lane masks, clocks, timers)
// and block-level barriers: __syncthreads, its count/and/or forms, and
// barriers inside loops. kernels_sregs.cpp checks the results.

__device__ __forceinline__ unsigned lane_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}

// 16 words per thread, in the order below, at out[linear_global_id * 16].
extern "C" __global__ void sregs_3d(unsigned* out) {
  unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned* o = out + (bid * blockDim.x * blockDim.y * blockDim.z + tid) * 16;
  unsigned eq, lt, le, gt, ge, warp, nwarp, sm, nsm;
  asm volatile("mov.u32 %0, %%lanemask_eq;" : "=r"(eq));
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  asm volatile("mov.u32 %0, %%lanemask_le;" : "=r"(le));
  asm volatile("mov.u32 %0, %%lanemask_gt;" : "=r"(gt));
  asm volatile("mov.u32 %0, %%lanemask_ge;" : "=r"(ge));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
  asm volatile("mov.u32 %0, %%nwarpid;" : "=r"(nwarp));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(nsm));
  o[0] = threadIdx.x;
  o[1] = threadIdx.y;
  o[2] = threadIdx.z;
  o[3] = blockIdx.x;
  o[4] = blockIdx.y;
  o[5] = blockIdx.z;
  o[6] = blockDim.x | blockDim.y << 10 | blockDim.z << 20;
  o[7] = gridDim.x | gridDim.y << 10 | gridDim.z << 20;
  o[8] = lane_id();
  o[9] = eq;
  o[10] = lt;
  o[11] = le;
  o[12] = gt;
  o[13] = ge;
  o[14] = warp < nwarp;  // %warpid itself is not stable: only its bound is checked
  o[15] = sm < nsm;
}

// Clock readings around a short dependent loop, per thread: clock64 before
// and after, globaltimer before and after, and the 32-bit clock delta.
extern "C" __global__ void clocks(unsigned long long* out, int spins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long g0, g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  long long c0 = clock64();
  unsigned k0, k1;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(k0));
  unsigned v = i;
  for (int j = 0; j < spins; ++j) v = v * 1664525u + 1013904223u;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(k1));
  long long c1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  out[i * 6 + 0] = (unsigned long long)c0;
  out[i * 6 + 1] = (unsigned long long)c1;
  out[i * 6 + 2] = g0;
  out[i * 6 + 3] = g1;
  out[i * 6 + 4] = k1 - k0;
  out[i * 6 + 5] = v;
}

// Per block: __syncthreads_count/and/or over pred[i], written as 3 ints.
extern "C" __global__ void sync_votes(const int* pred, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int p = pred[i];
  int cnt = __syncthreads_count(p);
  int all = __syncthreads_and(p);
  int any = __syncthreads_or(p);
  if (threadIdx.x == 0) {
    out[blockIdx.x * 3 + 0] = cnt;
    out[blockIdx.x * 3 + 1] = all;
    out[blockIdx.x * 3 + 2] = any;
  }
}

// `iters` rounds of a neighbour exchange through double-buffered shared
// memory, one barrier a round; odd and even threads compute differently
// between barriers.
extern "C" __global__ void barrier_loop(const int* in, int* out, int iters) {
  __shared__ int buf[2][256];
  int t = threadIdx.x, n = blockDim.x, base = blockIdx.x * n;
  buf[0][t] = in[base + t];
  __syncthreads();
  int cur = 0;
  for (int r = 0; r < iters; ++r) {
    int left = buf[cur][(t + n - 1) % n], right = buf[cur][(t + 1) % n];
    int v = buf[cur][t];
    if (t & 1)
      v = v + left - (right >> 1);
    else
      v = (v ^ right) + r;
    buf[cur ^ 1][t] = v;
    __syncthreads();
    cur ^= 1;
  }
  out[base + t] = buf[cur][t];
}

// A barrier reached from two different code paths, all threads arriving.
extern "C" __global__ void barrier_paths(const int* in, int* out) {
  __shared__ int s[256];
  int t = threadIdx.x;
  int v = in[blockIdx.x * blockDim.x + t];
  if (v & 1) {
    s[t] = v * 3;
    __syncthreads();
    v = s[(t + 5) % blockDim.x];
  } else {
    s[t] = v - 9;
    __syncthreads();
    v = s[(t + 11) % blockDim.x];
  }
  out[blockIdx.x * blockDim.x + t] = v;
}
