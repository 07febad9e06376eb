// Libraries (CUlibrary) and their kernels (CUkernel): code loaded once for
// every context, each context getting its module on first use.
#include <chrono>

#include "api/common.h"
#include "api/module_load.h"
#include "core/module.h"

using namespace cucpu;
using api::raw_enum;

namespace {

Library* library_of(CUlibrary h) { return library_pool().live(h); }
LibKernel* kernel_of(CUkernel h) { return lib_kernel_pool().live(h); }
using api::device_ok;

CUresult load(CUlibrary* out, const void* code, size_t size, CUjit_option* jit_options, void** jit_values,
              unsigned num_jit, CUlibraryOption* lib_options, void** lib_values, unsigned num_lib) {
  if (!out || !code) return CUDA_ERROR_INVALID_VALUE;
  api::JitOptions jit;
  if (CUresult r = api::read_jit_options(num_jit, jit_options, jit_values, &jit)) return r;
  if (num_lib > 0 && !lib_options) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < num_lib; ++i) {
    // The host function and data table serves cudart's own registration;
    // the code is copied either way, so "binary is preserved" holds. That
    // one is a flag: cuBLASLt passes it with no values array at all.
    int o = raw_enum(lib_options[i]);
    if (o != CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE && o != CU_LIBRARY_BINARY_IS_PRESERVED)
      return CUDA_ERROR_INVALID_VALUE;
    if (!lib_values && o != CU_LIBRARY_BINARY_IS_PRESERVED) return CUDA_ERROR_INVALID_VALUE;
  }
  const auto start = std::chrono::steady_clock::now();
  std::string info, error;
  std::vector<std::shared_ptr<ptx::Program>> programs;
  CUresult r = api::programs_of_image(code, size, &programs, &info, &error);
  if (r == CUDA_SUCCESS && eager_loading()) {
    for (auto& p : programs)
      for (size_t e = 0; e < p->entries().size() && r == CUDA_SUCCESS; ++e) {
        std::string why;
        if (!p->kernel(static_cast<int>(e), &why)) {
          error += why;
          r = CUDA_ERROR_INVALID_PTX;
        }
      }
  }
  const float ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (jit_values) api::write_jit_logs(jit, jit_values, info, error, ms);
  if (r != CUDA_SUCCESS) return r;
  *out = reinterpret_cast<CUlibrary>(library_pool().create(std::move(programs)));
  return CUDA_SUCCESS;
}

// The library's module in the current context.
CUresult current_module(Library* lib, Module** out) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  return lib->module_for(c, out);
}

CUresult get_global(CUdeviceptr* dptr, size_t* bytes, CUlibrary h, const char* name, bool managed) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  Library* lib = library_of(h);
  if (!lib) return CUDA_ERROR_INVALID_HANDLE;
  void* address;
  size_t size;
  if (managed && lib->find_managed(name, &address, &size)) {  // context-independent
    if (dptr) *dptr = reinterpret_cast<CUdeviceptr>(address);
    if (bytes) *bytes = size;
    return CUDA_SUCCESS;
  }
  Module* m;
  if (CUresult r = current_module(lib, &m)) return r;
  Module::GlobalRef g;
  if (!m->find_global(name, &g) || (managed && !g.managed)) return CUDA_ERROR_NOT_FOUND;
  if (dptr) *dptr = reinterpret_cast<CUdeviceptr>(g.address);
  if (bytes) *bytes = g.size;
  return CUDA_SUCCESS;
}

// The compiled kernel behind a library kernel (compiled now if need be).
CUresult kernel_info(LibKernel* k, const ptx::KernelInfo** out) {
  auto [unit, entry] = k->library->locate(k->index);
  std::string why;
  std::shared_ptr<const ptx::Kernel> kernel = k->library->programs[unit]->kernel(entry, &why);
  if (!kernel) {
    log_line("kernel %s could not be compiled: %s", k->library->entry(k->index).name.c_str(), why.c_str());
    return CUDA_ERROR_INVALID_PTX;
  }
  *out = &kernel->info();  // the program keeps its compiled kernels
  return CUDA_SUCCESS;
}

}  // namespace

static CUresult impl_cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions,
                                       void** jitOptionsValues, unsigned int numJitOptions,
                                       CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                       unsigned int numLibraryOptions) {
  return load(library, code, 0, jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,
              numLibraryOptions);
}

static CUresult impl_cuLibraryLoadFromFile(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                                           void** jitOptionsValues, unsigned int numJitOptions,
                                           CUlibraryOption* libraryOptions, void** libraryOptionValues,
                                           unsigned int numLibraryOptions) {
  if (!library || !fileName) return CUDA_ERROR_INVALID_VALUE;
  std::vector<char> bytes;
  if (CUresult r = api::read_file(fileName, &bytes)) return r;
  return load(library, bytes.data(), bytes.size(), jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
              libraryOptionValues, numLibraryOptions);
}

