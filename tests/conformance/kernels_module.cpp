// Module and function API behaviour on tests/kernels/module_api.cu (ten
// kernels; globals g_int, g_arr, g_const): lookups, counts, attributes,
// parameter layout, loading from files and fatbins, the library API, and
// what loading malformed images returns.
#include <algorithm>
#include <cstring>
#include <set>

#include "kernels_util.h"

namespace {
const char* const kKernels[] = {"static_smem", "bounded", "dyn_smem",  "param_layout", "delayed_store",
                                "scale_copy",  "add_one", "no_params", "uses_local",   "uses_const"};
const char* kModulePtx = "ptx/module_api.sm90.ptx";

int attr(CUfunction f, CUfunction_attribute a) {
  int v = -1;
  ASSERT_CU(cuFuncGetAttribute(&v, a, f));
  return v;
}

int device_attr(CUdevice_attribute a) {
  CUdevice d;
  int v = -1;
  ASSERT_CU(cuDeviceGet(&d, 0));
  ASSERT_CU(cuDeviceGetAttribute(&v, a, d));
  return v;
}
}  // namespace

CONF_TEST(ModuleGetFunctionFindsOnlyKernels) {
  kt::Module m(kModulePtx);
  CUfunction f = nullptr;
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, m.mod, "no_such_kernel"));
  // Device functions and globals are not kernels.
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, m.mod, "g_int"));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleGetFunction(nullptr, m.mod, "add_one"));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleGetFunction(&f, m.mod, nullptr));
  ASSERT_CU(cuModuleGetFunction(&f, m.mod, "add_one"));
  EXPECT_TRUE(f != nullptr);
}

CONF_TEST(ModuleGlobalsHaveTheirSizesAndACopyPerLoad) {
  kt::Module m(kModulePtx);
  size_t bytes = 0;
  CUdeviceptr p = 0;
  ASSERT_CU(cuModuleGetGlobal(&p, &bytes, m.mod, "g_int"));
  EXPECT_TRUE(p != 0 && bytes == 4);
  int v = 0;
  ASSERT_CU(cuMemcpyDtoH(&v, p, 4));
  EXPECT_TRUE(v == 17);
  ASSERT_CU(cuModuleGetGlobal(nullptr, &bytes, m.mod, "g_arr"));
  EXPECT_TRUE(bytes == 80);
  CUdeviceptr pc = 0;
  ASSERT_CU(cuModuleGetGlobal(&pc, nullptr, m.mod, "g_const"));
  EXPECT_TRUE(pc != 0 && pc != p);
  ASSERT_CU(cuModuleGetGlobal(&pc, &bytes, m.mod, "g_const"));
  EXPECT_TRUE(bytes == 100);
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetGlobal(&p, &bytes, m.mod, "missing_global"));
  // A kernel's name is no global; the driver calls that an invalid value.
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleGetGlobal(&p, &bytes, m.mod, "add_one"));
  // Each load of a module has its own copy of its globals.
  kt::Module m2(kModulePtx);
  CUdeviceptr p2 = 0;
  ASSERT_CU(cuModuleGetGlobal(&p2, &bytes, m2.mod, "g_int"));
  EXPECT_TRUE(p2 != p);
}

CONF_TEST(ModuleCountsAndEnumeratesAllItsKernels) {
  kt::Module m(kModulePtx);
  unsigned count = 0;
  ASSERT_CU(cuModuleGetFunctionCount(&count, m.mod));
  EXPECT_TRUE(count == 10);
  std::vector<CUfunction> fs(10, nullptr);
  ASSERT_CU(cuModuleEnumerateFunctions(fs.data(), 10, m.mod));
  std::set<std::string> names, want(std::begin(kKernels), std::end(kKernels));
  for (CUfunction f : fs) {
    const char* name = nullptr;
    ASSERT_CU(cuFuncGetName(&name, f));
    EXPECT_TRUE(name != nullptr);
    names.insert(name);
    CUmodule owner = nullptr;
    ASSERT_CU(cuFuncGetModule(&owner, f));
    EXPECT_TRUE(owner == m.mod);
  }
  EXPECT_TRUE(names == want);
  CUfunction f = m.fn("param_layout");
  const char* name = nullptr;
  ASSERT_CU(cuFuncGetName(&name, f));
  EXPECT_TRUE(std::strcmp(name, "param_layout") == 0);
}

