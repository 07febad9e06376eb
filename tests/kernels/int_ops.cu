// Integer arithmetic, bit manipulation and saturating operations.
// Each kernel reads n-element inputs and writes op k of element i to
// out[k * n + i]; the conformance suite (kernels_int.cpp) holds the host
// reference for every op, in the same order.

extern "C" __global__ void i32_ops(const int* a, const int* b, const int* c, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i], z = c[i];
  unsigned ux = x, uy = y, uz = z;
  int k = 0;
  out[k++ * n + i] = (int)(ux + uy);
  out[k++ * n + i] = (int)(ux - uy);
  out[k++ * n + i] = (int)(ux * uy);
  out[k++ * n + i] = __mulhi(x, y);
  out[k++ * n + i] = (int)__umulhi(ux, uy);
  out[k++ * n + i] = __mul24(x, y);
  out[k++ * n + i] = (int)__umul24(ux, uy);
  out[k++ * n + i] = (int)(ux * uy + uz);  // mad.lo
  // y is never 0 and (x, y) is never (INT_MIN, -1): the host guarantees it.
  out[k++ * n + i] = x / y;
  out[k++ * n + i] = x % y;
  out[k++ * n + i] = (int)(ux / uy);
  out[k++ * n + i] = (int)(ux % uy);
  out[k++ * n + i] = min(x, y);
  out[k++ * n + i] = max(x, y);
  out[k++ * n + i] = (int)min(ux, uy);
  out[k++ * n + i] = (int)max(ux, uy);
  out[k++ * n + i] = abs(x);
  out[k++ * n + i] = (int)(ux << (uy & 31));
  out[k++ * n + i] = x >> (uy & 31);
  out[k++ * n + i] = (int)(ux >> (uy & 31));
  out[k++ * n + i] = x & y;
  out[k++ * n + i] = x | y;
  out[k++ * n + i] = x ^ y;
  out[k++ * n + i] = ~x;
  out[k++ * n + i] = __popc(ux);
  out[k++ * n + i] = __clz(x);
  out[k++ * n + i] = (int)__brev(ux);
  out[k++ * n + i] = __ffs(x);
  out[k++ * n + i] = (int)__byte_perm(ux, uy, uz & 0x7777);
  out[k++ * n + i] = (int)__funnelshift_l(ux, uy, uz);
  out[k++ * n + i] = (int)__funnelshift_r(ux, uy, uz);
  out[k++ * n + i] = (int)__funnelshift_lc(ux, uy, uz);
  out[k++ * n + i] = (int)__funnelshift_rc(ux, uy, uz);
  out[k++ * n + i] = __dp4a(x, y, z);
  out[k++ * n + i] = (int)__dp4a(ux, uy, uz);
  out[k++ * n + i] = __dp2a_lo(x, y, z);
  out[k++ * n + i] = __dp2a_hi(x, y, z);
  out[k++ * n + i] = (int)__dp2a_lo(ux, uy, uz);
  out[k++ * n + i] = (int)__dp2a_hi(ux, uy, uz);
  out[k++ * n + i] = __hadd(x, y);
  out[k++ * n + i] = __rhadd(x, y);
  out[k++ * n + i] = (int)__uhadd(ux, uy);
  out[k++ * n + i] = (int)__urhadd(ux, uy);
  out[k++ * n + i] = (int)__sad(x, y, uz);
  out[k++ * n + i] = (int)__usad(ux, uy, uz);
  out[k++ * n + i] = (int)__vaddss2(ux, uy);
  out[k++ * n + i] = (int)__vaddus4(ux, uy);
  out[k++ * n + i] = (int)__vsubss4(ux, uy);
  out[k++ * n + i] = (int)__vabsdiffu4(ux, uy);
  out[k++ * n + i] = (int)__vavgu4(ux, uy);
  out[k++ * n + i] = (int)__vmaxs2(ux, uy);
  out[k++ * n + i] = (int)__vcmpeq4(ux, uy);
  unsigned r;
  asm("add.sat.s32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
  out[k++ * n + i] = (int)r;
  asm("sub.sat.s32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
  out[k++ * n + i] = (int)r;
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(ux), "r"(uy & 0x3f), "r"((uz >> 8) & 0x3f));
  out[k++ * n + i] = (int)r;
  asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(ux), "r"(uy & 0x3f), "r"((uz >> 8) & 0x3f));
  out[k++ * n + i] = (int)r;
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(ux), "r"(uy), "r"(uz & 0x3f), "r"((uz >> 8) & 0x3f));
  out[k++ * n + i] = (int)r;
}

extern "C" __global__ void i64_ops(const long long* a, const long long* b, const long long* c, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long x = a[i], y = b[i], z = c[i];
  unsigned long long ux = x, uy = y, uz = z;
  int k = 0;
  out[k++ * n + i] = (long long)(ux + uy);
  out[k++ * n + i] = (long long)(ux - uy);
  out[k++ * n + i] = (long long)(ux * uy);
  out[k++ * n + i] = __mul64hi(x, y);
  out[k++ * n + i] = (long long)__umul64hi(ux, uy);
  out[k++ * n + i] = (long long)(ux * uy + uz);
  out[k++ * n + i] = x / y;
  out[k++ * n + i] = x % y;
  out[k++ * n + i] = (long long)(ux / uy);
  out[k++ * n + i] = (long long)(ux % uy);
  out[k++ * n + i] = min(x, y);
  out[k++ * n + i] = max(x, y);
  out[k++ * n + i] = (long long)min(ux, uy);
  out[k++ * n + i] = (long long)max(ux, uy);
  out[k++ * n + i] = llabs(x);
  out[k++ * n + i] = (long long)(ux << (uy & 63));
  out[k++ * n + i] = x >> (uy & 63);
  out[k++ * n + i] = (long long)(ux >> (uy & 63));
  out[k++ * n + i] = x & y;
  out[k++ * n + i] = x | y;
  out[k++ * n + i] = x ^ y;
  out[k++ * n + i] = ~x;
  out[k++ * n + i] = __popcll(ux);
  out[k++ * n + i] = __clzll(x);
  out[k++ * n + i] = (long long)__brevll(ux);
  out[k++ * n + i] = __ffsll(x);
  // Mixed widths: 32x32->64 multiplies and sign/zero extension.
  out[k++ * n + i] = (long long)(int)x * (long long)(int)y;
  out[k++ * n + i] = (long long)((unsigned long long)(unsigned)ux * (unsigned)uy);
  out[k++ * n + i] = (long long)(short)x;
  out[k++ * n + i] = (long long)(signed char)y;
  out[k++ * n + i] = (long long)(unsigned short)x;
}
