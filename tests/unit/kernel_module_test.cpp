// Modules, functions, libraries and occupancy through the C API, with
// programs of the fake compiler (fake_kernel.h).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "api_context_test.h"
#include "core/context.h"
#include "fake_kernel.h"

namespace cucpu::test {
namespace {

devrt::Fault no_fault(const devrt::LaunchConfig&, uint64_t, uint64_t) { return {}; }

ptx::GlobalDesc global(const std::string& name, uint64_t size, std::vector<uint8_t> init = {}) {
  ptx::GlobalDesc g;
  g.name = name;
  g.size = size;
  g.align = 8;
  g.init = std::move(init);
  return g;
}

// Copies globals()[0] (4 bytes) to the buffer in parameter 0.
devrt::Fault read_global(const devrt::LaunchConfig& cfg, uint64_t, uint64_t) {
  std::memcpy(param<void*>(cfg, 0), cfg.globals[0], 4);
  return {};
}

class Modules : public ApiContextTest {
 protected:
  Context* ctx() { return reinterpret_cast<Context*>(ctx_); }
};

TEST_F(Modules, FunctionsAndGlobalsAreFoundAndGoWithTheModule) {
  auto p = std::make_shared<FakeProgram>();
  p->add("read", 1, read_global).add("other", 0, no_fault);
  p->add_global(global("counter", 4, {7, 0, 0, 0}));
  ptx::GlobalDesc ptr = global("ptr", 8);
  ptr.relocs.push_back({0, 0, 2});  // &counter + 2
  p->add_global(ptr);
  ptx::GlobalDesc managed = global("m", 16);
  managed.managed = true;
  p->add_global(managed);
  CUmodule m = load_fake(p, ctx());
  ASSERT_NE(m, nullptr);

  CUdeviceptr dp, pp;
  size_t bytes = 0;
  ASSERT_EQ(cuModuleGetGlobal(&dp, &bytes, m, "counter"), CUDA_SUCCESS);
  EXPECT_EQ(bytes, 4u);
  ASSERT_EQ(cuModuleGetGlobal(&pp, nullptr, m, "ptr"), CUDA_SUCCESS);
  uint64_t stored;
  ASSERT_EQ(cuMemcpyDtoH(&stored, pp, 8), CUDA_SUCCESS);
  EXPECT_EQ(stored, dp + 2);
  EXPECT_EQ(cuModuleGetGlobal(&dp, &bytes, m, "missing"), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(cuModuleGetGlobal(&dp, &bytes, m, nullptr), CUDA_ERROR_INVALID_VALUE);

  // Device memory as far as the pointer queries go, but not cuMemFree's.
  ASSERT_EQ(cuModuleGetGlobal(&dp, nullptr, m, "counter"), CUDA_SUCCESS);
  unsigned type = 0;
  ASSERT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dp), CUDA_SUCCESS);
  EXPECT_EQ(type, static_cast<unsigned>(CU_MEMORYTYPE_DEVICE));
  CUdeviceptr mp;
  ASSERT_EQ(cuModuleGetGlobal(&mp, nullptr, m, "m"), CUDA_SUCCESS);
  unsigned is_managed = 0;
  ASSERT_EQ(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, mp), CUDA_SUCCESS);
  EXPECT_EQ(is_managed, 1u);
  EXPECT_EQ(cuMemFree(dp), CUDA_ERROR_INVALID_VALUE);