CONF_TEST(FuncAttributesDeterministic) {
  kt::for_each_variant("module_api", [&](kt::Module& m) {
    const bool sm90 = m.image.find("sm90") != std::string::npos;
    CUfunction st = m.fn("static_smem"), bd = m.fn("bounded"), add = m.fn("add_one"), loc = m.fn("uses_local"),
               cst = m.fn("uses_const");
    EXPECT_TRUE(attr(st, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) == 4096);
    EXPECT_TRUE(attr(add, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) == 0);
    EXPECT_TRUE(attr(bd, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 128);
    EXPECT_TRUE(attr(add, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 1024);
    int ptx = attr(add, CU_FUNC_ATTRIBUTE_PTX_VERSION), bin = attr(add, CU_FUNC_ATTRIBUTE_BINARY_VERSION);
    conf::info_value(sm90 ? "func_ptx_version_sm90" : "func_ptx_version_sm75", ptx);
    conf::info_value("func_binary_version", bin);
    // PTX_VERSION is the PTX's target (sm_90 or sm_75); BINARY_VERSION the
    // device's architecture the code was compiled for.
    EXPECT_TRUE(ptx == (sm90 ? 90 : 75));
    int cc = device_attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
             device_attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    EXPECT_TRUE(bin == cc);
    EXPECT_TRUE(attr(add, CU_FUNC_ATTRIBUTE_NUM_REGS) > 0);
    int local = attr(loc, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES), cbytes = attr(cst, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
    conf::info_value("func_local_size_uses_local", local);
    conf::info_value("func_const_size_uses_const", cbytes);
    conf::info_value("func_num_regs_add_one", attr(add, CU_FUNC_ATTRIBUTE_NUM_REGS));
    conf::info_value("func_local_size_add_one", attr(add, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES));
    EXPECT_TRUE(local == 256);  // the 64-int local array
    EXPECT_TRUE(attr(add, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) == 0);
    EXPECT_TRUE(cbytes == 100);  // g_const
    int dyn_st = attr(st, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    int dyn_add = attr(add, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    conf::info_value("func_max_dynamic_shared_default_static4k", dyn_st);
    conf::info_value("func_max_dynamic_shared_default", dyn_add);
    // 48 KiB by default, less the function's static shared memory.
    EXPECT_TRUE(dyn_add == 49152 && dyn_st == 49152 - 4096);
    int v = -1;
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuFuncGetAttribute(&v, (CUfunction_attribute)9999, add));
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, add));
  });
}

CONF_TEST(FuncMaxDynamicSharedStopsAtTheOptInLessStatic) {
  kt::Module m(kModulePtx);
  CUfunction f = m.fn("dyn_smem"), st = m.fn("static_smem");
  const int optin = device_attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  conf::info_value("device_max_shared_per_block_optin", optin);
  ASSERT_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
  EXPECT_TRUE(attr(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 65536);
  ASSERT_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 1));
  // The static 4 KiB count against the opt-in limit.
  CUresult r = cuFuncSetAttribute(st, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
  conf::info("func_set_max_dynamic_shared_optin_with_static", r);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, r);
  EXPECT_CU(CUDA_SUCCESS, cuFuncSetAttribute(st, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - 4096));
  ASSERT_CU(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_SHARED));
  ASSERT_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
  EXPECT_TRUE(attr(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) == 50);
}

CONF_TEST(FuncParamInfoGivesEachParametersOffsetAndSize) {
  kt::Module m(kModulePtx);
  CUfunction f = m.fn("param_layout");
  const size_t offs[] = {0, 8, 16, 24, 48}, sizes[] = {1, 8, 8, 24, 2};
  for (size_t i = 0; i < 5; ++i) {
    size_t o = 99, s = 99;
    ASSERT_CU(cuFuncGetParamInfo(f, i, &o, &s));
    if (o != offs[i] || s != sizes[i])
      throw conf::Failure{"param " + std::to_string(i) + ": offset " + std::to_string(o) + " size " +
                          std::to_string(s)};
  }
  size_t o = 0, s = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(f, 5, &o, &s));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(m.fn("no_params"), 0, &o, &s));
}

CONF_TEST(ModuleLoadsFromAFileAndFromAFatbin) {
  const std::string dir = kt::kernels_dir();
  CUmodule mod = nullptr;
  ASSERT_CU(cuModuleLoad(&mod, (dir + "/" + kModulePtx).c_str()));
  CUfunction f = nullptr;
  ASSERT_CU(cuModuleGetFunction(&f, mod, "add_one"));
  kt::Buf<int32_t> buf(std::vector<int32_t>{1, 2, 3, 4});
  kt::run(f, {1}, {32}, 0, buf.p, 4);
  EXPECT_TRUE((buf.get() == std::vector<int32_t>{2, 3, 4, 5}));
  ASSERT_CU(cuModuleUnload(mod));
  EXPECT_CU(CUDA_ERROR_FILE_NOT_FOUND, cuModuleLoad(&mod, (dir + "/ptx/does_not_exist.ptx").c_str()));
  // A fatbin (sm_90 SASS + compute_90 PTX), through both entry points.
  std::vector<char> fat = kt::read_image("fatbin/module_api.sm90.fatbin");
  for (int way = 0; way < 2; ++way) {
    CUresult r = way ? cuModuleLoadFatBinary(&mod, fat.data()) : cuModuleLoadData(&mod, fat.data());
    if (r != CUDA_SUCCESS)
      throw conf::Failure{kt::cu_fail(way ? "cuModuleLoadFatBinary" : "cuModuleLoadData(fatbin)", r)};
    ASSERT_CU(cuModuleGetFunction(&f, mod, "add_one"));
    kt::run(f, {1}, {32}, 0, buf.p, 4);
    unsigned count = 0;
    ASSERT_CU(cuModuleGetFunctionCount(&count, mod));
    EXPECT_TRUE(count == 10);
    ASSERT_CU(cuModuleUnload(mod));
  }
  EXPECT_TRUE((buf.get() == std::vector<int32_t>{4, 5, 6, 7}));
}

