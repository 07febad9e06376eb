// Real PTX through the C API: load, launch, variables, faults, libraries,
// the linker, capture. Builds against the library like any CUDA program.
#include <gtest/gtest.h>
#include <cuda.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api_context_test.h"

namespace {

// out[blockIdx.x * blockDim.x + tid.x] = tid.x
const char kStoreTid[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry store_tid(.param .u64 p) {
  .reg .b64 %rd<6>; .reg .b32 %r<5>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r1;
  ret;
}
)";

// Reads `shared_v`, defined by another input of the link.
const char kUsesExtern[] = R"(
.version 8.0
.target sm_90
.address_size 64
.extern .global .align 4 .u32 shared_v;
.visible .entry read_v(.param .u64 p) {
  .reg .b64 %rd<3>; .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.u32 %r1, [shared_v];
  st.global.u32 [%rd2], %r1;
  ret;
}
)";
const char kDefinesExtern[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .global .align 4 .u32 shared_v = 77;
)";

// Vector registers, whole and by element: out = {in.x, in.y, in.z, in.x + in.z}.
const char kVectorRegisters[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry vec_regs(.param .u64 pin, .param .u64 pout) {
  .reg .b64 %rd<3>; .reg .b32 %r<3>; .reg .v4 .b32 %v1;
  ld.param.u64 %rd1, [pin];
  ld.param.u64 %rd2, [pout];
  ld.global.v4.u32 %v1, [%rd1];
  add.u32 %r1, %v1.x, %v1.z;
  mov.b32 %v1.w, %r1;
  st.global.v4.u32 [%rd2], %v1;
  ret;
}
)";

// Results driver 580 gave (tools/probes/isa_edges_probe.cpp): cvt.pack puts
// a above b (c above both), and mad.cc/madc carry through a chain.
// out = {pack_u8(1, 0, 0), pack_s16(0x80000000, 0), pack_s16(1, 0), madc chain lo, madc chain hi}.
const char kPackAndCarry[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry pack_carry(.param .u64 pout) {
  .reg .b64 %rd<2>; .reg .b32 %r<12>;
  ld.param.u64 %rd1, [pout];
  mov.u32 %r1, 1; mov.u32 %r2, 0; mov.u32 %r3, 0x80000000; mov.u32 %r4, 0xffffffff;
  cvt.pack.sat.u8.s32.b32 %r5, %r1, %r2, %r2;
  cvt.pack.sat.s16.s32 %r6, %r3, %r2;
  cvt.pack.sat.s16.s32 %r7, %r1, %r2;
  mad.lo.cc.u32 %r8, %r4, %r1, %r1;
  madc.hi.cc.u32 %r9, %r4, %r1, %r8;
  madc.lo.u32 %r10, %r1, %r1, %r9;
  st.global.u32 [%rd1], %r5; st.global.u32 [%rd1+4], %r6; st.global.u32 [%rd1+8], %r7;
  st.global.u32 [%rd1+12], %r8; st.global.u32 [%rd1+16], %r10;
  ret;
}
)";

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class RealPtx : public ApiContextTest {
 protected:
  CUmodule load(const std::string& text) {
    CUmodule m = nullptr;
    EXPECT_EQ(cuModuleLoadData(&m, text.c_str()), CUDA_SUCCESS);
    return m;
  }
};

TEST_F(RealPtx, LoadedKernelRunsAndReportsItsAttributes) {
  CUmodule m = load(kStoreTid);
  CUfunction f;
  ASSERT_EQ(cuModuleGetFunction(&f, m, "store_tid"), CUDA_SUCCESS);
  CUdeviceptr d;
  const unsigned blocks = 64, threads = 128;
  ASSERT_EQ(cuMemAlloc(&d, blocks * threads * 4), CUDA_SUCCESS);
  void* args[] = {&d};
  ASSERT_EQ(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  std::vector<unsigned> out(blocks * threads);
  ASSERT_EQ(cuMemcpyDtoH(out.data(), d, out.size() * 4), CUDA_SUCCESS);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], i % threads) << i;
  int regs = -1, max_threads = 0, ptx = 0;
  ASSERT_EQ(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_SUCCESS);
  ASSERT_EQ(cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f), CUDA_SUCCESS);
  ASSERT_EQ(cuFuncGetAttribute(&ptx, CU_FUNC_ATTRIBUTE_PTX_VERSION, f), CUDA_SUCCESS);
  EXPECT_GE(regs, 0);
  EXPECT_EQ(max_threads, 1024);
  EXPECT_EQ(ptx, 90);  // the driver reports the PTX's .target
  EXPECT_EQ(cuMemFree(d), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleUnload(m), CUDA_SUCCESS);
}

