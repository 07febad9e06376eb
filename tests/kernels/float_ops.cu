// Single and double precision: the IEEE-exact operations in every rounding
// mode, min/max with NaN, exact library functions, fast-math approximations
// and the float<->integer conversions. Op k of element i goes to
// out[k * n + i]; kernels_float.cpp holds the host references in order.

extern "C" __global__ void f32_round(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i];
  int k = 0;
  out[k++ * n + i] = __fadd_rn(x, y);
  out[k++ * n + i] = __fadd_rz(x, y);
  out[k++ * n + i] = __fadd_ru(x, y);
  out[k++ * n + i] = __fadd_rd(x, y);
  out[k++ * n + i] = __fsub_rn(x, y);
  out[k++ * n + i] = __fsub_rz(x, y);
  out[k++ * n + i] = __fsub_ru(x, y);
  out[k++ * n + i] = __fsub_rd(x, y);
  out[k++ * n + i] = __fmul_rn(x, y);
  out[k++ * n + i] = __fmul_rz(x, y);
  out[k++ * n + i] = __fmul_ru(x, y);
  out[k++ * n + i] = __fmul_rd(x, y);
  out[k++ * n + i] = __fmaf_rn(x, y, z);
  out[k++ * n + i] = __fmaf_rz(x, y, z);
  out[k++ * n + i] = __fmaf_ru(x, y, z);
  out[k++ * n + i] = __fmaf_rd(x, y, z);
  out[k++ * n + i] = __fdiv_rn(x, y);
  out[k++ * n + i] = __fdiv_rz(x, y);
  out[k++ * n + i] = __fdiv_ru(x, y);
  out[k++ * n + i] = __fdiv_rd(x, y);
  out[k++ * n + i] = __fsqrt_rn(x);
  out[k++ * n + i] = __fsqrt_rz(x);
  out[k++ * n + i] = __fsqrt_ru(x);
  out[k++ * n + i] = __fsqrt_rd(x);
  out[k++ * n + i] = __frcp_rn(x);
  out[k++ * n + i] = __frcp_rz(x);
  out[k++ * n + i] = __frcp_ru(x);
  out[k++ * n + i] = __frcp_rd(x);
  out[k++ * n + i] = x / y;  // IEEE division (-prec-div=true)
  out[k++ * n + i] = sqrtf(x);
  out[k++ * n + i] = fmaf(x, y, z);
  out[k++ * n + i] = -x;
  out[k++ * n + i] = fabsf(x);
}

extern "C" __global__ void f64_round(const double* a, const double* b, const double* c, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i], z = c[i];
  int k = 0;
  out[k++ * n + i] = __dadd_rn(x, y);
  out[k++ * n + i] = __dadd_rz(x, y);
  out[k++ * n + i] = __dadd_ru(x, y);
  out[k++ * n + i] = __dadd_rd(x, y);
  out[k++ * n + i] = __dsub_rn(x, y);
  out[k++ * n + i] = __dsub_rz(x, y);
  out[k++ * n + i] = __dsub_ru(x, y);
  out[k++ * n + i] = __dsub_rd(x, y);
  out[k++ * n + i] = __dmul_rn(x, y);
  out[k++ * n + i] = __dmul_rz(x, y);
  out[k++ * n + i] = __dmul_ru(x, y);
  out[k++ * n + i] = __dmul_rd(x, y);
  out[k++ * n + i] = __fma_rn(x, y, z);
  out[k++ * n + i] = __fma_rz(x, y, z);
  out[k++ * n + i] = __fma_ru(x, y, z);
  out[k++ * n + i] = __fma_rd(x, y, z);
  out[k++ * n + i] = __ddiv_rn(x, y);
  out[k++ * n + i] = __ddiv_rz(x, y);
  out[k++ * n + i] = __ddiv_ru(x, y);
  out[k++ * n + i] = __ddiv_rd(x, y);
  out[k++ * n + i] = __dsqrt_rn(x);
  out[k++ * n + i] = __dsqrt_rz(x);
  out[k++ * n + i] = __dsqrt_ru(x);
  out[k++ * n + i] = __dsqrt_rd(x);
  out[k++ * n + i] = __drcp_rn(x);
  out[k++ * n + i] = __drcp_rz(x);
  out[k++ * n + i] = __drcp_ru(x);
  out[k++ * n + i] = __drcp_rd(x);
  out[k++ * n + i] = x / y;
  out[k++ * n + i] = sqrt(x);
  out[k++ * n + i] = fma(x, y, z);
  out[k++ * n + i] = -x;
  out[k++ * n + i] = fabs(x);
}