CONF_TEST(FatbinKernelsRun) {
  kt::Module m("fatbin/algos.sm90.fatbin");
  const int n = 1000;
  std::vector<float> x(n), y(n), want(n);
  for (int i = 0; i < n; ++i) {
    x[i] = (float)(i % 97) * 0.5f;
    y[i] = (float)(i % 13);
    want[i] = 3.0f * x[i] + y[i];
  }
  kt::Buf<float> dx(x), dy(y);
  kt::run(m.fn("saxpy"), {(n + 127) / 128}, {128}, 0, 3.0f, dx.p, dy.p, n);
  kt::Checker ck("saxpy from a fatbin");
  ck.all(dy.get(), want, "y");
  ck.done();
}

CONF_TEST(LibraryFromPtxGivesKernelsGlobalsAndAModule) {
  std::vector<char> ptx = kt::read_image(kModulePtx);
  CUlibrary lib = nullptr;
  CUresult r = cuLibraryLoadData(&lib, ptx.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (r != CUDA_SUCCESS) throw conf::Failure{kt::cu_fail("cuLibraryLoadData", r)};
  unsigned count = 0;
  ASSERT_CU(cuLibraryGetKernelCount(&count, lib));
  EXPECT_TRUE(count == 10);
  CUkernel k = nullptr;
  ASSERT_CU(cuLibraryGetKernel(&k, lib, "add_one"));
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuLibraryGetKernel(&k, lib, "missing"));
  ASSERT_CU(cuLibraryGetKernel(&k, lib, "add_one"));
  CUfunction f = nullptr;
  ASSERT_CU(cuKernelGetFunction(&f, k));
  const char* name = nullptr;
  ASSERT_CU(cuKernelGetName(&name, k));
  EXPECT_TRUE(name && std::strcmp(name, "add_one") == 0);
  kt::Buf<int32_t> buf(std::vector<int32_t>{10, 20});
  kt::run(f, {1}, {2}, 0, buf.p, 2);
  // A CUkernel is also launchable as a CUfunction in the current context.
  kt::run(reinterpret_cast<CUfunction>(k), {1}, {2}, 0, buf.p, 2);
  EXPECT_TRUE((buf.get() == std::vector<int32_t>{12, 22}));
  CUdeviceptr g = 0;
  size_t bytes = 0;
  ASSERT_CU(cuLibraryGetGlobal(&g, &bytes, lib, "g_int"));
  EXPECT_TRUE(g != 0 && bytes == 4);
  CUmodule mod = nullptr;
  ASSERT_CU(cuLibraryGetModule(&mod, lib));
  EXPECT_TRUE(mod != nullptr);
  ASSERT_CU(cuLibraryUnload(lib));
}

// Library options as cuBLASLt passes them: "binary is preserved" with no
// values array (the option takes no value); another option needs one.
CONF_TEST(LibraryOptionBinaryIsPreservedNeedsNoValue) {
  std::vector<char> ptx = kt::read_image(kModulePtx);
  CUlibraryOption preserved = CU_LIBRARY_BINARY_IS_PRESERVED;
  CUlibrary lib = nullptr;
  const CUresult r = cuLibraryLoadData(&lib, ptx.data(), nullptr, nullptr, 0, &preserved, nullptr, 1);
  conf::info("library.binary_is_preserved_without_values", r);
  EXPECT_CU(CUDA_SUCCESS, r);
  if (r == CUDA_SUCCESS) {
    CUkernel k = nullptr;
    EXPECT_CU(CUDA_SUCCESS, cuLibraryGetKernel(&k, lib, "add_one"));
    ASSERT_CU(cuLibraryUnload(lib));
  }
  // Options counted and not given: driver 580 crashes (H100); cucpu refuses.
  if (conf::on_cucpu())
    EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLibraryLoadData(&lib, ptx.data(), nullptr, nullptr, 0, nullptr, nullptr, 1));
}