TEST_F(RealPtx, RefusedModuleSaysWhyOnStderrOnce) {
  const char* bad = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {\n  frobnicate.u32 %r1;\n  ret;\n}\n";
  CUmodule m;
  testing::internal::CaptureStderr();
  EXPECT_EQ(cuModuleLoadData(&m, bad), CUDA_ERROR_INVALID_PTX);
  EXPECT_EQ(cuModuleLoadData(&m, bad), CUDA_ERROR_INVALID_PTX);
  const std::string err = testing::internal::GetCapturedStderr();
  const std::string want = "module refused (CUDA_ERROR_INVALID_PTX): line 5, column 3: unknown instruction 'frobnicate' (in 'k')";
  const size_t at = err.find(want);
  EXPECT_NE(at, std::string::npos) << err;
  EXPECT_EQ(err.find(want, at + 1), std::string::npos) << "said twice: " << err;
}

TEST_F(RealPtx, CvtPackAndMadCarryChainsGiveTheDriversBits) {
  CUmodule m = load(kPackAndCarry);
  CUfunction f;
  ASSERT_EQ(cuModuleGetFunction(&f, m, "pack_carry"), CUDA_SUCCESS);
  CUdeviceptr out;
  ASSERT_EQ(cuMemAlloc(&out, 20), CUDA_SUCCESS);
  void* args[] = {&out};
  ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  unsigned got[5] = {};
  ASSERT_EQ(cuMemcpyDtoH(got, out, 20), CUDA_SUCCESS);
  EXPECT_EQ(got[0], 0x100u);
  EXPECT_EQ(got[1], 0x80000000u);
  EXPECT_EQ(got[2], 0x10000u);
  EXPECT_EQ(got[3], 0u);  // 0xffffffff * 1 + 1: 0, carry out
  EXPECT_EQ(got[4], 2u);  // 1 * 1 + (0 + 0 + carry) + carry of that
  EXPECT_EQ(cuModuleUnload(m), CUDA_SUCCESS);
}

TEST_F(RealPtx, VectorRegistersLoadStoreAndNameTheirElements) {
  CUmodule m = load(kVectorRegisters);
  CUfunction f;
  ASSERT_EQ(cuModuleGetFunction(&f, m, "vec_regs"), CUDA_SUCCESS);
  CUdeviceptr in, out;
  ASSERT_EQ(cuMemAlloc(&in, 16), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&out, 16), CUDA_SUCCESS);
  const unsigned v[4] = {7, 11, 100, 0xdead};
  ASSERT_EQ(cuMemcpyHtoD(in, v, 16), CUDA_SUCCESS);
  void* args[] = {&in, &out};
  ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  unsigned got[4] = {};
  ASSERT_EQ(cuMemcpyDtoH(got, out, 16), CUDA_SUCCESS);
  EXPECT_EQ(got[0], 7u);
  EXPECT_EQ(got[1], 11u);
  EXPECT_EQ(got[2], 100u);
  EXPECT_EQ(got[3], 107u);
  EXPECT_EQ(cuModuleUnload(m), CUDA_SUCCESS);
}