// Operations whose results are exact (no rounding choice), so bit-exact
// against the host's libm.
extern "C" __global__ void f32_exact(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  int k = 0;
  out[k++ * n + i] = fminf(x, y);
  out[k++ * n + i] = fmaxf(x, y);
  out[k++ * n + i] = copysignf(x, y);
  out[k++ * n + i] = floorf(x);
  out[k++ * n + i] = ceilf(x);
  out[k++ * n + i] = truncf(x);
  out[k++ * n + i] = rintf(x);
  out[k++ * n + i] = roundf(x);
  out[k++ * n + i] = fmodf(x, y);
  out[k++ * n + i] = ldexpf(x, (int)(__float_as_uint(y) % 41) - 20);
  out[k++ * n + i] = __saturatef(x);
  out[k++ * n + i] = fdimf(x, y);
  out[k++ * n + i] = (float)(isnan(x) + 2 * isinf(x) + 4 * isfinite(x) + 8 * (signbit(x) != 0));
  out[k++ * n + i] =
      (float)(int)(x < y) + 2.0f * (x <= y) + 4.0f * (x == y) + 8.0f * (x != y) + 16.0f * !(x >= y) + 32.0f * !(x > y);
}

extern "C" __global__ void f64_exact(const double* a, const double* b, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i];
  int k = 0;
  out[k++ * n + i] = fmin(x, y);
  out[k++ * n + i] = fmax(x, y);
  out[k++ * n + i] = copysign(x, y);
  out[k++ * n + i] = floor(x);
  out[k++ * n + i] = ceil(x);
  out[k++ * n + i] = trunc(x);
  out[k++ * n + i] = rint(x);
  out[k++ * n + i] = round(x);
  out[k++ * n + i] = fmod(x, y);
}

// Approximate functions; the host checks them against tolerances taken
// from the CUDA programming guide's error tables, on inputs inside the
// ranges those bounds hold for.
extern "C" __global__ void f32_fast(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];  // x in [-4, 4], y in [0.5, 8]
  int k = 0;
  out[k++ * n + i] = __expf(x);
  out[k++ * n + i] = __exp10f(x * 0.25f);
  out[k++ * n + i] = __logf(y);
  out[k++ * n + i] = __log2f(y);
  out[k++ * n + i] = __log10f(y);
  out[k++ * n + i] = __sinf(x * 0.75f);
  out[k++ * n + i] = __cosf(x * 0.75f);
  out[k++ * n + i] = __tanf(x * 0.25f);
  out[k++ * n + i] = __powf(y, x * 0.5f);
  out[k++ * n + i] = rsqrtf(y);
  out[k++ * n + i] = __fdividef(x, y);
  out[k++ * n + i] = expf(x);
  out[k++ * n + i] = logf(y);
  out[k++ * n + i] = sinf(x);
  out[k++ * n + i] = cosf(x);
  out[k++ * n + i] = exp2f(x);
  out[k++ * n + i] = tanhf(x);
  out[k++ * n + i] = atan2f(x, y);
  out[k++ * n + i] = cbrtf(y);
  out[k++ * n + i] = powf(y, x);
}

extern "C" __global__ void f64_fast(const double* a, const double* b, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i];
  int k = 0;
  out[k++ * n + i] = exp(x);
  out[k++ * n + i] = log(y);
  out[k++ * n + i] = sin(x);
  out[k++ * n + i] = cos(x);
  out[k++ * n + i] = pow(y, x);
  out[k++ * n + i] = rsqrt(y);
}

// Float -> integer in every rounding mode (NaN gives 0, out-of-range values
// saturate).
extern "C" __global__ void cvt_f2i(const float* a, int* oi, unsigned* ou, long long* oll, unsigned long long* oull,
                                   int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i];
  oi[0 * n + i] = __float2int_rn(x);
  oi[1 * n + i] = __float2int_rz(x);
  oi[2 * n + i] = __float2int_ru(x);
  oi[3 * n + i] = __float2int_rd(x);
  ou[0 * n + i] = __float2uint_rn(x);
  ou[1 * n + i] = __float2uint_rz(x);
  ou[2 * n + i] = __float2uint_ru(x);
  ou[3 * n + i] = __float2uint_rd(x);
  oll[0 * n + i] = __float2ll_rn(x);
  oll[1 * n + i] = __float2ll_rz(x);
  oll[2 * n + i] = __float2ll_ru(x);
  oll[3 * n + i] = __float2ll_rd(x);
  oull[0 * n + i] = __float2ull_rn(x);
  oull[1 * n + i] = __float2ull_rz(x);
  oull[2 * n + i] = __float2ull_ru(x);
  oull[3 * n + i] = __float2ull_rd(x);
}