  // A kernel reads the variable a copy wrote.
  int v = 42, out = 0;
  ASSERT_EQ(cuMemcpyHtoD(dp, &v, 4), CUDA_SUCCESS);
  CUfunction f;
  ASSERT_EQ(cuModuleGetFunction(&f, m, "read"), CUDA_SUCCESS);
  void* o = &out;
  void* args[] = {&o};
  ASSERT_EQ(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(out, 42);

  unsigned count = 0;
  ASSERT_EQ(cuModuleGetFunctionCount(&count, m), CUDA_SUCCESS);
  EXPECT_EQ(count, 2u);
  CUfunction fs[3] = {};
  ASSERT_EQ(cuModuleEnumerateFunctions(fs, 3, m), CUDA_SUCCESS);
  EXPECT_EQ(fs[0], f);
  CUfunctionLoadingState st;
  ASSERT_EQ(cuFuncIsLoaded(&st, fs[1]), CUDA_SUCCESS);
  EXPECT_EQ(st, CU_FUNCTION_LOADING_STATE_UNLOADED);
  ASSERT_EQ(cuFuncLoad(fs[1]), CUDA_SUCCESS);
  ASSERT_EQ(cuFuncIsLoaded(&st, fs[1]), CUDA_SUCCESS);
  EXPECT_EQ(st, CU_FUNCTION_LOADING_STATE_LOADED);
  const char* name = nullptr;
  ASSERT_EQ(cuFuncGetName(&name, fs[1]), CUDA_SUCCESS);
  EXPECT_STREQ(name, "other");
  CUmodule back;
  ASSERT_EQ(cuFuncGetModule(&back, f), CUDA_SUCCESS);
  EXPECT_EQ(back, m);
  size_t off = 9, size = 9;
  ASSERT_EQ(cuFuncGetParamInfo(f, 0, &off, &size), CUDA_SUCCESS);
  EXPECT_EQ(off, 0u);
  EXPECT_EQ(size, 8u);
  EXPECT_EQ(cuFuncGetParamInfo(f, 1, &off, &size), CUDA_ERROR_INVALID_VALUE);

  CUfunction missing;
  EXPECT_EQ(cuModuleGetFunction(&missing, m, "nope"), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(cuModuleGetFunction(&missing, m, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuModuleGetFunction(nullptr, m, "read"), CUDA_ERROR_INVALID_VALUE);

  ASSERT_EQ(cuModuleUnload(m), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleGetFunction(&missing, m, "read"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncGetName(&name, f), CUDA_ERROR_INVALID_HANDLE);
  // The variables went with the module.
  unsigned long long id;
  EXPECT_EQ(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, dp), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(Modules, ExternVariablesResolveAcrossUnits) {
  auto a = std::make_shared<FakeProgram>();
  a->add("k", 0, no_fault);
  ptx::GlobalDesc ext = global("shared_var", 4);
  ext.is_extern = true;
  a->add_global(ext);
  auto b = std::make_shared<FakeProgram>();
  b->add_global(global("shared_var", 4, {1, 2, 3, 4}));
  Module* m;
  std::string log;
  ASSERT_EQ(Module::create(ctx(), {a, b}, nullptr, &m, &log), CUDA_SUCCESS);
  EXPECT_EQ(m->units()[0].globals[0], m->units()[1].globals[0]);
  EXPECT_EQ(cuModuleUnload(reinterpret_cast<CUmodule>(m)), CUDA_SUCCESS);
  // Alone, the extern is unresolved: driver 580 loads it anyway, and the
  // variable has no memory.
  ASSERT_EQ(Module::create(ctx(), {a}, nullptr, &m, &log), CUDA_SUCCESS);
  EXPECT_EQ(m->units()[0].globals[0], nullptr);
  EXPECT_EQ(cuModuleUnload(reinterpret_cast<CUmodule>(m)), CUDA_SUCCESS);
}

TEST_F(Modules, CompileFailureIsInvalidPtx) {
  auto p = std::make_shared<FakeProgram>();
  p->add("bad", 0, no_fault).refuse(0);
  CUmodule m = load_fake(p, ctx());
  CUfunction f;
  EXPECT_EQ(cuModuleGetFunction(&f, m, "bad"), CUDA_ERROR_INVALID_PTX);
  EXPECT_EQ(cuModuleUnload(m), CUDA_SUCCESS);
}

TEST_F(Modules, ContextDestroyTakesItsModules) {
  CUcontext other;
  ASSERT_EQ(cuCtxCreate(&other, nullptr, 0, 0), CUDA_SUCCESS);
  auto p = std::make_shared<FakeProgram>();
  p->add("k", 0, no_fault).add_global(global("g", 64));
  CUmodule m = load_fake(p, reinterpret_cast<Context*>(other));
  CUdeviceptr g;
  ASSERT_EQ(cuModuleGetGlobal(&g, nullptr, m, "g"), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxDestroy(other), CUDA_SUCCESS);
  CUfunction f;
  EXPECT_EQ(cuModuleGetFunction(&f, m, "k"), CUDA_ERROR_INVALID_HANDLE);
  unsigned long long id;
  EXPECT_EQ(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, g), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(Modules, FunctionAttributesAndOccupancyFollowTheKernelInfo) {
  auto p = std::make_shared<FakeProgram>();
  ptx::KernelInfo info;
  info.num_regs = 32;
  info.static_shared_bytes = 4096;
  info.local_bytes = 16;
  info.const_bytes = 128;
  info.max_threads_per_block = 512;
  info.ptx_version = 80;
  p->add("k", 0, no_fault, info);
  CUmodule m = load_fake(p, ctx());
  CUfunction f;
  ASSERT_EQ(cuModuleGetFunction(&f, m, "k"), CUDA_SUCCESS);
  auto get = [&](CUfunction_attribute a) {
    int v = -7;
    EXPECT_EQ(cuFuncGetAttribute(&v, a, f), CUDA_SUCCESS);
    return v;
  };
  EXPECT_EQ(get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 512);
  EXPECT_EQ(get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), 4096);
  EXPECT_EQ(get(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES), 128);
  EXPECT_EQ(get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES), 16);
  EXPECT_EQ(get(CU_FUNC_ATTRIBUTE_NUM_REGS), 32);
  EXPECT_EQ(get(CU_FUNC_ATTRIBUTE_PTX_VERSION), 80);
  int major = 0, minor = 0, threads_per_sm = 0;
  ASSERT_EQ(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGetAttribute(&threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(get(CU_FUNC_ATTRIBUTE_BINARY_VERSION), major * 10 + minor);  // the device's own architecture
  EXPECT_EQ(get(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 48 * 1024 - 4096);
  EXPECT_EQ(get(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), -1);
  int v;
  EXPECT_EQ(cuFuncGetAttribute(&v, static_cast<CUfunction_attribute>(99), f), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS, 3), CUDA_ERROR_INVALID_VALUE);  // read-only
  EXPECT_EQ(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50), CUDA_SUCCESS);
  EXPECT_EQ(get(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), 50);
  EXPECT_EQ(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_SHARED), CUDA_SUCCESS);
  EXPECT_EQ(cuFuncSetCacheConfig(f, static_cast<CUfunc_cache>(9)), CUDA_ERROR_INVALID_VALUE);

  // Occupancy with 512 threads per block: as many as the SM's threads hold
  // (registers and shared memory leave room for them).
  int blocks = 0;
  ASSERT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 512, 0), CUDA_SUCCESS);
  EXPECT_EQ(blocks, threads_per_sm / 512);
  ASSERT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 1024, 0), CUDA_SUCCESS);
  EXPECT_EQ(blocks, threads_per_sm / 1024);  // above the kernel's limit, driver 580 answers as for any kernel
  EXPECT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, f, 128, 0, 4), CUDA_ERROR_INVALID_VALUE);
  int min_grid = 0, block = 0;
  ASSERT_EQ(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, nullptr, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(block, 512);
  int workers = 0;
  ASSERT_EQ(cuDeviceGetAttribute(&workers, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0), CUDA_SUCCESS);
  EXPECT_EQ(min_grid, threads_per_sm / 512 * workers);
  ASSERT_EQ(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, [](int b) -> size_t { return b * 64; }, 0, 0),
            CUDA_SUCCESS);
  EXPECT_GT(block, 0);
  size_t smem = 0;
  ASSERT_EQ(cuOccupancyAvailableDynamicSMemPerBlock(&smem, f, 2, 256), CUDA_SUCCESS);
  EXPECT_EQ(smem, 49152u - 4096);  // capped by what a launch may ask for without the opt-in
  EXPECT_EQ(cuModuleUnload(m), CUDA_SUCCESS);
}

