// The PTX video instructions, written as inline PTX: scalar ones with byte
// and half-word selectors, saturation, secondary operations and merges
// (CUB's SHR_ADD and SHL_ADD among them), vmad, vset, and SIMD averages of
// negative lanes. out[k * n + i] is op k on a[i], b[i], c[i].
#define OP(text, ...) asm(text : "=r"(r) : __VA_ARGS__); out[k++ * n + i] = r

extern "C" __global__ void video(const unsigned* pa, const unsigned* pb, const unsigned* pc, unsigned* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned a = pa[i], b = pb[i], c = pc[i], s = pb[i] & 63;
  unsigned r;
  int k = 0;
  OP("vadd.u32.u32.u32 %0, %1, %2;", "r"(a), "r"(b));
  OP("vadd.s32.s32.s32.sat %0, %1, %2;", "r"(a), "r"(b));
  OP("vadd.s32.u32.s32.sat %0, %1.b0, %2.h0;", "r"(a), "r"(b));
  OP("vsub.s32.s32.u32.sat %0, %1.h1, %2.h1;", "r"(a), "r"(b));
  OP("vsub.u32.s32.s32.sat %0, %1, %2;", "r"(a), "r"(b));
  OP("vabsdiff.s32.s32.s32.sat %0.h0, %1.b0, %2.b2, %3;", "r"(a), "r"(b), "r"(c));
  OP("vabsdiff.u32.u32.u32 %0.b3, %1.h1, %2.b1, %3;", "r"(a), "r"(b), "r"(c));
  OP("vmin.s32.s32.s32.sat.add %0, %1, %2, %3;", "r"(a), "r"(b), "r"(c));
  OP("vmax.u32.u32.u32.max %0, %1.b1, %2.b3, %3;", "r"(a), "r"(b), "r"(c));
  OP("vmax.s32.s32.s32.min %0, %1.h0, %2.h1, %3;", "r"(a), "r"(b), "r"(c));
  OP("vshr.u32.u32.u32.clamp.add %0, %1, %2, %3;", "r"(a), "r"(s), "r"(c));
  OP("vshl.u32.u32.u32.clamp.add %0, %1, %2, %3;", "r"(a), "r"(s), "r"(c));
  OP("vshr.s32.s32.u32.wrap %0, %1, %2;", "r"(a), "r"(s));
  OP("vshr.s32.s32.u32.clamp %0, %1, %2;", "r"(a), "r"(s));
  OP("vshl.s32.s32.u32.clamp.sat %0, %1.h0, %2.b0;", "r"(a), "r"(b));
  OP("vset.s32.u32.lt %0, %1, %2;", "r"(a), "r"(b));
  OP("vset.u32.u32.ge.add %0, %1.b0, %2.b0, %3;", "r"(a), "r"(b), "r"(c));
  OP("vset.s32.s32.ne %0.b2, %1.h1, %2.h0, %3;", "r"(a), "r"(b), "r"(c));
  OP("vmad.s32.s32.s32.sat %0, %1.h0, %2.h1, %3;", "r"(a), "r"(b), "r"(c));
  OP("vmad.u32.u32.u32.shr15 %0, %1, %2, %3;", "r"(a), "r"(b), "r"(c));
  OP("vmad.s32.s32.s32 %0, -%1.b0, %2.b1, %3;", "r"(a), "r"(b), "r"(c));
  OP("vmad.s32.u32.u32.po %0, %1.h0, %2.h0, %3;", "r"(a), "r"(b), "r"(c));
  OP("vavrg2.s32.s32.s32 %0, %1, %2, %3;", "r"(a), "r"(b), "r"(c));
  OP("vavrg4.s32.s32.s32 %0, %1, %2, %3;", "r"(a), "r"(b), "r"(c));
}