extern "C" __global__ void cvt_d2i(const double* a, int* oi, unsigned* ou, long long* oll, unsigned long long* oull,
                                   int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i];
  oi[0 * n + i] = __double2int_rn(x);
  oi[1 * n + i] = __double2int_rz(x);
  oi[2 * n + i] = __double2int_ru(x);
  oi[3 * n + i] = __double2int_rd(x);
  ou[0 * n + i] = __double2uint_rn(x);
  ou[1 * n + i] = __double2uint_rz(x);
  ou[2 * n + i] = __double2uint_ru(x);
  ou[3 * n + i] = __double2uint_rd(x);
  oll[0 * n + i] = __double2ll_rn(x);
  oll[1 * n + i] = __double2ll_rz(x);
  oll[2 * n + i] = __double2ll_ru(x);
  oll[3 * n + i] = __double2ll_rd(x);
  oull[0 * n + i] = __double2ull_rn(x);
  oull[1 * n + i] = __double2ull_rz(x);
  oull[2 * n + i] = __double2ull_ru(x);
  oull[3 * n + i] = __double2ull_rd(x);
}

// Integer -> float/double in every rounding mode, and double -> float.
extern "C" __global__ void cvt_i2f(const long long* a, const double* d, float* of, double* od, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long v = a[i];
  int s = (int)v;
  unsigned u = (unsigned)v;
  unsigned long long uv = (unsigned long long)v;
  int k = 0;
  of[k++ * n + i] = __int2float_rn(s);
  of[k++ * n + i] = __int2float_rz(s);
  of[k++ * n + i] = __int2float_ru(s);
  of[k++ * n + i] = __int2float_rd(s);
  of[k++ * n + i] = __uint2float_rn(u);
  of[k++ * n + i] = __uint2float_rz(u);
  of[k++ * n + i] = __uint2float_ru(u);
  of[k++ * n + i] = __uint2float_rd(u);
  of[k++ * n + i] = __ll2float_rn(v);
  of[k++ * n + i] = __ll2float_rz(v);
  of[k++ * n + i] = __ll2float_ru(v);
  of[k++ * n + i] = __ll2float_rd(v);
  of[k++ * n + i] = __ull2float_rn(uv);
  of[k++ * n + i] = __ull2float_rz(uv);
  of[k++ * n + i] = __ull2float_ru(uv);
  of[k++ * n + i] = __ull2float_rd(uv);
  of[k++ * n + i] = __double2float_rn(d[i]);
  of[k++ * n + i] = __double2float_rz(d[i]);
  of[k++ * n + i] = __double2float_ru(d[i]);
  of[k++ * n + i] = __double2float_rd(d[i]);
  k = 0;
  od[k++ * n + i] = __int2double_rn(s);
  od[k++ * n + i] = __uint2double_rn(u);
  od[k++ * n + i] = __ll2double_rn(v);
  od[k++ * n + i] = __ll2double_rz(v);
  od[k++ * n + i] = __ll2double_ru(v);
  od[k++ * n + i] = __ll2double_rd(v);
  od[k++ * n + i] = __ull2double_rn(uv);
  od[k++ * n + i] = __ull2double_rz(uv);
  od[k++ * n + i] = __ull2double_ru(uv);
  od[k++ * n + i] = __ull2double_rd(uv);
  od[k++ * n + i] = (double)__double2float_rn(d[i]);
}

// The bits of f32 NaNs: arithmetic gives the canonical NaN (0x7fffffff)
// whatever its operands; a NaN passed through keeps its payload. in[0] a
// quiet NaN with a payload, in[1] +inf, in[2] -1, in[3] 0. Thread 0 hands
// the payload on where thread 1 adds to it (a value of both kinds).
extern "C" __global__ void nan_bits(const float* in, unsigned* out, unsigned long long* wide) {
  const float nan = in[0], inf = in[1], minus_one = in[2], zero = in[3];
  unsigned* o = out + threadIdx.x * 8;
  o[0] = __float_as_uint(nan + 1.0f);
  o[1] = __float_as_uint(inf - inf);
  o[2] = __float_as_uint(zero * inf);
  o[3] = __float_as_uint(sqrtf(minus_one));
  o[4] = __float_as_uint(fmaf(nan, 2.0f, 1.0f));
  o[5] = __float_as_uint(nan);
  o[6] = __float_as_uint(zero / zero);
  o[7] = __float_as_uint(threadIdx.x == 0 ? nan : nan + 1.0f);
  if (threadIdx.x == 0) wide[0] = __double_as_longlong(static_cast<double>(inf - inf));
}
