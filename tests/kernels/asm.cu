// Inline PTX that compiles for sm_75: prmt in every mode, bmsk, szext,
// lop3, funnel shifts, out-of-range shifts, carry chains, bfind/fns/brev,
// 64-bit atom and red, ldmatrix and wmma. kernels_asm.cpp holds the
// host models (from the PTX ISA's semantics sections).
#include <cuda_fp16.h>
#include <mma.h>

// 24 results per element, at out[k * n + i]. bmsk takes its position
// from a and its width from c & 63; fns takes base b & 31 and the offset
// c sign-extended from its low 6 bits.
extern "C" __global__ void bit_asm(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], z = c[i], r;
  int k = 0;
#define EMIT(...)                                      \
  asm(__VA_ARGS__ : "=r"(r) : "r"(x), "r"(y), "r"(z)); \
  out[k++ * n + i] = r;
  EMIT("prmt.b32 %0, %1, %2, %3;")
  EMIT("prmt.b32.f4e %0, %1, %2, %3;")
  EMIT("prmt.b32.b4e %0, %1, %2, %3;")
  EMIT("prmt.b32.rc8 %0, %1, %2, %3;")
  EMIT("prmt.b32.ecl %0, %1, %2, %3;")
  EMIT("prmt.b32.ecr %0, %1, %2, %3;")
  EMIT("prmt.b32.rc16 %0, %1, %2, %3;")
  EMIT("{.reg .u32 t; and.b32 t, %3, 63; bmsk.clamp.b32 %0, %1, t;}")  // a: position, b: width
  EMIT("bmsk.wrap.b32 %0, %1, %2;")
  EMIT("szext.clamp.s32 %0, %1, %2;")
  EMIT("szext.wrap.s32 %0, %1, %2;")
  EMIT("szext.clamp.u32 %0, %1, %2;")
  EMIT("szext.wrap.u32 %0, %1, %2;")
  EMIT("lop3.b32 %0, %1, %2, %3, 0x96;")  // a ^ b ^ c
  EMIT("lop3.b32 %0, %1, %2, %3, 0xe8;")  // majority
  EMIT("lop3.b32 %0, %1, %2, %3, 0xca;")  // a ? b : c, bitwise
  EMIT("lop3.b32 %0, %1, %2, %3, 0x1e;")  // a ^ (b | c)
  EMIT("shf.l.clamp.b32 %0, %1, %2, %3;")
  EMIT("shf.r.wrap.b32 %0, %1, %2, %3;")
  EMIT("shl.b32 %0, %1, %3;")  // shift amounts above 31 give 0
  EMIT("shr.s32 %0, %1, %3;")  // ... or the sign
  EMIT("bfind.u32 %0, %1;")
  EMIT("bfind.shiftamt.s32 %0, %1;")
  EMIT("{.reg .u32 t; .reg .s32 o; and.b32 t, %2, 31; shl.b32 o, %3, 26; shr.s32 o, o, 26; fns.b32 %0, %1, t, o;}")
#undef EMIT
}

// 64-bit add and multiply through 32-bit carry chains: out[i] = a + b and
// out[n + i] = low 64 bits of a * b, with the halves given separately.
extern "C" __global__ void carry_chain(const unsigned long long* a, const unsigned long long* b,
                                       unsigned long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned al = (unsigned)a[i], ah = (unsigned)(a[i] >> 32), bl = (unsigned)b[i], bh = (unsigned)(b[i] >> 32);
  unsigned lo, hi;
  asm("add.cc.u32 %0, %2, %4;\n\taddc.u32 %1, %3, %5;" : "=r"(lo), "=r"(hi) : "r"(al), "r"(ah), "r"(bl), "r"(bh));
  out[i] = (unsigned long long)hi << 32 | lo;
  asm("{.reg .u32 t;\n\t"
      "mul.lo.u32 %0, %2, %4;\n\t"
      "mul.hi.u32 %1, %2, %4;\n\t"
      "mad.lo.u32 %1, %2, %5, %1;\n\t"
      "mad.lo.u32 %1, %3, %4, %1;}"
      : "=r"(lo), "=r"(hi)
      : "r"(al), "r"(ah), "r"(bl), "r"(bh));
  out[n + i] = (unsigned long long)hi << 32 | lo;
  unsigned long long wide;
  asm("mul.wide.u32 %0, %1, %2;" : "=l"(wide) : "r"(al), "r"(bh));
  out[2 * n + i] = wide;
  asm("mad.wide.s32 %0, %1, %2, %3;" : "=l"(wide) : "r"(al), "r"(bl), "l"(b[i]));
  out[3 * n + i] = wide;
  asm("sub.cc.u32 %0, %2, %4;\n\tsubc.u32 %1, %3, %5;" : "=r"(lo), "=r"(hi) : "r"(al), "r"(ah), "r"(bl), "r"(bh));
  out[4 * n + i] = (unsigned long long)hi << 32 | lo;
}

