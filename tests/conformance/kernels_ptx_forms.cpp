// PTX forms from the ISA that nvcc and CUDA's own libraries emit: kernel
// pointer-parameter attributes after the type, units linked by cuLink that
// call each other's functions, and sm_90's vector atomics.
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
