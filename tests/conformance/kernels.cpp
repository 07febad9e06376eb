// Loading code and launching kernels: the errors of bad launches, module
// and library edge cases, function attributes, occupancy, faults. Where the
// driver's answer is not documented the test only records it (INFO lines,
// compared between drivers by compare.py).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"
#include "kernels_util.h"

namespace {

// out[ctaid.x * ntid.x + tid.x] = tid.x; `small` is limited to 128 threads.
const char kPtx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .global .align 4 .u32 gv = 5;\n"
    ".visible .entry store_tid(.param .u64 p) {\n"
    "  .reg .b64 %rd<6>; .reg .b32 %r<5>;\n"
    "  ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x;\n"
    "  mad.lo.s32 %r4, %r2, %r3, %r1; mul.wide.u32 %rd3, %r4, 4; add.s64 %rd4, %rd2, %rd3;\n"
    "  st.global.u32 [%rd4], %r1; ret;\n}\n"
    ".visible .entry small() .maxntid 128, 1, 1 { ret; }\n"
    ".visible .entry exact() .reqntid 64, 1, 1 { ret; }\n"
    ".visible .entry trap_k() { trap; }\n"
    ".visible .entry wild(.param .u64 p) {\n"
    "  .reg .b64 %rd<2>; .reg .b32 %r<2>;\n"
    "  ld.param.u64 %rd1, [p]; mov.u32 %r1, 1; st.global.u32 [%rd1], %r1; ret;\n}\n"
    ".visible .entry misaligned(.param .u64 p) {\n"
    "  .reg .b64 %rd<2>; .reg .b32 %r<2>;\n"
    "  ld.param.u64 %rd1, [p]; mov.u32 %r1, 1; st.global.u32 [%rd1+1], %r1; ret;\n}\n";

struct Loaded {
  CUmodule mod = nullptr;
  CUfunction store = nullptr, small = nullptr, exact = nullptr;
  Loaded() {
    if (cuModuleLoadData(&mod, kPtx) != CUDA_SUCCESS) throw conf::Failure{"cuModuleLoadData"};
    if (cuModuleGetFunction(&store, mod, "store_tid") != CUDA_SUCCESS ||
        cuModuleGetFunction(&small, mod, "small") != CUDA_SUCCESS ||
        cuModuleGetFunction(&exact, mod, "exact") != CUDA_SUCCESS)
      throw conf::Failure{"cuModuleGetFunction"};
  }
  ~Loaded() { cuModuleUnload(mod); }
};

CUresult launch(CUfunction f, unsigned gx, unsigned bx, unsigned smem, void** args, void** extra = nullptr,
                unsigned by = 1, unsigned bz = 1) {
  return cuLaunchKernel(f, gx, 1, 1, bx, by, bz, smem, nullptr, args, extra);
}

}  // namespace

CONF_TEST(KernelLaunchRuns) {
  Loaded l;
  CUdeviceptr d;
  ASSERT_CU(cuMemAlloc(&d, 4 * 256 * 4));
  void* args[] = {&d};
  ASSERT_CU(launch(l.store, 4, 256, 0, args));
  std::vector<unsigned> out(4 * 256);
  ASSERT_CU(cuMemcpyDtoH(out.data(), d, out.size() * 4));
  for (size_t i = 0; i < out.size(); ++i) EXPECT_TRUE(out[i] == i % 256);
  ASSERT_CU(cuMemFree(d));
}

