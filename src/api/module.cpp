// Modules: loading PTX images into the current context, their functions
// and variables.
#include <chrono>

#include "api/common.h"
#include "api/module_load.h"
#include "ptx/image.h"
#include "core/module.h"

using namespace cucpu;

namespace {

Module* module_of(CUmodule h) { return module_pool().live(h); }

// A module handle for the getters: live, and its context free of a sticky error.
CUresult module_handle(CUmodule h, Module** out) {
  Module* m = module_of(h);
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  *out = m;
  return m->ctx->sticky_error();
}

CUresult load(CUmodule* out, const void* image, size_t size, unsigned n, CUjit_option* options, void** values) {
  if (!out || !image) return CUDA_ERROR_INVALID_VALUE;
  api::JitOptions jit;
  if (CUresult r = api::read_jit_options(n, options, values, &jit)) return r;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  const auto start = std::chrono::steady_clock::now();
  std::string info, error;
  std::vector<std::shared_ptr<ptx::Program>> programs;
  CUresult r = api::programs_of_image(image, size, &programs, &info, &error);
  Module* m = nullptr;
  if (r == CUDA_SUCCESS) r = Module::create(c, std::move(programs), nullptr, &m, &error);
  const float ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (values) api::write_jit_logs(jit, values, info, error, ms);
  if (r != CUDA_SUCCESS) {
    if (!error.empty() && trace_enabled()) log_line("module load failed: %s", error.c_str());
    return r;
  }
  *out = reinterpret_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}

CUresult load_file(CUmodule* out, const char* path) {
  if (!out || !path) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  std::vector<char> bytes;
  if (CUresult r = api::read_file(path, &bytes)) return r;
  return load(out, bytes.data(), bytes.size(), 0, nullptr, nullptr);
}

CUresult unload(CUmodule h) {
  Module* m = module_of(h);
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  if (m->library) return CUDA_ERROR_NOT_PERMITTED;  // a library's module goes with its library
  if (CUresult r = m->ctx->sticky_error()) return r;
  if (!module_pool().try_kill(m)) return CUDA_ERROR_INVALID_HANDLE;  // another thread unloaded it first
  m->unload();  // launches in flight keep the module until they are done
  return CUDA_SUCCESS;
}

CUresult get_function(CUfunction* out, CUmodule h, const char* name) {
  if (!out || !name) return CUDA_ERROR_INVALID_VALUE;
  Module* m;
  if (CUresult r = module_handle(h, &m)) return r;
  Function* f = m->find_function(name);
  if (!f) return CUDA_ERROR_NOT_FOUND;
  if (CUresult r = f->load()) return r;  // lazy loading: the first lookup compiles
  *out = reinterpret_cast<CUfunction>(f);
  return CUDA_SUCCESS;
}

CUresult get_global(CUdeviceptr* dptr, size_t* bytes, CUmodule h, const char* name) {
  if (!name || (!dptr && !bytes)) return CUDA_ERROR_INVALID_VALUE;  // driver 580: both outputs NULL is INVALID_VALUE
  Module* m;
  if (CUresult r = module_handle(h, &m)) return r;
  Module::GlobalRef g;
  // A kernel's name is no variable: driver 580 says INVALID_VALUE, not NOT_FOUND.
  if (!m->find_global(name, &g)) return m->find_function(name) ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_FOUND;
  if (dptr) *dptr = reinterpret_cast<CUdeviceptr>(g.address);
  if (bytes) *bytes = g.size;
  return CUDA_SUCCESS;
}

}  // namespace

// cuModuleLoadData(Ex) take an image, not a fatbin wrapper (a pointer to
// one): driver 580 refuses a wrapper with INVALID_IMAGE, and following its
// pointer could crash. cudart's private table loads wrappers through
// cuModuleLoadFatBinary (api/export_table.cpp).
static CUresult load_data(CUmodule* out, const void* image, unsigned n, CUjit_option* options, void** values) {
  if (image && ptx::is_fatbin_wrapper(image)) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true, std::memory_order_relaxed))
      log_line("cuModuleLoadData: a fatbin wrapper is not an image (pass the fatbin it points to): INVALID_IMAGE");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  return load(out, image, 0, n, options, values);
}

static CUresult impl_cuModuleLoadData(CUmodule* module, const void* image) { return load_data(module, image, 0, nullptr, nullptr); }

static CUresult impl_cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                                        CUjit_option* options, void** optionValues) { return load_data(module, image, numOptions, options, optionValues); }

static CUresult impl_cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) { return load(module, fatCubin, 0, 0, nullptr, nullptr); }

// The 32-bit form: an address or size that does not fit is INVALID_VALUE.
static CUresult impl_cuModuleGetGlobal(CUdeviceptr_v1* dptr, unsigned int* bytes, CUmodule hmod, const char* name) {
  CUdeviceptr p;
  size_t n;
  if (CUresult r = get_global(&p, &n, hmod, name)) return r;
  if (p > 0xffffffffu || n > 0xffffffffu) return CUDA_ERROR_INVALID_VALUE;
  if (dptr) *dptr = static_cast<CUdeviceptr_v1>(p);
  if (bytes) *bytes = static_cast<unsigned>(n);
  return CUDA_SUCCESS;
}

static CUresult impl_cuModuleGetFunctionCount(unsigned int* count, CUmodule mod) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  Module* m;
  if (CUresult r = module_handle(mod, &m)) return r;
  *count = static_cast<unsigned>(m->functions().size());
  return CUDA_SUCCESS;
}

// Fills up to numFunctions handles; the functions stay unloaded until used.
static CUresult impl_cuModuleEnumerateFunctions(CUfunction* functions, unsigned int numFunctions, CUmodule mod) {
  if (!functions) return CUDA_ERROR_INVALID_VALUE;
  Module* m;
  if (CUresult r = module_handle(mod, &m)) return r;
  const auto& fs = m->functions();
  for (size_t i = 0; i < fs.size() && i < numFunctions; ++i) functions[i] = reinterpret_cast<CUfunction>(fs[i]);
  return CUDA_SUCCESS;
}

// Lazy unless CUDA_MODULE_LOADING=EAGER (the driver's default since CUDA 12.2).
static CUresult impl_cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) {
  if (!mode) return CUDA_ERROR_INVALID_VALUE;
  *mode = eager_loading() ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
  return CUDA_SUCCESS;
}

#include "api/entries/module.inc"