TEST_F(RealPtx, FatbinFileRunsAndACubinIsNoBinaryForTheGpu) {
  CUmodule m;
  const std::string dir = CUCPU_IMAGE_SAMPLES_DIR;
  ASSERT_EQ(cuModuleLoad(&m, (dir + "/add_one.compute_75.fatbin").c_str()), CUDA_SUCCESS);
  CUfunction f;
  ASSERT_EQ(cuModuleGetFunction(&f, m, "add_one"), CUDA_SUCCESS);
  std::vector<float> host(1000, 1.5f);
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, host.size() * 4), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyHtoD(d, host.data(), host.size() * 4), CUDA_SUCCESS);
  int n = 1000;
  void* args[] = {&d, &n};
  ASSERT_EQ(cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoH(host.data(), d, host.size() * 4), CUDA_SUCCESS);
  for (float v : host) ASSERT_EQ(v, 2.5f);
  cuMemFree(d);
  cuModuleUnload(m);
  // An ELF cubin holds no PTX.
  EXPECT_EQ(cuModuleLoad(&m, (dir + "/add_one.sm_75.cubin").c_str()), CUDA_ERROR_NO_BINARY_FOR_GPU);
}

TEST_F(RealPtx, ModuleGlobalsHaveTheirSizesAndTakeCopies) {
  CUmodule m = load(read_file(std::string(CUCPU_PTX_TEST_DIR) + "/basics.sm90.ptx"));
  CUdeviceptr c, g;
  size_t cbytes, gbytes;
  ASSERT_EQ(cuModuleGetGlobal(&c, &cbytes, m, "c"), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleGetGlobal(&g, &gbytes, m, "g"), CUDA_SUCCESS);
  EXPECT_EQ(cbytes, 32u);
  EXPECT_EQ(gbytes, 16u);
  float cv[8];
  for (int i = 0; i < 8; ++i) cv[i] = static_cast<float>(i + 1);
  ASSERT_EQ(cuMemcpyHtoD(c, cv, sizeof cv), CUDA_SUCCESS);
  float back[8] = {};
  ASSERT_EQ(cuMemcpyDtoH(back, c, sizeof back), CUDA_SUCCESS);
  EXPECT_EQ(back[7], 8.0f);
  CUdeviceptr missing;
  EXPECT_EQ(cuModuleGetGlobal(&missing, nullptr, m, "nope"), CUDA_ERROR_NOT_FOUND);
  cuModuleUnload(m);
}

TEST_F(RealPtx, MalformedPtxFillsTheErrorLog) {
  char log[512] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(uintptr_t{sizeof log})};
  CUmodule m;
  EXPECT_EQ(cuModuleLoadDataEx(&m, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k( {", 2, opts,
                               vals),
            CUDA_ERROR_INVALID_PTX);
  EXPECT_NE(std::string(log).find("line"), std::string::npos) << log;
  EXPECT_GT(reinterpret_cast<uintptr_t>(vals[1]), 0u);
}

class Faults : public RealPtx {
 protected:
  void SetUp() override {
    RealPtx::SetUp();
    m_ = load(read_file(std::string(CUCPU_PTX_TEST_DIR) + "/faults.sm90.ptx"));
  }
  CUresult run(const char* name, void** args, unsigned threads = 32) {
    CUfunction f;
    EXPECT_EQ(cuModuleGetFunction(&f, m_, name), CUDA_SUCCESS);
    EXPECT_EQ(cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
    return cuCtxSynchronize();
  }
  CUmodule m_ = nullptr;
};

TEST_F(Faults, WildStoreIsIllegalAddress) {
  CUdeviceptr p = 0x10;
  void* args[] = {&p};
  EXPECT_EQ(run("wild_store", args), CUDA_ERROR_ILLEGAL_ADDRESS);
  CUdeviceptr d;
  EXPECT_EQ(cuMemAlloc(&d, 4), CUDA_ERROR_ILLEGAL_ADDRESS);  // sticky
}

TEST_F(Faults, MisalignedAccessIsMisalignedAddress) {
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 64), CUDA_SUCCESS);
  void* args[] = {&d};
  EXPECT_EQ(run("misaligned", args, 1), CUDA_ERROR_MISALIGNED_ADDRESS);
}

