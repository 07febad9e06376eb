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
