// A probe for the kernel compiler (docs/conformance.md): instructions whose
// results are easy to get wrong by a bit, run over edge values and random
// operands. Prints one line per op with a hash of all its results, then
// writes every result to FILE; run it against two drivers and compare:
//   g++ -std=c++17 -I$CUDA/include tools/probes/isa_edges_probe.cpp -lcuda -o /tmp/isa && /tmp/isa out.bin
//   python3 tools/probes/isa_edges_diff.py a.bin b.bin
#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

// Thread i: a = A[i], b = B[i], c = C[i] (64 bits each); op k writes out[k * n + i].
const char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry edges(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pout, .param .u32 pn) {
  .reg .b64 %rd<40>; .reg .b32 %r<40>; .reg .f32 %f<20>; .reg .f64 %fd<20>; .reg .b16 %h<10>; .reg .pred %p<4>;
  .reg .u64 %o; .reg .u64 %stride;
  ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pb]; ld.param.u64 %rd3, [pc]; ld.param.u64 %o, [pout];
  ld.param.u32 %r1, [pn];
  mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x; mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.s32 %p1, %r5, %r1; @%p1 ret;
  mul.wide.s32 %rd4, %r5, 8;
  add.s64 %rd5, %rd1, %rd4; ld.global.u64 %rd10, [%rd5];
  add.s64 %rd5, %rd2, %rd4; ld.global.u64 %rd11, [%rd5];
  add.s64 %rd5, %rd3, %rd4; ld.global.u64 %rd12, [%rd5];
  cvt.u64.u32 %stride, %r1; shl.b64 %stride, %stride, 3;
  add.s64 %o, %o, %rd4;
  cvt.u32.u64 %r10, %rd10; cvt.u32.u64 %r11, %rd11; cvt.u32.u64 %r12, %rd12;
  mov.b32 %f10, %r10; mov.b32 %f11, %r11; mov.b32 %f12, %r12;
  mov.b64 %fd10, %rd10; mov.b64 %fd11, %rd11; mov.b64 %fd12, %rd12;
  // 0: cvt.pack.sat.u8.s32.b32 d, a, b, c
  cvt.pack.sat.u8.s32.b32 %r20, %r10, %r11, %r12; cvt.u64.u32 %rd20, %r20; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 1: cvt.pack.sat.s16.s32 d, a, b
  cvt.pack.sat.s16.s32 %r20, %r10, %r11; cvt.u64.u32 %rd20, %r20; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 2: cvt.pack.sat.s8.s32.b32 d, a, b, c
  cvt.pack.sat.s8.s32.b32 %r20, %r10, %r11, %r12; cvt.u64.u32 %rd20, %r20; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 3: mad.lo.cc.u32 / madc.hi.cc.u32 / madc.lo.u32 chain (hi word in the high half)
  mad.lo.cc.u32 %r20, %r10, %r11, %r12; madc.hi.cc.u32 %r21, %r10, %r11, %r20; madc.lo.u32 %r22, %r11, %r12, %r21;
  mov.b64 %rd20, {%r20, %r22}; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 4: mad.hi.cc.s32 / madc.lo.cc.s32 / addc.s32
  mad.hi.cc.s32 %r20, %r10, %r11, %r12; madc.lo.cc.s32 %r21, %r11, %r12, %r10; addc.s32 %r22, %r10, %r12;
  mov.b64 %rd20, {%r21, %r22}; xor.b64 %rd20, %rd20, 0; cvt.u64.u32 %rd21, %r20; xor.b64 %rd20, %rd20, %rd21; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 5: mad.lo.cc.u64 / madc.hi.u64
  mad.lo.cc.u64 %rd20, %rd10, %rd11, %rd12; madc.hi.u64 %rd21, %rd10, %rd11, %rd12; xor.b64 %rd20, %rd20, %rd21; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 6: sub.cc.s32 / subc.cc.s32 / subc.s32
  sub.cc.s32 %r20, %r10, %r11; subc.cc.s32 %r21, %r11, %r12; subc.s32 %r22, %r12, %r10;
  mov.b64 %rd20, {%r21, %r22}; cvt.u64.u32 %rd21, %r20; xor.b64 %rd20, %rd20, %rd21; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 7: sub.cc.u64 / subc.u64
  sub.cc.u64 %rd20, %rd10, %rd11; subc.u64 %rd21, %rd11, %rd12; xor.b64 %rd20, %rd20, %rd21; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 8: bfe.u64 a, b & 127, c & 127 (32-bit position and length)
  and.b32 %r23, %r11, 127; and.b32 %r24, %r12, 127; bfe.u64 %rd20, %rd10, %r23, %r24; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 9: bfe.s64
  bfe.s64 %rd20, %rd10, %r23, %r24; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 10: bfi.b64 (insert a into c at b & 127, length (c >> 8) & 127)
  shr.u32 %r25, %r12, 8; and.b32 %r25, %r25, 127; bfi.b64 %rd20, %rd10, %rd12, %r23, %r25; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 11: set.lt.f16.f32 (a 16-bit 1.0 or 0)
  set.lt.f16.f32 %h1, %f10, %f11; cvt.u64.u16 %rd20, %h1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 12: set.ge.f16x2.f16x2
  set.ge.f16x2.f16x2 %r20, %r10, %r11; cvt.u64.u32 %rd20, %r20; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 13: set.ne.u32.f16 / set.gtu.s32.f16x2? (u32 result of f16 compare)
  mov.b32 {%h2, %h3}, %r10; mov.b32 {%h4, %h5}, %r11; set.ne.u32.f16 %r20, %h2, %h4; cvt.u64.u32 %rd20, %r20; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 14: add.rm.f32 a, -a style: a + b, a - a, fma.rm zero results
  add.rm.f32 %f1, %f10, %f11; sub.rm.f32 %f2, %f10, %f10; fma.rm.f32 %f3, %f10, 0f00000000, %f11;
  mov.b32 %r20, %f1; mov.b32 %r21, %f2; mov.b64 %rd20, {%r20, %r21}; mov.b32 %r22, %f3; cvt.u64.u32 %rd21, %r22; shl.b64 %rd21, %rd21, 1; xor.b64 %rd20, %rd20, %rd21; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 15: mul.rm.f32, mul.rz.f32 with a zero operand and neg
  neg.f32 %f4, %f11; mul.rm.f32 %f1, %f10, %f4; add.rm.f32 %f2, %f1, %f4; mov.b32 %r20, %f1; mov.b32 %r21, %f2; mov.b64 %rd20, {%r20, %r21}; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 16-19: fma.rn/rz/rm/rp.f64
  fma.rn.f64 %fd1, %fd10, %fd11, %fd12; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  fma.rz.f64 %fd1, %fd10, %fd11, %fd12; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  fma.rm.f64 %fd1, %fd10, %fd11, %fd12; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  fma.rp.f64 %fd1, %fd10, %fd11, %fd12; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 20-23: sqrt.rn/rz/rm/rp.f64 of |a|
  abs.f64 %fd2, %fd10;
  sqrt.rn.f64 %fd1, %fd2; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  sqrt.rz.f64 %fd1, %fd2; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  sqrt.rm.f64 %fd1, %fd2; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  sqrt.rp.f64 %fd1, %fd2; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 24-27: div.rz/rm/rp.f64, rcp.rm.f64
  div.rz.f64 %fd1, %fd10, %fd11; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  div.rm.f64 %fd1, %fd10, %fd11; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  div.rp.f64 %fd1, %fd10, %fd11; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  rcp.rm.f64 %fd1, %fd10; mov.b64 %rd20, %fd1; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 28-31: f32 fma.rz/rm/rp, sqrt.rp.f32
  fma.rz.f32 %f1, %f10, %f11, %f12; mov.b32 %r20, %f1; cvt.u64.u32 %rd20, %r20; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  fma.rm.f32 %f1, %f10, %f11, %f12; mov.b32 %r20, %f1; cvt.u64.u32 %rd20, %r20; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  fma.rp.f32 %f1, %f10, %f11, %f12; mov.b32 %r20, %f1; cvt.u64.u32 %rd20, %r20; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  abs.f32 %f2, %f10; sqrt.rp.f32 %f1, %f2; mov.b32 %r20, %f1; cvt.u64.u32 %rd20, %r20; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 32-34: cvt.rm.f32.f64, cvt.rzi.s64.f64, cvt.rni.f32.f32
  cvt.rm.f32.f64 %f1, %fd10; mov.b32 %r20, %f1; cvt.u64.u32 %rd20, %r20; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  cvt.rzi.s64.f64 %rd20, %fd10; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  cvt.rni.f32.f32 %f1, %f10; mov.b32 %r20, %f1; cvt.u64.u32 %rd20, %r20; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  // 35-36: mul.hi.s64, mul.hi.u64
  mul.hi.s64 %rd20, %rd10, %rd11; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  mul.hi.u64 %rd20, %rd10, %rd11; st.global.u64 [%o], %rd20; add.s64 %o, %o, %stride;
  ret;
}
)";
constexpr int kOps = 37;
const char* const kNames[kOps] = {
    "cvt.pack.sat.u8.s32.b32", "cvt.pack.sat.s16.s32", "cvt.pack.sat.s8.s32.b32", "mad.cc.u32 chain",
    "mad.cc.s32 chain", "mad.cc.u64 chain", "subc.cc.s32 chain", "subc.u64 chain", "bfe.u64", "bfe.s64", "bfi.b64",
    "set.lt.f16.f32", "set.ge.f16x2.f16x2", "set.ne.u32.f16", "add/sub/fma.rm.f32 zeros", "mul/add.rm.f32 zeros",
    "fma.rn.f64", "fma.rz.f64", "fma.rm.f64", "fma.rp.f64", "sqrt.rn.f64", "sqrt.rz.f64", "sqrt.rm.f64",
    "sqrt.rp.f64", "div.rz.f64", "div.rm.f64", "div.rp.f64", "rcp.rm.f64", "fma.rz.f32", "fma.rm.f32",
    "fma.rp.f32", "sqrt.rp.f32", "cvt.rm.f32.f64", "cvt.rzi.s64.f64", "cvt.rni.f32.f32", "mul.hi.s64",
    "mul.hi.u64"};

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

