// Built with -rdc=true (regen.sh), as CMake projects that ask for separable
// compilation build it. Separate compilation puts every __shared__ variable
// at module scope, before or after the __device__ and __constant__ data; a
// kernel's shared arena must hold what that kernel reaches and nothing else,
// and every variable must be found wherever it was declared.

// File-scope shared memory declared before the module's data.
__shared__ int block_counter;
__device__ int dev_table[4] = {3, 5, 7, 11};
__constant__ int const_table[4] = {100, 200, 300, 400};

__device__ __noinline__ void count_in(int* counter) { atomicAdd(counter, 1); }

// out[i] = threads counted in shared * 10000 + dev_table[i % 4] + const_table[i / 4 % 4]
extern "C" __global__ void tables(int* out) {
  if (threadIdx.x == 0) block_counter = 0;
  __syncthreads();
  count_in(&block_counter);
  __syncthreads();
  const int i = threadIdx.x;
  out[blockIdx.x * blockDim.x + i] = block_counter * 10000 + dev_table[i & 3] + const_table[(i >> 2) & 3];
}

// Three kernels of 20 KiB of shared memory each: 60 KiB in all, more than
// one kernel may have without opting in. out[t] = (t * 37 % 5120) * K.
template <int K>
__device__ __forceinline__ void fill_and_read(int* out) {
  __shared__ int arena[5120];
  for (int i = threadIdx.x; i < 5120; i += blockDim.x) arena[i] = i * K;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = arena[threadIdx.x * 37 % 5120];
}
extern "C" __global__ void arena_a(int* out) { fill_and_read<1>(out); }
extern "C" __global__ void arena_b(int* out) { fill_and_read<2>(out); }
extern "C" __global__ void arena_c(int* out) { fill_and_read<3>(out); }

// sinf, cosf and tanf of x[i] (libm's argument reduction reads a
// __constant__ table for large arguments): out[3i], out[3i+1], out[3i+2].
extern "C" __global__ void trig(const float* x, float* out, int n) {
  __shared__ float staged[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i >= n) return;
  const float v = staged[threadIdx.x];
  out[3 * i] = sinf(v);
  out[3 * i + 1] = cosf(v);
  out[3 * i + 2] = tanf(v);
}
