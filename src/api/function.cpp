// Functions (CUfunction): attributes, names, parameters, loading state.
#include "api/launch_common.h"

using namespace cucpu;
using api::raw_enum;

namespace {

// A function handle as given (a CUkernel is accepted where the driver
// takes one for a CUfunction), with its kernel compiled.
CUresult loaded(CUfunction h, Function** f, const ptx::Kernel** k) { return api::loaded_function(h, f, k); }

}  // namespace

static CUresult impl_cuFuncGetAttribute(int* pi, const CUfunction_attribute& attrib, CUfunction hfunc) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  Function* f;
  const ptx::Kernel* k;
  if (CUresult r = loaded(hfunc, &f, &k)) return r;
  return get_function_attribute(k->info(), f->settings(), raw_enum(attrib), pi);
}

static CUresult impl_cuFuncSetAttribute(CUfunction hfunc, const CUfunction_attribute& attrib, int value) {
  Function* f;
  const ptx::Kernel* k;
  if (CUresult r = loaded(hfunc, &f, &k)) return r;
  FuncSettings s = f->settings();
  if (CUresult r = set_function_attribute(k->info(), s, raw_enum(attrib), value)) return r;
  f->set_settings(s);
  return CUDA_SUCCESS;
}

static CUresult impl_cuFuncSetCacheConfig(CUfunction hfunc, const CUfunc_cache& config) {
  Function* f;
  if (CUresult r = api::resolve_function(hfunc, &f)) return r;
  int c = raw_enum(config);
  if (c < CU_FUNC_CACHE_PREFER_NONE || c > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
  FuncSettings s = f->settings();
  s.cache_config = c;
  f->set_settings(s);
  return CUDA_SUCCESS;
}

// Deprecated; shared memory banks are not configurable on sm_90 either.
static CUresult impl_cuFuncSetSharedMemConfig(CUfunction hfunc, const CUsharedconfig& config) {
  Function* f;
  if (CUresult r = api::resolve_function(hfunc, &f)) return r;
  int c = raw_enum(config);
  if (c < CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE || c > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

static CUresult impl_cuFuncGetName(const char** name, CUfunction hfunc) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  Function* f;
  if (CUresult r = api::resolve_function(hfunc, &f)) return r;
  *name = f->name().c_str();
  return CUDA_SUCCESS;
}

static CUresult impl_cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
  if (!paramOffset) return CUDA_ERROR_INVALID_VALUE;
  Function* f;
  if (CUresult r = api::resolve_function(func, &f)) return r;
  const auto& params = f->entry().params;
  if (paramIndex >= params.size()) return CUDA_ERROR_INVALID_VALUE;
  *paramOffset = params[paramIndex].offset;
  if (paramSize) *paramSize = params[paramIndex].size;
  return CUDA_SUCCESS;
}

static CUresult impl_cuFuncGetModule(CUmodule* hmod, CUfunction hfunc) {
  if (!hmod) return CUDA_ERROR_INVALID_VALUE;
  Function* f;
  if (CUresult r = api::resolve_function(hfunc, &f)) return r;
  *hmod = reinterpret_cast<CUmodule>(f->module);
  return CUDA_SUCCESS;
}

static CUresult impl_cuFuncIsLoaded(CUfunctionLoadingState* state, CUfunction function) {
  if (!state) return CUDA_ERROR_INVALID_VALUE;
  Function* f;
  if (CUresult r = api::resolve_function(function, &f)) return r;
  *state = f->kernel() ? CU_FUNCTION_LOADING_STATE_LOADED : CU_FUNCTION_LOADING_STATE_UNLOADED;
  return CUDA_SUCCESS;
}

static CUresult impl_cuFuncLoad(CUfunction function) {
  Function* f;
  if (CUresult r = api::resolve_function(function, &f)) return r;
  return f->load();
}

#include "api/entries/function.inc"