static CUresult impl_cuLibraryUnload(CUlibrary library) {
  Library* lib = library_of(library);
  if (!lib || !library_pool().try_kill(lib)) return CUDA_ERROR_INVALID_HANDLE;
  lib->unload();  // launches in flight keep their modules
  library_pool().release(lib);
  return CUDA_SUCCESS;
}

static CUresult impl_cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  if (!pKernel || !name) return CUDA_ERROR_INVALID_VALUE;
  Library* lib = library_of(library);
  if (!lib) return CUDA_ERROR_INVALID_HANDLE;
  LibKernel* k = lib->find_kernel(name);
  if (!k) return CUDA_ERROR_NOT_FOUND;
  *pKernel = reinterpret_cast<CUkernel>(k);
  return CUDA_SUCCESS;
}

static CUresult impl_cuLibraryGetKernelCount(unsigned int* count, CUlibrary lib) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  Library* l = library_of(lib);
  if (!l) return CUDA_ERROR_INVALID_HANDLE;
  *count = static_cast<unsigned>(l->kernels().size());
  return CUDA_SUCCESS;
}

static CUresult impl_cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels, CUlibrary lib) {
  if (!kernels) return CUDA_ERROR_INVALID_VALUE;
  Library* l = library_of(lib);
  if (!l) return CUDA_ERROR_INVALID_HANDLE;
  const auto& ks = l->kernels();
  for (size_t i = 0; i < ks.size() && i < numKernels; ++i) kernels[i] = reinterpret_cast<CUkernel>(ks[i]);
  return CUDA_SUCCESS;
}

static CUresult impl_cuLibraryGetModule(CUmodule* pMod, CUlibrary library) {
  if (!pMod) return CUDA_ERROR_INVALID_VALUE;
  Library* lib = library_of(library);
  if (!lib) return CUDA_ERROR_INVALID_HANDLE;
  Module* m;
  if (CUresult r = current_module(lib, &m)) return r;
  *pMod = reinterpret_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}

static CUresult impl_cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) { return get_global(dptr, bytes, library, name, false); }

static CUresult impl_cuLibraryGetManaged(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) { return get_global(dptr, bytes, library, name, true); }

static CUresult impl_cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  if (!pFunc) return CUDA_ERROR_INVALID_VALUE;
  LibKernel* k = kernel_of(kernel);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  Module* m;
  if (CUresult r = current_module(k->library, &m)) return r;
  Function* f = m->functions()[k->index];
  if (CUresult r = f->load()) return r;
  *pFunc = reinterpret_cast<CUfunction>(f);
  return CUDA_SUCCESS;
}

static CUresult impl_cuKernelGetLibrary(CUlibrary* pLib, CUkernel kernel) {
  if (!pLib) return CUDA_ERROR_INVALID_VALUE;
  LibKernel* k = kernel_of(kernel);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  *pLib = reinterpret_cast<CUlibrary>(k->library);
  return CUDA_SUCCESS;
}

static CUresult impl_cuKernelGetName(const char** name, CUkernel hfunc) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  LibKernel* k = kernel_of(hfunc);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  *name = k->library->entry(k->index).name.c_str();
  return CUDA_SUCCESS;
}

static CUresult impl_cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
  if (!paramOffset) return CUDA_ERROR_INVALID_VALUE;
  LibKernel* k = kernel_of(kernel);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  const auto& params = k->library->entry(k->index).params;
  if (paramIndex >= params.size()) return CUDA_ERROR_INVALID_VALUE;
  *paramOffset = params[paramIndex].offset;
  if (paramSize) *paramSize = params[paramIndex].size;
  return CUDA_SUCCESS;
}

static CUresult impl_cuKernelGetAttribute(int* pi, const CUfunction_attribute& attrib, CUkernel kernel, CUdevice dev) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  LibKernel* k = kernel_of(kernel);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  const ptx::KernelInfo* info;
  if (CUresult r = kernel_info(k, &info)) return r;
  return get_function_attribute(*info, k->library->settings(k->index, dev), raw_enum(attrib), pi);
}

static CUresult impl_cuKernelSetAttribute(const CUfunction_attribute& attrib, int val, CUkernel kernel, CUdevice dev) {
  LibKernel* k = kernel_of(kernel);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  const ptx::KernelInfo* info;
  if (CUresult r = kernel_info(k, &info)) return r;
  FuncSettings s = k->library->settings(k->index, dev);
  if (CUresult r = set_function_attribute(*info, s, raw_enum(attrib), val)) return r;
  k->library->set_settings(k->index, dev, s);
  return CUDA_SUCCESS;
}

static CUresult impl_cuKernelSetCacheConfig(CUkernel kernel, const CUfunc_cache& config, CUdevice dev) {
  LibKernel* k = kernel_of(kernel);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  if (!device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  int c = raw_enum(config);
  if (c < CU_FUNC_CACHE_PREFER_NONE || c > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
  FuncSettings s = k->library->settings(k->index, dev);
  s.cache_config = c;
  k->library->set_settings(k->index, dev, s);
  return CUDA_SUCCESS;
}

#include "api/entries/library.inc"