TEST_F(Faults, TrapIsLaunchFailed) { EXPECT_EQ(run("trap_kernel", nullptr), CUDA_ERROR_LAUNCH_FAILED); }

TEST_F(Faults, FailedAssertIsAssertError) {
  int v = 41;
  void* args[] = {&v};
  EXPECT_EQ(run("assert_kernel", args, 1), CUDA_ERROR_ASSERT);
}

// A texture handle that names no live texture object faults the launch
// instead of reading through it: a forged value, and a destroyed object.
class TextureFaults : public RealPtx {
 protected:
  CUresult sample(CUtexObject t) {
    CUmodule m = load(read_file(std::string(CUCPU_KERNELS_PTX_DIR) + "/texture.sm90.ptx"));
    CUfunction f;
    EXPECT_EQ(cuModuleGetFunction(&f, m, "tex_2d_scalar"), CUDA_SUCCESS);
    CUdeviceptr xy, out;
    EXPECT_EQ(cuMemAlloc(&xy, 8), CUDA_SUCCESS);
    EXPECT_EQ(cuMemAlloc(&out, 4), CUDA_SUCCESS);
    EXPECT_EQ(cuMemsetD8(xy, 0, 8), CUDA_SUCCESS);
    int n = 1;
    void* args[] = {&t, &xy, &n, &out};
    EXPECT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
    return cuCtxSynchronize();
  }
};

TEST_F(TextureFaults, ForgedHandleIsIllegalAddress) {
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 256), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD8(d, 0x5a, 256), CUDA_SUCCESS);
  EXPECT_EQ(sample(static_cast<CUtexObject>(d)), CUDA_ERROR_ILLEGAL_ADDRESS);
}