// 64-bit atom and red on global memory, and red.add.u32: slots[0] add,
// [1] exch (old values to olds), [2] cas-driven max, [3] red.add.u64,
// [4] red.add.u32 into the low word, [5] atom.and.b64, [6] red.or.b64.
extern "C" __global__ void atom64_asm(unsigned long long* slots_generic, unsigned long long* olds) {
  // The instructions take global-space addresses.
  unsigned long long* slots = reinterpret_cast<unsigned long long*>(__cvta_generic_to_global(slots_generic));
  unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x, old;
  asm volatile("atom.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(slots), "l"(i + 1) : "memory");
  asm volatile("atom.global.exch.b64 %0, [%1], %2;" : "=l"(old) : "l"(slots + 1), "l"(i) : "memory");
  olds[i] = old;
  unsigned long long want = i * 0x1000000001ull, cur = slots_generic[2];
  while (cur < want) {
    unsigned long long seen;
    asm volatile("atom.global.cas.b64 %0, [%1], %2, %3;" : "=l"(seen) : "l"(slots + 2), "l"(cur), "l"(want) : "memory");
    if (seen == cur) break;
    cur = seen;
  }
  asm volatile("red.global.add.u64 [%0], %1;" ::"l"(slots + 3), "l"(i << 20) : "memory");
  asm volatile("red.global.add.u32 [%0], %1;" ::"l"(slots + 4), "r"((unsigned)i) : "memory");
  asm volatile("atom.global.and.b64 %0, [%1], %2;" : "=l"(old) : "l"(slots + 5), "l"(~(1ull << (i % 64))) : "memory");
  asm volatile("red.global.or.b64 [%0], %1;" ::"l"(slots + 6), "l"(1ull << ((i * 3) % 64)) : "memory");
}

// ldmatrix from shared memory: four 8x8 matrices of b16 values (matrix m,
// row r, column c holds m * 64 + r * 8 + c); out[lane * 8 + reg] from the
// plain x4 load, out[256 + lane * 8 + reg] from the .trans x4 load.
// One warp.
extern "C" __global__ void ldmatrix_x4(unsigned* out) {
  __shared__ __align__(16) unsigned short m[4 * 64];
  unsigned lane = threadIdx.x;
  for (int j = lane; j < 256; j += 32) m[j] = (unsigned short)j;
  __syncwarp();
  unsigned addr = (unsigned)__cvta_generic_to_shared(&m[(lane / 8) * 64 + (lane % 8) * 8]);
  unsigned r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
  out[lane * 8 + 0] = r0;
  out[lane * 8 + 1] = r1;
  out[lane * 8 + 2] = r2;
  out[lane * 8 + 3] = r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
  out[256 + lane * 8 + 0] = r0;
  out[256 + lane * 8 + 1] = r1;
  out[256 + lane * 8 + 2] = r2;
  out[256 + lane * 8 + 3] = r3;
  unsigned x1;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(x1) : "r"(addr));
  out[lane * 8 + 4] = x1;
}

// One 16x16x16 wmma: D (f32, row-major) = A (f16, row-major) *
// B (f16, column-major) + C (f32, row-major). One warp.
extern "C" __global__ void wmma_16x16x16(const __half* A, const __half* B, const float* C, float* D) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::load_matrix_sync(fa, A, 16);
  wmma::load_matrix_sync(fb, B, 16);
  wmma::load_matrix_sync(fc, C, 16, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(D, fc, 16, wmma::mem_row_major);
}

// 32-bit shared addresses wrap: a register below the block's window (the
// array's address minus 1 KiB, "negative" when the array sits at offset 0,
// as the block's only shared array does) plus an immediate that brings it
// back, and a local address formed the same way.
extern "C" __global__ void asm_shared_address_wraps(int* out) {
  __shared__ int buf[64];
  buf[threadIdx.x] = threadIdx.x * 3 + 1;
  __syncthreads();
  const unsigned below = static_cast<unsigned>(__cvta_generic_to_shared(buf)) - 1024u + threadIdx.x * 4u;
  int v;
  asm volatile("ld.shared.u32 %0, [%1+1024];" : "=r"(v) : "r"(below));
  out[threadIdx.x] = v;
  asm volatile("st.shared.u32 [%0+1024], %1;" : : "r"(below), "r"(v * 2));
  __syncthreads();
  out[64 + threadIdx.x] = buf[63 - threadIdx.x];
}