CONF_TEST(KernelLaunchRefusesEmptyAndOversizedShapes) {
  Loaded l;
  CUdeviceptr d;
  ASSERT_CU(cuMemAlloc(&d, 1 << 20));
  void* args[] = {&d};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch(l.store, 0, 1, 0, args));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch(l.store, 1, 0, 0, args));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch(l.store, 1, 1025, 0, args));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch(l.store, 1, 1, 0, args, nullptr, 1, 65));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch(l.store, 1, 32, 0, args, nullptr, 32, 2));
  conf::info("kernel.grid_y_65536", cuLaunchKernel(l.store, 1, 65536, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  conf::info("kernel.grid_x_2e31", cuLaunchKernel(l.store, 0x80000000u, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  conf::info("kernel.above_maxntid", launch(l.small, 1, 129, 0, nullptr));
  conf::info("kernel.reqntid_mismatch", launch(l.exact, 1, 32, 0, nullptr));
  conf::info("kernel.reqntid_match", launch(l.exact, 1, 64, 0, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  ASSERT_CU(cuMemFree(d));
}

CONF_TEST(KernelLaunchSharedMemory) {
  Loaded l;
  conf::info("kernel.smem_48k", launch(l.small, 1, 1, 48 * 1024, nullptr));
  conf::info("kernel.smem_48k_plus_1", launch(l.small, 1, 1, 48 * 1024 + 1, nullptr));
  int v = -1;
  ASSERT_CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, l.small));
  conf::info_value("kernel.max_dynamic_shared_default", v);
  conf::info("kernel.set_max_dyn_optin", cuFuncSetAttribute(l.small, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448));
  conf::info("kernel.set_max_dyn_optin_plus_1",
             cuFuncSetAttribute(l.small, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449));
  conf::info("kernel.set_max_dyn_negative", cuFuncSetAttribute(l.small, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1));
  conf::info("kernel.smem_optin_after_set", launch(l.small, 1, 1, 232448, nullptr));
  conf::info("kernel.smem_above_set", launch(l.small, 1, 1, 232449, nullptr));
  ASSERT_CU(cuCtxSynchronize());
}

CONF_TEST(KernelLaunchBadParameters) {
  Loaded l;
  CUdeviceptr d;
  ASSERT_CU(cuMemAlloc(&d, 1024));
  void* args[] = {&d};
  size_t size = 8, small = 4, large = 64;
  void* buf[8] = {reinterpret_cast<void*>(d)};
  void* ok[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  void* too_small[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &small, CU_LAUNCH_PARAM_END};
  void* too_large[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &large, CU_LAUNCH_PARAM_END};
  void* unknown[] = {reinterpret_cast<void*>(uintptr_t{7}), buf, CU_LAUNCH_PARAM_END};
  void* no_size[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_END};
  EXPECT_CU(CUDA_SUCCESS, launch(l.store, 1, 1, 0, nullptr, ok));
  conf::info("kernel.params_and_extra", launch(l.store, 1, 1, 0, args, ok));
  conf::info("kernel.no_params_given", launch(l.store, 1, 1, 0, nullptr, nullptr));
  // Driver 580 accepts a buffer smaller than the parameters and the kernel
  // then reads garbage (and faults): probed on cucpu only.
  if (conf::on_cucpu()) conf::info("kernel.extra_too_small", launch(l.store, 1, 1, 0, nullptr, too_small));
  conf::info("kernel.extra_too_large", launch(l.store, 1, 1, 0, nullptr, too_large));
  conf::info("kernel.extra_unknown_key", launch(l.store, 1, 1, 0, nullptr, unknown));
  conf::info("kernel.extra_pointer_without_size", launch(l.store, 1, 1, 0, nullptr, no_size));
  conf::info("kernel.null_function", cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  ASSERT_CU(cuMemFree(d));
}

CONF_TEST(KernelLaunchOtherContextStream) {
  Loaded l;
  CUcontext other;
  CUstream s;
  ASSERT_CU(cuCtxCreate(&other, nullptr, 0, 0));
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr d;
  ASSERT_CU(cuMemAlloc(&d, 64));
  void* args[] = {&d};
  conf::info("kernel.function_of_other_context", cuLaunchKernel(l.store, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
  cuCtxSynchronize();
  ASSERT_CU(cuCtxDestroy(other));
  cuCtxSetCurrent(conf::primary());
}

CONF_TEST(KernelLaunchExAttributes) {
  Loaded l;
  CUlaunchConfig cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
  CUlaunchAttribute a;
  std::memset(&a, 0, sizeof a);
  cfg.attrs = &a;
  cfg.numAttrs = 1;
  a.id = static_cast<CUlaunchAttributeID>(999);
  conf::info("kernel.ex_unknown_attribute", cuLaunchKernelEx(&cfg, l.small, nullptr, nullptr));
  a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  a.value.clusterDim.x = 2, a.value.clusterDim.y = 1, a.value.clusterDim.z = 1;
  conf::info("kernel.ex_cluster_not_dividing_grid", cuLaunchKernelEx(&cfg, l.small, nullptr, nullptr));
  a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  a.value.cooperative = 1;
  cfg.gridDimX = 1u << 20;
  conf::info("kernel.ex_cooperative_too_large", cuLaunchKernelEx(&cfg, l.small, nullptr, nullptr));
  conf::info("kernel.cooperative_too_large",
             cuLaunchCooperativeKernel(l.small, 1u << 20, 1, 1, 1, 1, 1, 0, nullptr, nullptr));
  cfg.numAttrs = 1;
  cfg.attrs = nullptr;
  conf::info("kernel.ex_null_attrs", cuLaunchKernelEx(&cfg, l.small, nullptr, nullptr));
  conf::info("kernel.ex_null_config", cuLaunchKernelEx(nullptr, l.small, nullptr, nullptr));
  cuCtxSynchronize();
}

CONF_TEST(KernelFunctionAttributes) {
  Loaded l;
  const CUfunction_attribute attrs[] = {
      CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_NUM_REGS,
      CU_FUNC_ATTRIBUTE_PTX_VERSION, CU_FUNC_ATTRIBUTE_BINARY_VERSION, CU_FUNC_ATTRIBUTE_CACHE_MODE_CA,
      CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET,
      CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE};
  for (CUfunction_attribute a : attrs) {
    int v = -12345;
    CUresult r = cuFuncGetAttribute(&v, a, l.small);
    conf::info_value(("kernel.attr_" + std::to_string(static_cast<int>(a))).c_str(), r == CUDA_SUCCESS ? v : -99999);
  }
  int v;
  conf::info("kernel.attr_unknown", cuFuncGetAttribute(&v, static_cast<CUfunction_attribute>(99), l.small));
  conf::info("kernel.set_read_only_attr", cuFuncSetAttribute(l.small, CU_FUNC_ATTRIBUTE_NUM_REGS, 8));
  conf::info("kernel.set_carveout_101", cuFuncSetAttribute(l.small, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101));
  conf::info("kernel.set_cluster_width_4", cuFuncSetAttribute(l.small, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 4));
  conf::info("kernel.cache_config_bad", cuFuncSetCacheConfig(l.small, static_cast<CUfunc_cache>(9)));
}

CONF_TEST(KernelOccupancy) {
  Loaded l;
  int blocks = -1, grid = -1, size = -1;
  ASSERT_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, l.store, 256, 0));
  conf::info_value("kernel.occupancy_256", blocks);
  ASSERT_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, l.store, 1024, 0));
  conf::info_value("kernel.occupancy_1024", blocks);
  ASSERT_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, l.store, 128, 40000));
  conf::info_value("kernel.occupancy_128_smem_40000", blocks);
  conf::info("kernel.occupancy_block_0", cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, l.store, 0, 0));
  conf::info("kernel.occupancy_above_maxntid", cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, l.small, 256, 0));
  conf::info_value("kernel.occupancy_above_maxntid_value", blocks);
  conf::info("kernel.occupancy_smem_above_limit",
             cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, l.store, 128, 100000));
  conf::info_value("kernel.occupancy_smem_above_limit_value", blocks);
  conf::info("kernel.occupancy_bad_flags",
             cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, l.store, 128, 0, 4));
  ASSERT_CU(cuOccupancyMaxPotentialBlockSize(&grid, &size, l.store, nullptr, 0, 0));
  conf::info_value("kernel.potential_block_size", size);
  size_t smem = 0;
  ASSERT_CU(cuOccupancyAvailableDynamicSMemPerBlock(&smem, l.store, 2, 256));
  conf::info_value("kernel.available_smem_2x256", static_cast<long long>(smem));
}

