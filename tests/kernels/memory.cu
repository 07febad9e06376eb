// State spaces: kernel parameters of many types and sizes, global loads and
// stores of every width, static and dynamic shared memory, local arrays
// indexed at run time, __constant__ data, __device__ and __managed__
// variables, and generic pointers into each space. kernels_memory.cpp
// holds the host side; the layouts below are part of its contract.

// Scalars in an order that forces padding between parameters.
extern "C" __global__ void params_scalars(signed char c, double d, short s, long long ll, unsigned char uc, float f,
                                          unsigned short us, unsigned long long ull, int i, unsigned u,
                                          long long* out) {
  out[0] = c;
  out[1] = __double_as_longlong(d);
  out[2] = s;
  out[3] = ll;
  out[4] = uc;
  out[5] = __float_as_int(f);
  out[6] = us;
  out[7] = (long long)ull;
  out[8] = i;
  out[9] = u;
}

struct Small {
  char c;
  int i;
  double d;
  short s[3];
};
struct alignas(16) Vec {
  float4 v;
  int tail;
};
struct Big {
  int words[256];  // 1 KiB by value
};

extern "C" __global__ void params_structs(Small sm, char tag, Vec vec, Big big, int* out) {
  int t = threadIdx.x;  // one block of 256
  if (t == 0) {
    out[0] = sm.c;
    out[1] = sm.i;
    out[2] = (int)(sm.d * 4.0);
    out[3] = sm.s[0] + sm.s[1] * 3 + sm.s[2] * 5;
    out[4] = tag;
    out[5] = (int)(vec.v.x + vec.v.y * 10 + vec.v.z * 100 + vec.v.w * 1000);
    out[6] = vec.tail;
  }
  out[8 + t] = big.words[t] * 2 + big.words[255 - t];
}

// The launch test passes these through the `extra` buffer form; the offsets
// follow the natural alignment of each parameter: 0, 8, 16, 20, 24.
extern "C" __global__ void params_packed(char c, double d, int i, short s, int* out) {
  out[0] = c;
  out[1] = (int)d;
  out[2] = i;
  out[3] = s;
}

// Global memory through every access width, vector types, __ldg and
// volatile accesses.
extern "C" __global__ void global_widths(const unsigned char* b8, const unsigned short* b16, const unsigned* b32,
                                         const unsigned long long* b64, const float4* v4, const int2* v2,
                                         const double2* d2, unsigned char* o8, unsigned short* o16, unsigned* o32,
                                         unsigned long long* o64, float4* ov4, int2* ov2, double2* od2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  o8[i] = (unsigned char)(b8[i] * 3 + 1);
  o16[i] = (unsigned short)(b16[i] ^ 0xa5a5);
  o32[i] = __ldg(&b32[i]) + 0x01010101u;
  o64[i] = b64[i] * 0x100000001ull;
  float4 f = v4[i];
  ov4[i] = make_float4(f.w, f.z, f.y, f.x);
  int2 p = __ldg(&v2[i]);
  ov2[i] = make_int2(p.x + p.y, p.x - p.y);
  double2 q = d2[i];
  od2[i] = make_double2(q.y * 2.0, q.x * 0.5);
  volatile unsigned* vo = o32;
  vo[i] = vo[i] + 1;
}

// Reverses each block's 256 elements through a static shared array.
extern "C" __global__ void shared_static(const int* in, int* out) {
  __shared__ int tile[256];
  __shared__ double dtile[256];
  int t = threadIdx.x, base = blockIdx.x * 256;
  tile[t] = in[base + t];
  dtile[t] = in[base + t] * 0.5;
  __syncthreads();
  out[base + t] = tile[255 - t] + (int)(dtile[(t + 1) & 255] * 2.0);
}

// Dynamic shared memory sized at launch: n ints, then n doubles (n is the
// block size, so the launch passes n * 12 bytes).
extern "C" __global__ void shared_dynamic(const int* in, int* out) {
  extern __shared__ int dyn[];
  int n = blockDim.x, t = threadIdx.x, base = blockIdx.x * n;
  double* dd = reinterpret_cast<double*>(dyn + n);  // n is even, so 8-aligned
  dyn[t] = in[base + t];
  dd[t] = in[base + t] * 3.0;
  __syncthreads();
  out[base + t] = dyn[n - 1 - t] + (int)dd[(t + 3) % n];
}

// A local array the compiler cannot keep in registers.
extern "C" __global__ void local_array(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = in[i];
  int arr[32];
  for (int j = 0; j < 32; ++j) arr[j] = x * j + (j ^ i);
  for (int j = 0; j < 8; ++j) arr[(x + j * 5) & 31] += j;
  long long big[16];
  for (int j = 0; j < 16; ++j) big[j] = (long long)arr[(j * 7 + x) & 31] << (j & 3);
  out[i] = arr[x & 31] + arr[(i * 7) & 31] + (int)big[(x >> 5) & 15];
}

__constant__ int c_lut[256];
__constant__ float c_coef[4] = {0.5f, 1.5f, -2.0f, 4.0f};

extern "C" __global__ void const_data(const int* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = in[i];
  out[i] = c_lut[x & 255] * c_coef[x & 3] + c_coef[(x >> 2) & 3];
}

__device__ int d_scale = 3;
__device__ float d_table[64];
__device__ int d_out[256];
__device__ unsigned long long d_counter;

// Reads __device__ variables the host set, writes others the host reads.
extern "C" __global__ void device_globals() {
  int t = threadIdx.x;  // one block of 256
  d_out[t] = (int)(d_table[t & 63] * d_scale) + t;
  atomicAdd(&d_counter, (unsigned long long)t);
}

__managed__ int m_value;
__managed__ int m_array[64];

extern "C" __global__ void managed_vars() {
  int t = threadIdx.x;  // one block of 64
  m_array[t] = m_array[t] * 2 + t;
  if (t == 0) m_value += 1000;
}

// One function reached with generic pointers into global, shared and local
// memory; isspacep reports each space.
__device__ __noinline__ int sum_through(const int* p, int len) {
  int s = 0;
  for (int j = 0; j < len; ++j) s += p[j] * (j + 1);
  return s;
}

extern "C" __global__ void generic_ptrs(const int* in, int* out) {
  __shared__ int sh[32];
  int t = threadIdx.x;  // one block of 32; `in` holds 64 ints
  int loc[8];
  for (int j = 0; j < 8; ++j) loc[j] = in[(t + j) & 31] - j;
  sh[t] = in[t] * 2;
  __syncthreads();
  const int* ps[3] = {in + t, sh + (t & 7), loc};
  out[t * 4 + 0] = sum_through(ps[0], 8 - (t & 7));
  out[t * 4 + 1] = sum_through(ps[1], 8);
  out[t * 4 + 2] = sum_through(ps[t % 3], 4);
  out[t * 4 + 3] = __isGlobal(ps[0]) | __isShared(ps[1]) << 1 | __isLocal(ps[2]) << 2 | __isShared(ps[0]) << 3 |
                   __isGlobal(ps[1]) << 4 | __isConstant(ps[0]) << 5;
}
