// PTX forms from the ISA that nvcc and CUDA's own libraries emit: kernel
// pointer-parameter attributes after the type, units linked by cuLink that
// call each other's functions, sm_90's vector atomics, and mbarrier phases.
#include <cstring>
#include <string>
#include <vector>

#include "kernels_util.h"

namespace {

const char* const kHeader90 = ".version 8.0\n.target sm_90\n.address_size 64\n";

// Loads `text`, runs its kernel `k(p)` with p a zeroed buffer of `bytes`,
// and returns the buffer.
std::vector<unsigned char> run_kernel(const std::string& text, unsigned blocks, unsigned threads, size_t bytes) {
  CUmodule m;
  ASSERT_CU(cuModuleLoadData(&m, text.c_str()));
  CUfunction f;
  ASSERT_CU(cuModuleGetFunction(&f, m, "k"));
  CUdeviceptr out;
  ASSERT_CU(cuMemAlloc(&out, bytes));
  ASSERT_CU(cuMemsetD8(out, 0, bytes));
  void* args[] = {&out};
  ASSERT_CU(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  std::vector<unsigned char> h(bytes);
  ASSERT_CU(cuMemcpyDtoH(h.data(), out, bytes));
  ASSERT_CU(cuMemFree(out));
  ASSERT_CU(cuModuleUnload(m));
  return h;
}

// The first word a one-thread run of `text` stores.
unsigned run_store_kernel(const std::string& text) {
  const std::vector<unsigned char> h = run_kernel(text, 1, 1, 16);
  unsigned v;
  std::memcpy(&v, h.data(), 4);
  return v;
}

}  // namespace

CONF_TEST(KernelPointerParameterAttributesFollowTheType) {
  // `.ptr [.space] [.align N]` after the type (PTX ISA, kernel parameter attributes).
  const char* const forms[] = {".param .u64 .ptr .global .align 8 p", ".param .u64 .ptr.global.align 16 p",
                               ".param .u64 .ptr .align 4 p"};
  for (const char* form : forms) {
    const std::string text = std::string(kHeader90) + ".visible .entry k(" + form +
                             ") {\n  .reg .b32 %r<2>;\n  .reg .b64 %rd<3>;\n  ld.param.u64 %rd1, [p];\n"
                             "  cvta.to.global.u64 %rd2, %rd1;\n  mov.u32 %r1, 42;\n  st.global.u32 [%rd2], %r1;\n  ret;\n}\n";
    EXPECT_TRUE(run_store_kernel(text) == 42);
  }
}

CONF_TEST(KernelLinkedUnitsCallEachOthersFunctions) {
  // Unit a's kernel calls a function and reads a variable that unit b
  // defines, and a .weak function both units define (a template instance).
  const char* const one = ".weak .func (.param .u32 r) one() {\n  .reg .b32 %r<2>;\n  mov.u32 %r1, 1;\n"
                          "  st.param.u32 [r], %r1;\n  ret;\n}\n";
  const std::string a = std::string(kHeader90) + one +
                        ".extern .global .align 4 .u32 g_b;\n"
                        ".extern .func (.param .u32 r) twice(.param .u32 x);\n"
                        ".visible .entry k(.param .u64 p) {\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n"
                        "  ld.global.u32 %r1, [g_b];\n"
                        "  { .param .u32 x; .param .u32 r; st.param.u32 [x], %r1; call.uni (r), twice, (x); "
                        "ld.param.u32 %r2, [r]; }\n"
                        "  { .param .u32 r; call.uni (r), one, (); ld.param.u32 %r1, [r]; }\n"
                        "  add.u32 %r2, %r2, %r1;\n"
                        "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n  st.global.u32 [%rd2], %r2;\n"
                        "  ret;\n}\n";
  const std::string b = std::string(kHeader90) + one +
                        ".visible .global .align 4 .u32 g_b = 21;\n"
                        ".visible .func (.param .u32 r) twice(.param .u32 x) {\n  .reg .b32 %r<3>;\n"
                        "  ld.param.u32 %r1, [x];\n  add.u32 %r2, %r1, %r1;\n  st.param.u32 [r], %r2;\n  ret;\n}\n";
  CUlinkState ls;
  ASSERT_CU(cuLinkCreate(0, nullptr, nullptr, &ls));
  ASSERT_CU(cuLinkAddData(ls, CU_JIT_INPUT_PTX, const_cast<char*>(a.c_str()), a.size() + 1, "a", 0, nullptr, nullptr));
  ASSERT_CU(cuLinkAddData(ls, CU_JIT_INPUT_PTX, const_cast<char*>(b.c_str()), b.size() + 1, "b", 0, nullptr, nullptr));
  void* image;
  size_t size;
  ASSERT_CU(cuLinkComplete(ls, &image, &size));
  CUmodule m;
  ASSERT_CU(cuModuleLoadData(&m, image));
  ASSERT_CU(cuLinkDestroy(ls));
  CUfunction f;
  ASSERT_CU(cuModuleGetFunction(&f, m, "k"));
  CUdeviceptr out;
  ASSERT_CU(cuMemAlloc(&out, 4));
  void* args[] = {&out};
  ASSERT_CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  unsigned v = 0;
  ASSERT_CU(cuMemcpyDtoH(&v, out, 4));
  EXPECT_TRUE(v == 43);
  ASSERT_CU(cuMemFree(out));
  ASSERT_CU(cuModuleUnload(m));
}

CONF_TEST(KernelVectorAtomicsAddEachElement) {
  // 64 threads: each adds (1, 2) to a float2 and (1, 2, 3, 4) to a float4,
  // returning the old values of the float2, and reduces (1, 1) into another.
  const std::string text =
      std::string(".version 8.1\n.target sm_90\n.address_size 64\n") +
      ".visible .entry k(.param .u64 p) {\n  .reg .f32 %f<12>;\n  .reg .b64 %rd<3>;\n"
      "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n"
      "  mov.f32 %f1, 0f3F800000;\n  mov.f32 %f2, 0f40000000;\n  mov.f32 %f3, 0f40400000;\n  mov.f32 %f4, 0f40800000;\n"
      "  atom.global.add.v2.f32 {%f5, %f6}, [%rd2], {%f1, %f2};\n"
      "  atom.global.add.v4.f32 {%f7, %f8, %f9, %f10}, [%rd2+16], {%f1, %f2, %f3, %f4};\n"
      "  red.global.add.v2.f32 [%rd2+32], {%f1, %f1};\n"
      "  ret;\n}\n";
  const std::vector<unsigned char> bytes = run_kernel(text, 2, 32, 64);
  float h[10];
  std::memcpy(h, bytes.data(), sizeof h);
  const float want[10] = {64, 128, 0, 0, 64, 128, 192, 256, 64, 64};
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(h[i] == want[i]);
}

CONF_TEST(KernelMbarrierPhasesOrderABlocksThreads) {
  // Two blocks of 128 threads through four phases of one mbarrier (count
  // 128): each thread stores a word in shared memory, arrives, waits for
  // the phase (by parity, and by the arrive's state), and reads a
  // neighbour's word. In phase 2 the threads below 64 leave with
  // arrive_drop, so phase 3 completes with the other 64 alone.
  const std::string text =
      std::string(kHeader90) +
      ".visible .entry k(.param .u64 p) {\n"
      "  .reg .pred %p<8>;\n  .reg .b32 %r<40>;\n  .reg .b64 %rd<16>;\n"
      "  .shared .align 8 .b64 bar;\n  .shared .align 4 .b32 s[128];\n  .shared .align 4 .b32 t[128];\n"
      "  .shared .align 4 .b32 u[64];\n"
      "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n"
      "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r20, bar;\n"
      "  mul.lo.u32 %r30, %r2, 384;\n"  // this block's first output word
      "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra INITED;\n"
      "  mov.u32 %r21, 128;\n  mbarrier.init.shared::cta.b64 [%r20], %r21;\n"
      "INITED:\n  bar.sync 0;\n"
      // phase 0: s[tid] = tid + 1000 * block; wait by parity; read s[(tid + 1) % 128]
      "  mad.lo.u32 %r3, %r2, 1000, %r1;\n  mov.u32 %r4, s;\n  shl.b32 %r5, %r1, 2;\n  add.u32 %r6, %r4, %r5;\n"
      "  st.shared.u32 [%r6], %r3;\n"
      "  mbarrier.arrive.shared::cta.b64 %rd4, [%r20];\n"
      "W0:\n  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r20], 0;\n  @!%p2 bra W0;\n"
      "  add.u32 %r7, %r1, 1;\n  and.b32 %r7, %r7, 127;\n  shl.b32 %r8, %r7, 2;\n  add.u32 %r9, %r4, %r8;\n"
      "  ld.shared.u32 %r10, [%r9];\n"
      "  add.u32 %r11, %r30, %r1;\n  mul.wide.u32 %rd5, %r11, 4;\n  add.u64 %rd6, %rd2, %rd5;\n"
      "  st.global.u32 [%rd6], %r10;\n"
      // phase 1: t[tid] = 2 * that; wait with the arrive's state; read t[(tid + 5) % 128]
      "  shl.b32 %r12, %r3, 1;\n  mov.u32 %r13, t;\n  add.u32 %r14, %r13, %r5;\n  st.shared.u32 [%r14], %r12;\n"
      "  mbarrier.arrive.release.cta.shared::cta.b64 %rd7, [%r20];\n"
      "W1:\n  mbarrier.test_wait.acquire.cta.shared::cta.b64 %p3, [%r20], %rd7;\n  @!%p3 bra W1;\n"
      "  add.u32 %r15, %r1, 5;\n  and.b32 %r15, %r15, 127;\n  shl.b32 %r16, %r15, 2;\n  add.u32 %r17, %r13, %r16;\n"
      "  ld.shared.u32 %r18, [%r17];\n  st.global.u32 [%rd6+512], %r18;\n"
      // phase 2: the threads below 64 leave; the others arrive and wait
      "  setp.lt.u32 %p4, %r1, 64;\n  @%p4 bra LEAVE;\n"
      "  mbarrier.arrive.shared::cta.b64 %rd8, [%r20];\n"
      "W2:\n  mbarrier.try_wait.shared::cta.b64 %p5, [%r20], %rd8;\n  @!%p5 bra W2;\n"
      // phase 3 (64 expected): u[tid - 64] = 3 * tid + 1000 * block; read u[(tid - 64 + 1) % 64]
      "  sub.u32 %r22, %r1, 64;\n  mad.lo.u32 %r23, %r1, 3, 0;\n  mad.lo.u32 %r23, %r2, 1000, %r23;\n"
      "  mov.u32 %r24, u;\n  shl.b32 %r25, %r22, 2;\n  add.u32 %r26, %r24, %r25;\n  st.shared.u32 [%r26], %r23;\n"
      "  mbarrier.arrive.shared::cta.b64 _, [%r20];\n"
      "W3:\n  mbarrier.try_wait.parity.shared::cta.b64 %p6, [%r20], 1;\n  @!%p6 bra W3;\n"
      "  add.u32 %r27, %r22, 1;\n  and.b32 %r27, %r27, 63;\n  shl.b32 %r28, %r27, 2;\n  add.u32 %r29, %r24, %r28;\n"
      "  ld.shared.u32 %r31, [%r29];\n"
      "  add.u32 %r32, %r30, 256;\n  add.u32 %r32, %r32, %r22;\n  mul.wide.u32 %rd9, %r32, 4;\n"
      "  add.u64 %rd10, %rd2, %rd9;\n  st.global.u32 [%rd10], %r31;\n"
      "  ret;\n"
      "LEAVE:\n  mbarrier.arrive_drop.shared::cta.b64 _, [%r20];\n  ret;\n}\n";
  const std::vector<unsigned char> bytes = run_kernel(text, 2, 128, 2 * 384 * 4);
  std::vector<uint32_t> h(2 * 384);
  std::memcpy(h.data(), bytes.data(), bytes.size());
  int wrong = 0;
  for (uint32_t blk = 0; blk < 2; ++blk) {
    for (uint32_t i = 0; i < 128; ++i) {
      wrong += h[blk * 384 + i] != (i + 1) % 128 + 1000 * blk;
      wrong += h[blk * 384 + 128 + i] != 2 * ((i + 5) % 128 + 1000 * blk);
    }
    for (uint32_t i = 0; i < 64; ++i) wrong += h[blk * 384 + 256 + i] != 3 * ((i + 1) % 64 + 64) + 1000 * blk;
  }
  EXPECT_TRUE(wrong == 0);
}

CONF_TEST(KernelCpAsyncMbarrierArriveCompletesAPhase) {
  // 64 threads copy a word each into shared memory with cp.async, and
  // make the barrier (count 128) track it: cp.async.mbarrier.arrive.noinc
  // is one arrival, the plain form none (it raises the count first), and
  // each thread arrives once more itself. After the phase each reads a
  // neighbour's copy. The global buffer's first 64 words are the input.
  const std::string text =
      std::string(kHeader90) +
      ".visible .entry k(.param .u64 p) {\n"
      "  .reg .pred %p<4>;\n  .reg .b32 %r<24>;\n  .reg .b64 %rd<10>;\n"
      "  .shared .align 8 .b64 bar;\n  .shared .align 4 .b32 s[64];\n"
      "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n"
      "  mov.u32 %r1, %tid.x;\n  mov.u32 %r20, bar;\n"
      "  setp.ne.u32 %p1, %r1, 0;\n  @%p1 bra INITED;\n"
      "  mov.u32 %r2, 128;\n  mbarrier.init.shared.b64 [%r20], %r2;\n"
      "INITED:\n  bar.sync 0;\n"
      "  mul.wide.u32 %rd3, %r1, 4;\n  add.u64 %rd4, %rd2, %rd3;\n"
      "  mov.u32 %r3, s;\n  shl.b32 %r4, %r1, 2;\n  add.u32 %r5, %r3, %r4;\n"
      "  cp.async.ca.shared.global [%r5], [%rd4], 4;\n"
      "  cp.async.mbarrier.arrive.shared.b64 [%r20];\n"
      "  cp.async.mbarrier.arrive.noinc.shared.b64 [%r20];\n"
      "  mbarrier.arrive.shared.b64 %rd5, [%r20];\n"
      "W:\n  mbarrier.try_wait.parity.shared.b64 %p2, [%r20], 0;\n  @!%p2 bra W;\n"
      "  add.u32 %r6, %r1, 1;\n  and.b32 %r6, %r6, 63;\n  shl.b32 %r7, %r6, 2;\n  add.u32 %r8, %r3, %r7;\n"
      "  ld.shared.u32 %r9, [%r8];\n  st.global.u32 [%rd4+256], %r9;\n"
      "  ret;\n}\n";
  CUmodule m;
  ASSERT_CU(cuModuleLoadData(&m, text.c_str()));
  CUfunction f;
  ASSERT_CU(cuModuleGetFunction(&f, m, "k"));
  std::vector<uint32_t> h(128);
  for (uint32_t i = 0; i < 64; ++i) h[i] = 7 * i + 3;
  CUdeviceptr buf;
  ASSERT_CU(cuMemAlloc(&buf, h.size() * 4));
  ASSERT_CU(cuMemcpyHtoD(buf, h.data(), h.size() * 4));
  void* args[] = {&buf};
  ASSERT_CU(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  ASSERT_CU(cuMemcpyDtoH(h.data(), buf, h.size() * 4));
  int wrong = 0;
  for (uint32_t i = 0; i < 64; ++i) wrong += h[64 + i] != 7 * ((i + 1) % 64) + 3;
  EXPECT_TRUE(wrong == 0);
  ASSERT_CU(cuMemFree(buf));
  ASSERT_CU(cuModuleUnload(m));
}

// A block-wide ranking's shape (CUB's onesweep unrolls one): more full-warp
// ballots than the compiler copies a step for one by one, each feeding the
// next, then a shuffle from a lane known only at run time. Every lane of a
// warp ends with the warp's hash of its 64 ballots plus the %tid of the
// lane the hash names.
CONF_TEST(KernelManyBallotsInARowThenAShuffleFromARunTimeLane) {
  constexpr int kBallots = 64, kThreads = 128, kBlocks = 8;
  std::string text = std::string(kHeader90) +
                     ".visible .entry k(.param .u64 p) {\n  .reg .b32 %r<8>;\n  .reg .pred %q;\n  .reg .b64 %rd<4>;\n"
                     "  mov.u32 %r0, %tid.x;\n  mov.u32 %r1, 0;\n";
  for (int k = 1; k <= kBallots; ++k)
    text += "  mul.lo.u32 %r2, %r0, " + std::to_string(k) + ";\n  shr.u32 %r2, %r2, 3;\n  and.b32 %r2, %r2, 1;\n" +
            "  setp.ne.u32 %q, %r2, 0;\n  vote.sync.ballot.b32 %r3, %q, -1;\n  mul.lo.u32 %r1, %r1, 31;\n" +
            "  add.u32 %r1, %r1, %r3;\n";
  text += "  and.b32 %r4, %r1, 31;\n  shfl.sync.idx.b32 %r5, %r0, %r4, 31, -1;\n  add.u32 %r1, %r1, %r5;\n"
          "  mov.u32 %r6, %ctaid.x;\n  mad.lo.u32 %r6, %r6, 128, %r0;\n  ld.param.u64 %rd1, [p];\n"
          "  cvta.to.global.u64 %rd1, %rd1;\n  mul.wide.u32 %rd2, %r6, 4;\n  add.s64 %rd1, %rd1, %rd2;\n"
          "  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";
  const std::vector<unsigned char> h = run_kernel(text, kBlocks, kThreads, kBlocks * kThreads * 4);
  bool all = true;
  for (unsigned t = 0; t < kThreads; ++t) {
    const unsigned warp = t / 32;
    unsigned hash = 0;
    for (unsigned k = 1; k <= kBallots; ++k) {
      unsigned ballot = 0;
      for (unsigned lane = 0; lane < 32; ++lane)
        if ((((warp * 32 + lane) * k) >> 3) & 1) ballot |= 1u << lane;
      hash = hash * 31 + ballot;
    }
    const unsigned want = hash + warp * 32 + (hash & 31);
    for (unsigned b = 0; b < kBlocks; ++b) {
      unsigned got;
      std::memcpy(&got, h.data() + (b * kThreads + t) * 4, 4);
      all &= got == want;
    }
  }
  EXPECT_TRUE(all);
}
