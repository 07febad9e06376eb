// Kernels for the module, function-attribute and launch API tests
// (kernels_module.cpp, kernels_launch.cpp). The module holds exactly the
// ten kernels below and the globals g_int, g_arr and g_const; the tests
// count and name them.

__device__ int g_int = 17;
__device__ double g_arr[10];
__constant__ char g_const[100];

// 4096 bytes of static shared memory.
extern "C" __global__ void static_smem(float* out) {
  __shared__ float buf[1024];
  for (int j = threadIdx.x; j < 1024; j += blockDim.x) buf[j] = j * 0.5f;
  __syncthreads();
  out[threadIdx.x] = buf[1023 - threadIdx.x];
}

extern "C" __global__ void __launch_bounds__(128) bounded(int* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x + g_int;
}

// Writes n ints of dynamic shared memory, then copies them out reversed.
extern "C" __global__ void dyn_smem(int* out, int n) {
  extern __shared__ int dyn[];
  for (int j = threadIdx.x; j < n; j += blockDim.x) dyn[j] = j * 3 + 1;
  __syncthreads();
  for (int j = threadIdx.x; j < n; j += blockDim.x) out[j] = dyn[n - 1 - j];
}

struct Mixed {
  char c;
  double d;
  int i;
};

// Parameter offsets 0, 8, 16, 24, 48; sizes 1, 8, 8, 24, 2.
extern "C" __global__ void param_layout(char c, double d, int* p, Mixed m, short s) {
  p[0] = c + (int)d + m.c + (int)m.d + m.i + s;
}

// Spins until `ns` nanoseconds of globaltimer have passed, then stores v.
extern "C" __global__ void delayed_store(int* p, int v, unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
  *p = v;
}

extern "C" __global__ void scale_copy(const int* src, int* dst, int k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i] * k;
}

extern "C" __global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

extern "C" __global__ void no_params() { g_arr[threadIdx.x % 10] = threadIdx.x % 10; }

// A local array written and read at run-time indices, so it must live in
// local memory (LOCAL_SIZE_BYTES is nonzero).
extern "C" __global__ void uses_local(int* out, int idx) {
  int arr[64];
  for (int j = 0; j < 64; ++j) arr[j] = out[j];
  arr[idx & 63] += 5;
  arr[(idx >> 6) & 63] *= 3;
  out[0] = arr[(idx >> 12) & 63];
}

extern "C" __global__ void uses_const(int* out) { out[threadIdx.x] = g_const[threadIdx.x % 100]; }
