// Control flow: predicates and selects, divergent branches, loops,
// recursion, non-inlined calls with many parameters, and indirect calls.
// kernels_control.cpp mirrors each kernel on the host.

extern "C" __global__ void predicates(const int* a, const float* f, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i];
  unsigned u = (unsigned)x;
  float y = f[i];
  int k = 0;
  out[k++ * n + i] = x > 0 ? 7 : -3;
  out[k++ * n + i] = (x < 100 && x > -100) ? x * 2 : x / 2;
  out[k++ * n + i] = (u > 1000u) + 2 * (x > 1000) + 4 * (u <= 5u) + 8 * (x <= 5);
  out[k++ * n + i] = ((x & 1) || (x & 4)) ? 1 : ((x & 2) ? 2 : 3);
  out[k++ * n + i] = (y < 1.0f) + 2 * (y >= 1.0f) + 4 * !(y < 1.0f) + 8 * (y != y) + 16 * (y == 0.0f);
  out[k++ * n + i] = (x ^ (x >> 31)) - (x >> 31);  // branch-free abs
  bool p = x & 8, q = x & 16;
  out[k++ * n + i] = (p ^ q) + 2 * (p && !q) + 4 * (p == q);
}

__device__ __noinline__ int collatz_steps(unsigned v) {
  int s = 0;
  while (v != 1 && s < 1000) {
    v = (v & 1) ? 3 * v + 1 : v / 2;
    ++s;
  }
  return s;
}

// Threads of one warp take different paths: parity branches, a switch, an
// early exit, a data-dependent loop with break/continue.
extern "C" __global__ void divergent(const int* a, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i];
  int r = 0;
  if (threadIdx.x & 1) {
    if (x % 3 == 0)
      r = x * 3;
    else
      r = -x;
  } else {
    for (int j = 0; j < (x & 15); ++j) r += j * x;
  }
  switch (x & 7) {
    case 0:
      r += 100;
      break;
    case 1:
      r -= 7;
      break;
    case 2:
    case 3:
      r ^= 0x55;
      break;
    case 5:
      r *= 3;
      break;
    case 6:
      r = r << 2;
      break;
    default:
      r += 1;
      break;
  }
  int acc = 0;
  for (int j = 0; j < 64; ++j) {
    if (((x >> (j & 7)) & 1) == 0) continue;
    acc += j;
    if (acc > (x & 255)) break;
  }
  out[i * 3 + 0] = r;
  out[i * 3 + 1] = acc;
  if ((x & 3) == 3) {
    out[i * 3 + 2] = -1;
    return;
  }
  out[i * 3 + 2] = collatz_steps((unsigned)(x & 0xffff) + 1);
}

__device__ __noinline__ int fib(int v) { return v < 2 ? v : fib(v - 1) + fib(v - 2); }

__device__ __noinline__ unsigned long long ackermann_like(unsigned m, unsigned long long v) {
  if (m == 0) return v + 1;
  if (v == 0) return ackermann_like(m - 1, 1);
  return ackermann_like(m - 1, ackermann_like(m, v - 1));
}

extern "C" __global__ void recursion(const int* a, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i];
  out[2 * i] = fib(x % 16);
  out[2 * i + 1] = (long long)ackermann_like((unsigned)(x % 3), (unsigned long long)(x % 4));
}

struct Pair {
  int a;
  double b;
};

__device__ __noinline__ double many_params(signed char c, short s, int i, long long l, float f, double d, const int* p,
                                           Pair pr, unsigned char uc, unsigned short us) {
  return c + 2.0 * s + 3.0 * i + 4.0 * (double)l + 5.0 * f + 6.0 * d + 7.0 * p[1] + 8.0 * pr.a + 9.0 * pr.b +
         10.0 * uc + 11.0 * us;
}

__device__ __noinline__ Pair make_pair(int v) {
  Pair r;
  r.a = v * 3;
  r.b = v * 0.5;
  return r;
}

extern "C" __global__ void calls(const int* a, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i];
  Pair pr = make_pair(x);
  out[2 * i] = many_params((signed char)x, (short)(x * 3), x * 5, (long long)x * 100000, x * 0.25f, x * 0.125, a, pr,
                           (unsigned char)(x + 200), (unsigned short)(x + 60000));
  out[2 * i + 1] = pr.a + pr.b;
}

__device__ __noinline__ int op_add(int x, int y) { return x + y; }
__device__ __noinline__ int op_mul(int x, int y) { return x * y; }
__device__ __noinline__ int op_sub(int x, int y) { return x - y; }
__device__ int (*const op_table[3])(int, int) = {op_add, op_mul, op_sub};

extern "C" __global__ void indirect_calls(const int* a, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i];
  int (*f)(int, int) = op_table[(unsigned)x % 3];
  out[i] = f(x, i);
}