namespace {
CUresult load_text(const std::string& text) {
  CUmodule m = nullptr;
  CUresult r = cuModuleLoadData(&m, text.c_str());
  if (r == CUDA_SUCCESS) cuModuleUnload(m);
  return r;
}
const char* kHeader = ".version 8.0\n.target sm_90\n.address_size 64\n";
}  // namespace

// Malformed images fail with the code the real driver gives (each also
// recorded as INFO).
CONF_TEST(MalformedModulesFailWithTheDriversCodes) {
  std::vector<char> ptx = kt::read_image(kModulePtx);
  struct Case {
    const char* key;
    std::string text;
    CUresult expected;
  };
  std::string garbage;
  kt::Rng rng(1001);
  for (int i = 0; i < 4096; ++i) garbage.push_back((char)(1 + rng.u32() % 255));
  // Expected: what NVIDIA's driver 580 returns.
  const Case cases[] = {
      {"load_garbage", garbage, CUDA_ERROR_INVALID_IMAGE},
      {"load_truncated_ptx", std::string(ptx.data(), ptx.size() * 3 / 5), CUDA_ERROR_INVALID_PTX},
      {"load_syntax_error_ptx", std::string(kHeader) + ".visible .entry broken() {\n  bogus.instruction %r1;\n}\n",
       CUDA_ERROR_INVALID_PTX},
      {"load_undefined_register_ptx",
       std::string(kHeader) + ".visible .entry k() {\n  add.s32 %r1, %r2, 1;\n  ret;\n}\n", CUDA_ERROR_INVALID_PTX},
      {"load_ptx_version_99", ".version 99.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n",
       CUDA_ERROR_UNSUPPORTED_PTX_VERSION},
      {"load_ptx_target_sm_100", ".version 8.7\n.target sm_100a\n.address_size 64\n.visible .entry k() { ret; }\n",
       CUDA_ERROR_INVALID_PTX},
      {"load_empty_string", std::string(), CUDA_ERROR_INVALID_IMAGE},
      // An instruction the PTX ISA does not have, its operands otherwise fine.
      {"load_unknown_instruction_ptx",
       std::string(kHeader) + ".visible .entry k() {\n  .reg .b32 %r<2>;\n  frob.u32 %r1, 5;\n  ret;\n}\n",
       CUDA_ERROR_INVALID_PTX},
  };
  std::string bad;
  for (const Case& c : cases) {
    CUresult r = load_text(c.text);
    conf::info(c.key, r);
    if (r != c.expected) bad += std::string(" ") + c.key + "=" + conf::name_of(r);
  }
  if (!bad.empty()) throw conf::Failure{"unexpected load results:" + bad};
  CUmodule m = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleLoadData(&m, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleLoadData(nullptr, ptx.data()));
  // A minimal valid module loads, and the context still works after the failures.
  ASSERT_CU(load_text(std::string(kHeader) + ".visible .entry k() { ret; }\n"));
}

CONF_TEST(ModuleLoadExFillsTheErrorLog) {
  const std::string bad = std::string(kHeader) + ".visible .entry broken() {\n  bogus.instruction %r1;\n}\n";
  char log[4096] = {0};
  char info_log[4096] = {0};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                         CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof log)), info_log,
                  reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof info_log))};
  CUmodule m = nullptr;
  CUresult r = cuModuleLoadDataEx(&m, bad.c_str(), 4, opts, vals);
  conf::info("load_ex_syntax_error", r);
  EXPECT_CU(CUDA_ERROR_INVALID_PTX, r);
  conf::info_value("load_ex_error_log_length", (long long)std::strlen(log));
  std::string text = std::string(log).substr(0, 200);
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::printf("INFO load_ex_error_log_text %s\n", text.c_str());
  EXPECT_TRUE(std::strlen(log) > 0);
  // A good module through the Ex entry point with the same options.
  std::vector<char> ptx = kt::read_image(kModulePtx);
  ASSERT_CU(cuModuleLoadDataEx(&m, ptx.data(), 4, opts, vals));
  ASSERT_CU(cuModuleUnload(m));
}

// A fatbin whose only PTX targets a newer architecture than the device's
// holds no image for it: NO_BINARY_FOR_GPU from cuModuleLoadData and
// cuModuleLoadFatBinary alike, as driver 580 answers on an sm_90 device
// (PTX text with such a target is INVALID_PTX: MalformedModulesFailWithTheDriversCodes).
// A device of compute capability 10.0 or later runs the image: skipped.
CONF_TEST(ModuleFatbinWithOnlyNewerPtxHasNoBinaryForTheDevice) {
  if (device_attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) >= 10)
    throw conf::Skip{"the device runs compute_100 PTX (run with CUCPU_ARCH=sm_90)"};
  const std::vector<char> image = kt::read_image("fatbin/module_api.compute100.fatbin");
  CUmodule m = nullptr;
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, cuModuleLoadData(&m, image.data()));
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, cuModuleLoadFatBinary(&m, image.data()));
}
