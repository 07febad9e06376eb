// Kernels for the race checker and memcheck (tests/check, `cucpu check`):
// plain global stores and loads whose ranges the checker records, one that
// writes one element past its buffer, and one that only adds atomically.
extern "C" __global__ void fill(int* p, int value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

extern "C" __global__ void copy_ints(int* dst, const int* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

// Thread n writes p[n]: one element past a buffer of n.
extern "C" __global__ void write_past_end(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) p[i] = i;
}

extern "C" __global__ void count(int* counter) { atomicAdd(counter, 1); }

// Racecheck: each thread writes its element of shared memory and reads
// the element of the thread 32 ahead (another warp), with no barrier
// between (shared_race) or after one (shared_synced). Blocks of 64.
extern "C" __global__ void shared_race(const int* in, int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = in[threadIdx.x];
  out[threadIdx.x] = s[(threadIdx.x + 32) % 64];
}

extern "C" __global__ void shared_synced(const int* in, int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 32) % 64];
}

// A tree reduction in shared memory, a barrier after each step: race-free.
extern "C" __global__ void block_sum(const int* in, int* out) {
  __shared__ int s[128];
  s[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
  __syncthreads();
  for (int k = 64; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

// Synccheck: the block's two warps wait at two different __syncthreads()
// (divergent code; bar.sync must be reached at one instruction). Blocks of 64.
extern "C" __global__ void divergent_barrier(const int* in, int* out) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  if (t < 32) {
    s[t] = in[t];
    __syncthreads();
    out[t] = s[63 - t];
  } else {
    s[t] = in[t] * 3;
    __syncthreads();
    out[t] = s[63 - t] + 1;
  }
}

// Memcheck: a 4-byte load from p + off (misaligned for an odd off).
extern "C" __global__ void load_misaligned(const char* p, int off, int* out) {
  *out = *reinterpret_cast<const int*>(p + off);
}