#define CHECK(call)                                                        \
  do {                                                                     \
    CUresult r_ = (call);                                                  \
    if (r_ != CUDA_SUCCESS) {                                              \
      std::printf("%s failed: %d (line %d)\n", #call, (int)r_, __LINE__);  \
      return 1;                                                            \
    }                                                                      \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  const int n = 1 << 16;
  std::vector<uint64_t> a(n), b(n), c(n);
  // Edge values (as f32 in the low word, f64 whole, and integers), then random bits
  // and random finite doubles of all magnitudes.
  const uint64_t edges[] = {0, 1, 0x80000000ull, 0x7fffffffull, 0xffffffffull, 0x8000000000000000ull,
                            0x7fffffffffffffffull, ~0ull, 0x3f800000ull, 0xbf800000ull, 0x3ff0000000000000ull,
                            0xbff0000000000000ull, 0x0010000000000000ull, 0x000fffffffffffffull, 0x7ff0000000000000ull,
                            0x00800000ull};
  uint64_t s = 12345;
  for (int i = 0; i < n; ++i) {
    if (i < 16 * 16 * 16) {
      a[i] = edges[i % 16];
      b[i] = edges[i / 16 % 16];
      c[i] = edges[i / 256 % 16];
    } else if (i % 2) {
      a[i] = splitmix(s);
      b[i] = splitmix(s);
      c[i] = splitmix(s);
    } else {
      auto real = [&] {
        const uint64_t r = splitmix(s);
        const uint64_t exp = 1023 - 60 + (r >> 52) % 120;  // 2^-60 .. 2^60
        return (r & 0x800fffffffffffffull) | (exp << 52);
      };
      a[i] = real();
      b[i] = real();
      c[i] = (splitmix(s) & 3) == 0 ? (a[i] ^ 0x8000000000000000ull) : real();
      // Low words as f32 of similar magnitudes.
      auto f32 = [&] {
        const uint64_t r = splitmix(s);
        return static_cast<uint32_t>((r & 0x807fffffull) | ((127 - 30 + (r >> 40) % 60) << 23));
      };
      a[i] = (a[i] & ~0xffffffffull) | f32();
      b[i] = (b[i] & ~0xffffffffull) | f32();
    }
  }
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CUmodule m;
  char log[4096] = {0};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(sizeof log)};
  CUresult lr = cuModuleLoadDataEx(&m, kPtx, 2, opts, vals);
  if (lr != CUDA_SUCCESS) {
    std::printf("load failed: %d %s\n", (int)lr, log);
    return 1;
  }
  CUfunction f;
  CHECK(cuModuleGetFunction(&f, m, "edges"));
  CUdeviceptr da, db, dc, dout;
  CHECK(cuMemAlloc(&da, n * 8));
  CHECK(cuMemAlloc(&db, n * 8));
  CHECK(cuMemAlloc(&dc, n * 8));
  CHECK(cuMemAlloc(&dout, size_t{kOps} * n * 8));
  CHECK(cuMemcpyHtoD(da, a.data(), n * 8));
  CHECK(cuMemcpyHtoD(db, b.data(), n * 8));
  CHECK(cuMemcpyHtoD(dc, c.data(), n * 8));
  int nn = n;
  void* args[] = {&da, &db, &dc, &dout, &nn};
  CHECK(cuLaunchKernel(f, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CHECK(cuCtxSynchronize());
  std::vector<uint64_t> out(size_t{kOps} * n);
  CHECK(cuMemcpyDtoH(out.data(), dout, out.size() * 8));
  for (int k = 0; k < kOps; ++k) {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; ++i) h = (h ^ out[static_cast<size_t>(k) * n + i]) * 1099511628211ull;
    std::printf("%2d %-28s %016llx\n", k, kNames[k], (unsigned long long)h);
  }
  if (argc > 1) {
    FILE* fp = std::fopen(argv[1], "wb");
    if (!fp) return 1;
    std::fwrite(a.data(), 8, n, fp);
    std::fwrite(b.data(), 8, n, fp);
    std::fwrite(c.data(), 8, n, fp);
    std::fwrite(out.data(), 8, out.size(), fp);
    std::fclose(fp);
  }
  return 0;
}