TEST_F(TextureFaults, DestroyedHandleIsIllegalAddress) {
  CUDA_ARRAY_DESCRIPTOR ad{2, 2, CU_AD_FORMAT_FLOAT, 1};
  CUarray a;
  ASSERT_EQ(cuArrayCreate(&a, &ad), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC rd{};
  rd.resType = CU_RESOURCE_TYPE_ARRAY;
  rd.res.array.hArray = a;
  CUDA_TEXTURE_DESC td{};
  CUtexObject t;
  ASSERT_EQ(cuTexObjectCreate(&t, &rd, &td, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuTexObjectDestroy(t), CUDA_SUCCESS);
  ASSERT_EQ(cuArrayDestroy(a), CUDA_SUCCESS);
  EXPECT_EQ(sample(t), CUDA_ERROR_ILLEGAL_ADDRESS);
}

// A module's variables end at a guard: a store well past the last one faults.
TEST_F(RealPtx, StorePastTheModuleVariablesFaults) {
  CUmodule m = load(".version 8.0\n.target sm_90\n.address_size 64\n.visible .global .align 4 .u32 gv;\n"
                    ".visible .entry past() { .reg .b32 %r<2>; mov.u32 %r1, 1; st.global.u32 [gv+8192], %r1; ret; }\n"
                    ".visible .entry inside() { .reg .b32 %r<2>; mov.u32 %r1, 9; st.global.u32 [gv], %r1; ret; }\n");
  CUfunction inside, past;
  ASSERT_EQ(cuModuleGetFunction(&inside, m, "inside"), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleGetFunction(&past, m, "past"), CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchKernel(inside, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_SUCCESS);
  CUdeviceptr g;
  ASSERT_EQ(cuModuleGetGlobal(&g, nullptr, m, "gv"), CUDA_SUCCESS);
  unsigned v = 0;
  ASSERT_EQ(cuMemcpyDtoH(&v, g, 4), CUDA_SUCCESS);
  EXPECT_EQ(v, 9u);
  ASSERT_EQ(cuLaunchKernel(past, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

TEST_F(RealPtx, LibraryKernelLaunchesAsAFunctionAndAnswersAttributes) {
  CUlibrary lib;
  ASSERT_EQ(cuLibraryLoadData(&lib, kStoreTid, nullptr, nullptr, 0, nullptr, nullptr, 0), CUDA_SUCCESS);
  CUkernel k;
  ASSERT_EQ(cuLibraryGetKernel(&k, lib, "store_tid"), CUDA_SUCCESS);
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 32 * 4), CUDA_SUCCESS);
  void* args[] = {&d};
  ASSERT_EQ(cuLaunchKernel(reinterpret_cast<CUfunction>(k), 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr),
            CUDA_SUCCESS);
  unsigned out[32];
  ASSERT_EQ(cuMemcpyDtoH(out, d, sizeof out), CUDA_SUCCESS);
  EXPECT_EQ(out[31], 31u);
  int regs;
  EXPECT_EQ(cuKernelGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0), CUDA_SUCCESS);
  cuMemFree(d);
  EXPECT_EQ(cuLibraryUnload(lib), CUDA_SUCCESS);
}

TEST_F(RealPtx, LinkerResolvesExternVariables) {
  CUlinkState ls;
  char errors[256] = {};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {errors, reinterpret_cast<void*>(uintptr_t{sizeof errors})};
  ASSERT_EQ(cuLinkCreate(2, opts, vals, &ls), CUDA_SUCCESS);
  ASSERT_EQ(cuLinkAddData(ls, CU_JIT_INPUT_PTX, const_cast<char*>(kUsesExtern), sizeof kUsesExtern, "a.ptx", 0,
                          nullptr, nullptr),
            CUDA_SUCCESS)
      << errors;
  void* cubin;
  size_t size;
  EXPECT_EQ(cuLinkComplete(ls, &cubin, &size), CUDA_ERROR_INVALID_SOURCE);  // shared_v is not defined yet
  EXPECT_NE(std::string(errors).find("shared_v"), std::string::npos);
  ASSERT_EQ(cuLinkAddData(ls, CU_JIT_INPUT_PTX, const_cast<char*>(kDefinesExtern), sizeof kDefinesExtern, "b.ptx",
                          0, nullptr, nullptr),
            CUDA_SUCCESS)
      << errors;
  ASSERT_EQ(cuLinkComplete(ls, &cubin, &size), CUDA_SUCCESS);
  CUmodule m;
  ASSERT_EQ(cuModuleLoadData(&m, cubin), CUDA_SUCCESS);
  ASSERT_EQ(cuLinkDestroy(ls), CUDA_SUCCESS);
  CUfunction f;
  ASSERT_EQ(cuModuleGetFunction(&f, m, "read_v"), CUDA_SUCCESS);
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 4), CUDA_SUCCESS);
  void* args[] = {&d};
  ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  unsigned v = 0;
  ASSERT_EQ(cuMemcpyDtoH(&v, d, 4), CUDA_SUCCESS);
  EXPECT_EQ(v, 77u);
  cuMemFree(d);
  cuModuleUnload(m);
}

TEST_F(RealPtx, CapturedLaunchReplaysFromAGraph) {
  CUmodule m = load(kStoreTid);
  CUfunction f;
  ASSERT_EQ(cuModuleGetFunction(&f, m, "store_tid"), CUDA_SUCCESS);
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 8 * 64 * 4), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32(d, 0xffffffffu, 8 * 64), CUDA_SUCCESS);
  CUstream s;
  ASSERT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  void* args[] = {&d};
  ASSERT_EQ(cuLaunchKernel(f, 8, 1, 1, 64, 1, 1, 0, s, args, nullptr), CUDA_SUCCESS);
  CUgraph g;
  ASSERT_EQ(cuStreamEndCapture(s, &g), CUDA_SUCCESS);
  CUgraphExec e;
  ASSERT_EQ(cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(e, s), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
  std::vector<unsigned> out(8 * 64);
  ASSERT_EQ(cuMemcpyDtoH(out.data(), d, out.size() * 4), CUDA_SUCCESS);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], i % 64);
  cuGraphExecDestroy(e);
  cuGraphDestroy(g);
  cuStreamDestroy(s);
  cuMemFree(d);
  cuModuleUnload(m);
}

}  // namespace
