// Functions (CUfunction): attributes, names, parameters, loading state.
#include "api/launch_common.h"

using namespace cucpu;
using api::raw_enum;

namespace {

// A function handle as given (a CUkernel is accepted where the driver
// takes one for a CUfunction), with its kernel compiled.
CUresult loaded(CUfunction h, Function** f, const ptx::Kernel** k) { return api::loaded_function(h, f, k); }

}  // namespace

extern "C" {

CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  return api::call("cuFuncGetAttribute", api::kDefault, [&] {
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    Function* f;
    const ptx::Kernel* k;
    if (CUresult r = loaded(hfunc, &f, &k)) return r;
    return get_function_attribute(k->info(), f->settings(), raw_enum(attrib), pi);
  }, pi, attrib, hfunc);
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  return api::call("cuFuncSetAttribute", api::kDefault, [&] {
    Function* f;
    const ptx::Kernel* k;
    if (CUresult r = loaded(hfunc, &f, &k)) return r;
    FuncSettings s = f->settings();
    if (CUresult r = set_function_attribute(k->info(), s, raw_enum(attrib), value)) return r;
    f->set_settings(s);
    return CUDA_SUCCESS;
  }, hfunc, attrib, value);
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  return api::call("cuFuncSetCacheConfig", api::kDefault, [&] {
    Function* f;
    if (CUresult r = api::resolve_function(hfunc, &f)) return r;
    int c = raw_enum(config);
    if (c < CU_FUNC_CACHE_PREFER_NONE || c > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
    FuncSettings s = f->settings();
    s.cache_config = c;
    f->set_settings(s);
    return CUDA_SUCCESS;
  }, hfunc, config);
}

// Deprecated; shared memory banks are not configurable on sm_90 either.
CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config) {
  return api::call("cuFuncSetSharedMemConfig", api::kDefault, [&] {
    Function* f;
    if (CUresult r = api::resolve_function(hfunc, &f)) return r;
    int c = raw_enum(config);
    if (c < CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE || c > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
      return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
  }, hfunc, config);
}

CUresult cuFuncGetName(const char** name, CUfunction hfunc) {
  return api::call("cuFuncGetName", api::kDefault, [&] {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    Function* f;
    if (CUresult r = api::resolve_function(hfunc, &f)) return r;
    *name = f->name().c_str();
    return CUDA_SUCCESS;
  }, name, hfunc);
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
  return api::call("cuFuncGetParamInfo", api::kDefault, [&] {
    if (!paramOffset) return CUDA_ERROR_INVALID_VALUE;
    Function* f;
    if (CUresult r = api::resolve_function(func, &f)) return r;
    const auto& params = f->entry().params;
    if (paramIndex >= params.size()) return CUDA_ERROR_INVALID_VALUE;
    *paramOffset = params[paramIndex].offset;
    if (paramSize) *paramSize = params[paramIndex].size;
    return CUDA_SUCCESS;
  }, func, paramIndex, paramOffset, paramSize);
}

CUresult cuFuncGetModule(CUmodule* hmod, CUfunction hfunc) {
  return api::call("cuFuncGetModule", api::kDefault, [&] {
    if (!hmod) return CUDA_ERROR_INVALID_VALUE;
    Function* f;
    if (CUresult r = api::resolve_function(hfunc, &f)) return r;
    *hmod = reinterpret_cast<CUmodule>(f->module);
    return CUDA_SUCCESS;
  }, hmod, hfunc);
}

CUresult cuFuncIsLoaded(CUfunctionLoadingState* state, CUfunction function) {
  return api::call("cuFuncIsLoaded", api::kDefault, [&] {
    if (!state) return CUDA_ERROR_INVALID_VALUE;
    Function* f;
    if (CUresult r = api::resolve_function(function, &f)) return r;
    *state = f->kernel() ? CU_FUNCTION_LOADING_STATE_LOADED : CU_FUNCTION_LOADING_STATE_UNLOADED;
    return CUDA_SUCCESS;
  }, state, function);
}

CUresult cuFuncLoad(CUfunction function) {
  return api::call("cuFuncLoad", api::kDefault, [&] {
    Function* f;
    if (CUresult r = api::resolve_function(function, &f)) return r;
    return f->load();
  }, function);
}

}  // extern "C"