CONF_TEST(KernelModuleEdges) {
  Loaded l;
  CUfunction f;
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, l.mod, "nope"));
  CUdeviceptr d;
  size_t n;
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetGlobal(&d, &n, l.mod, "nope"));
  ASSERT_CU(cuModuleGetGlobal(&d, &n, l.mod, "gv"));
  EXPECT_TRUE(n == 4);
  conf::info("kernel.global_both_outputs_null", cuModuleGetGlobal(nullptr, nullptr, l.mod, "gv"));
  conf::info("kernel.memfree_module_global", cuMemFree(d));
  conf::info("kernel.unload_null", cuModuleUnload(nullptr));
  unsigned count = 0;
  ASSERT_CU(cuModuleGetFunctionCount(&count, l.mod));
  conf::info_value("kernel.function_count", count);
  CUfunction fs[2];
  conf::info("kernel.enumerate_fewer_than_count", cuModuleEnumerateFunctions(fs, 2, l.mod));
  CUmoduleLoadingMode mode;
  ASSERT_CU(cuModuleGetLoadingMode(&mode));
  conf::info_value("kernel.loading_mode", mode);
  CUfunctionLoadingState st;
  ASSERT_CU(cuFuncIsLoaded(&st, l.store));
  conf::info_value("kernel.loaded_after_get_function", st);
  CUmodule m;
  conf::info("kernel.load_newer_target",
             cuModuleLoadData(&m, ".version 8.0\n.target sm_100\n.address_size 64\n.visible .entry k() { ret; }\n"));
  conf::info("kernel.load_newer_isa",
             cuModuleLoadData(&m, ".version 9.9\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n"));
  conf::info("kernel.load_unresolved_extern",
             cuModuleLoadData(&m, ".version 8.0\n.target sm_90\n.address_size 64\n.extern .global .u32 x;\n"
                                  ".visible .entry k(.param .u64 p) { .reg .b32 %r<2>; ld.global.u32 %r1, [x]; ret; }\n"));
  // The JIT log sizes written back.
  char info_log[256] = {0}, error_log[256] = {0};
  CUjit_option o[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                      CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* v[] = {info_log, reinterpret_cast<void*>(uintptr_t{256}), error_log, reinterpret_cast<void*>(uintptr_t{256})};
  conf::info("kernel.load_malformed", cuModuleLoadDataEx(&m, ".version 8.0\n.target sm_90\n{", 4, o, v));
  conf::info_value("kernel.malformed_error_log_size", static_cast<long long>(reinterpret_cast<uintptr_t>(v[3])));
  conf::info_value("kernel.malformed_error_log_strlen", static_cast<long long>(std::strlen(error_log)));
}