TEST_F(Modules, LibrariesLoadAModulePerContext) {
  auto p = std::make_shared<FakeProgram>();
  p->add("read", 1, read_global).add("two", 0, no_fault);
  p->add_global(global("v", 4, {5, 0, 0, 0}));
  ptx::GlobalDesc man = global("mv", 4);
  man.managed = true;
  p->add_global(man);
  Library* lib = library_pool().create(std::vector<std::shared_ptr<ptx::Program>>{p});
  CUlibrary l = reinterpret_cast<CUlibrary>(lib);

  unsigned count = 0;
  ASSERT_EQ(cuLibraryGetKernelCount(&count, l), CUDA_SUCCESS);
  EXPECT_EQ(count, 2u);
  CUkernel k;
  ASSERT_EQ(cuLibraryGetKernel(&k, l, "read"), CUDA_SUCCESS);
  EXPECT_EQ(cuLibraryGetKernel(&k, l, "none"), CUDA_ERROR_NOT_FOUND);
  ASSERT_EQ(cuLibraryGetKernel(&k, l, "read"), CUDA_SUCCESS);
  const char* name;
  ASSERT_EQ(cuKernelGetName(&name, k), CUDA_SUCCESS);
  EXPECT_STREQ(name, "read");
  CUlibrary back;
  ASSERT_EQ(cuKernelGetLibrary(&back, k), CUDA_SUCCESS);
  EXPECT_EQ(back, l);

  CUfunction f1;
  ASSERT_EQ(cuKernelGetFunction(&f1, k), CUDA_SUCCESS);
  CUmodule m1;
  ASSERT_EQ(cuLibraryGetModule(&m1, l), CUDA_SUCCESS);
  CUmodule fm;
  ASSERT_EQ(cuFuncGetModule(&fm, f1), CUDA_SUCCESS);
  EXPECT_EQ(fm, m1);
  EXPECT_EQ(cuModuleUnload(m1), CUDA_ERROR_NOT_PERMITTED);

  CUdeviceptr v;
  size_t bytes;
  ASSERT_EQ(cuLibraryGetGlobal(&v, &bytes, l, "v"), CUDA_SUCCESS);
  EXPECT_EQ(bytes, 4u);
  EXPECT_EQ(cuLibraryGetManaged(&v, &bytes, l, "v"), CUDA_ERROR_NOT_FOUND);
  CUdeviceptr mv;
  ASSERT_EQ(cuLibraryGetManaged(&mv, &bytes, l, "mv"), CUDA_SUCCESS);

  // A CUkernel passed as a CUfunction launches the current context's function.
  int out = 0;
  void* o = &out;
  void* args[] = {&o};
  ASSERT_EQ(cuLaunchKernel(reinterpret_cast<CUfunction>(k), 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr),
            CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(out, 5);

  // Kernel attributes apply to the kernel's functions on that device.
  ASSERT_EQ(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536, k, 0), CUDA_SUCCESS);
  int a = 0;
  ASSERT_EQ(cuFuncGetAttribute(&a, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f1), CUDA_SUCCESS);
  EXPECT_EQ(a, 65536);
  ASSERT_EQ(cuKernelGetAttribute(&a, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, 0), CUDA_SUCCESS);
  EXPECT_EQ(a, 65536);
  EXPECT_EQ(cuKernelGetAttribute(&a, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 5), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1, 0), CUDA_SUCCESS);
  size_t off;
  ASSERT_EQ(cuKernelGetParamInfo(k, 0, &off, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuKernelGetParamInfo(k, 1, &off, nullptr), CUDA_ERROR_INVALID_VALUE);

  // Another context gets a module of its own, with the kernel's settings.
  CUcontext other;
  ASSERT_EQ(cuCtxCreate(&other, nullptr, 0, 0), CUDA_SUCCESS);
  CUfunction f2;
  ASSERT_EQ(cuKernelGetFunction(&f2, k), CUDA_SUCCESS);
  EXPECT_NE(f2, f1);
  ASSERT_EQ(cuFuncGetAttribute(&a, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f2), CUDA_SUCCESS);
  EXPECT_EQ(a, 65536);
  ASSERT_EQ(cuCtxDestroy(other), CUDA_SUCCESS);  // takes its module of the library
  EXPECT_EQ(cuFuncGetName(&name, f2), CUDA_ERROR_INVALID_HANDLE);

  ASSERT_EQ(cuLibraryUnload(l), CUDA_SUCCESS);
  EXPECT_EQ(cuKernelGetName(&name, k), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncGetName(&name, f1), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLibraryUnload(l), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuLibraryGetKernelCount(&count, l), CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(Modules, BadImagesOptionsAndHandlesAreRefused) {
  CUmodule m;
  EXPECT_EQ(cuModuleLoadData(nullptr, ".version 8.0"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuModuleLoadData(&m, nullptr), CUDA_ERROR_INVALID_VALUE);
  const unsigned char elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  EXPECT_EQ(cuModuleLoadData(&m, elf), CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_EQ(cuModuleLoad(&m, "/nonexistent/file.ptx"), CUDA_ERROR_FILE_NOT_FOUND);
  EXPECT_EQ(cuModuleLoad(&m, nullptr), CUDA_ERROR_INVALID_VALUE);
  // JIT options: the error log gets the reason.
  char log[256] = "untouched";
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_OPTIMIZATION_LEVEL};
  void* vals[] = {log, reinterpret_cast<void*>(uintptr_t{sizeof log}), reinterpret_cast<void*>(uintptr_t{3})};
  EXPECT_EQ(cuModuleLoadDataEx(&m, elf, 3, opts, vals), CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_NE(std::string(log).find("SASS"), std::string::npos);
  EXPECT_EQ(cuModuleLoadDataEx(&m, elf, 3, nullptr, vals), CUDA_ERROR_INVALID_VALUE);
  CUjit_option bad[] = {static_cast<CUjit_option>(1000)};
  EXPECT_EQ(cuModuleLoadDataEx(&m, elf, 1, bad, vals), CUDA_ERROR_INVALID_VALUE);
  CUmoduleLoadingMode mode;
  ASSERT_EQ(cuModuleGetLoadingMode(&mode), CUDA_SUCCESS);
  EXPECT_EQ(mode, CU_MODULE_LAZY_LOADING);
  EXPECT_EQ(cuModuleGetLoadingMode(nullptr), CUDA_ERROR_INVALID_VALUE);
  // Forged handles.
  auto fm = reinterpret_cast<CUmodule>(uintptr_t{0x1234560});
  CUfunction f;
  EXPECT_EQ(cuModuleGetFunction(&f, fm, "k"), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuModuleUnload(fm), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuModuleUnload(nullptr), CUDA_ERROR_INVALID_HANDLE);
  CUkernel k;
  EXPECT_EQ(cuLibraryGetKernel(&k, reinterpret_cast<CUlibrary>(fm), "k"), CUDA_ERROR_INVALID_HANDLE);
  const char* name;
  EXPECT_EQ(cuKernelGetName(&name, reinterpret_cast<CUkernel>(fm)), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuFuncGetName(&name, reinterpret_cast<CUfunction>(fm)), CUDA_ERROR_INVALID_HANDLE);
  // The linker: no inputs, bad handles.
  CUlinkState ls;
  ASSERT_EQ(cuLinkCreate(0, nullptr, nullptr, &ls), CUDA_SUCCESS);
  void* cubin;
  size_t size;
  EXPECT_EQ(cuLinkComplete(ls, &cubin, &size), CUDA_SUCCESS);  // no inputs: driver 580 completes
  // A host object without device code adds nothing.
  EXPECT_EQ(cuLinkAddData(ls, CU_JIT_INPUT_OBJECT, const_cast<unsigned char*>(elf), sizeof elf, "o", 0, nullptr,
                          nullptr),
            CUDA_SUCCESS);
  EXPECT_EQ(cuLinkAddData(ls, CU_JIT_INPUT_NVVM, const_cast<unsigned char*>(elf), sizeof elf, "n", 0, nullptr,
                          nullptr),
            CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(cuLinkAddData(ls, CU_JIT_INPUT_PTX, nullptr, 0, "p", 0, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuLinkDestroy(ls), CUDA_SUCCESS);
  EXPECT_EQ(cuLinkDestroy(ls), CUDA_ERROR_INVALID_HANDLE);
}

}  // namespace
}  // namespace cucpu::test