CONF_TEST(KernelLibraryEdges) {
  CUlibrary lib;
  ASSERT_CU(cuLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUmodule m;
  ASSERT_CU(cuLibraryGetModule(&m, lib));
  EXPECT_CU(CUDA_ERROR_NOT_PERMITTED, cuModuleUnload(m));
  CUdeviceptr d;
  size_t n;
  conf::info("kernel.library_managed_of_plain_global", cuLibraryGetManaged(&d, &n, lib, "gv"));
  CUkernel k;
  ASSERT_CU(cuLibraryGetKernel(&k, lib, "store_tid"));
  unsigned count = 0;
  ASSERT_CU(cuLibraryGetKernelCount(&count, lib));
  conf::info_value("kernel.library_kernel_count", count);
  ASSERT_CU(cuMemAlloc(&d, 64 * 4));
  void* args[] = {&d};
  EXPECT_CU(CUDA_SUCCESS, cuLaunchKernel(reinterpret_cast<CUfunction>(k), 1, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  ASSERT_CU(cuMemFree(d));
  ASSERT_CU(cuLibraryUnload(lib));
  // Driver 580 crashes on a second unload; cucpu returns INVALID_HANDLE.
  if (conf::on_cucpu()) conf::info("kernel.library_unload_twice", cuLibraryUnload(lib));
}

CONF_TEST(KernelLinkerEdges) {
  CUlinkState ls;
  ASSERT_CU(cuLinkCreate(0, nullptr, nullptr, &ls));
  void* cubin;
  size_t size;
  conf::info("kernel.link_complete_empty", cuLinkComplete(ls, &cubin, &size));
  ASSERT_CU(cuLinkDestroy(ls));
  ASSERT_CU(cuLinkCreate(0, nullptr, nullptr, &ls));
  const char ext[] = ".version 8.0\n.target sm_90\n.address_size 64\n.extern .global .align 4 .u32 x;\n"
                     ".visible .entry k(.param .u64 p) { .reg .b32 %r<2>; ld.global.u32 %r1, [x]; ret; }\n";
  conf::info("kernel.link_add_extern", cuLinkAddData(ls, CU_JIT_INPUT_PTX, const_cast<char*>(ext), sizeof ext,
                                                     "a", 0, nullptr, nullptr));
  conf::info("kernel.link_complete_unresolved", cuLinkComplete(ls, &cubin, &size));
  ASSERT_CU(cuLinkDestroy(ls));
}

// Faults run in a context of their own (theirs stays faulted); on the driver
// each test is a process of its own as well.
static void fault_probe(const char* key, const char* entry, CUdeviceptr arg, bool with_arg) {
  CUcontext c;
  ASSERT_CU(cuCtxCreate(&c, nullptr, 0, 0));
  {
    Loaded l;
    CUfunction f;
    ASSERT_CU(cuModuleGetFunction(&f, l.mod, entry));
    void* args[] = {&arg};
    ASSERT_CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, with_arg ? args : nullptr, nullptr));
    conf::info(key, cuCtxSynchronize());
    CUdeviceptr d;
    conf::info((std::string(key) + "_then_alloc").c_str(), cuMemAlloc(&d, 16));
  }
  cuCtxDestroy(c);
  cuCtxSetCurrent(conf::primary());
}

// A fault poisons the process: each probe runs in a child (kernels_util.h).
CONF_TEST(KernelFaultTrap) { kt::run_in_child("FaultChildProbeTrap"); }
CONF_TEST(KernelFaultIllegalAddress) { kt::run_in_child("FaultChildProbeIllegalAddress"); }
CONF_TEST(KernelFaultMisaligned) { kt::run_in_child("FaultChildProbeMisaligned"); }
CONF_TEST(FaultChildProbeTrap) {
  if (!kt::in_fault_child()) throw conf::Skip{"runs in a child process of KernelFaultTrap"};
  fault_probe("kernel.fault_trap", "trap_k", 0, false);
}
CONF_TEST(FaultChildProbeIllegalAddress) {
  if (!kt::in_fault_child()) throw conf::Skip{"runs in a child process of KernelFaultIllegalAddress"};
  fault_probe("kernel.fault_wild_store", "wild", 0x10, true);
}
CONF_TEST(FaultChildProbeMisaligned) {
  if (!kt::in_fault_child()) throw conf::Skip{"runs in a child process of KernelFaultMisaligned"};
  CUdeviceptr d;
  ASSERT_CU(cuMemAlloc(&d, 64));
  fault_probe("kernel.fault_misaligned", "misaligned", d, true);
  cuMemFree(d);
}
