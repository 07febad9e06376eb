// Helpers shared by the entry points that take functions and launches
// (function.cpp, launch.cpp, occupancy.cpp, graph_kernel.cpp,
// graph_node_params.cpp).
#pragma once

#include <vector>

#include "api/common.h"
#include "core/graph.h"
#include "core/module.h"
#include "core/kernel_op.h"

namespace cucpu::api {

// The function a CUfunction handle names. A CUkernel passed as a
// CUfunction (which the driver accepts) names that kernel's function in
// `in` (the current context when null), whose module is loaded on first
// use. Stale and forged handles: CUDA_ERROR_INVALID_HANDLE.
inline CUresult resolve_function(CUfunction h, Function** out, Context* in = nullptr) {
  if (Function* f = function_pool().live(h)) [[likely]] {
    *out = f;
    return CUDA_SUCCESS;
  }
  LibKernel* k = lib_kernel_pool().live(h);
  if (!k) return CUDA_ERROR_INVALID_HANDLE;
  Context* c = in;
  if (!c) {
    if (CUresult r = current_ctx(&c)) return r;
  }
  Module* m;
  if (CUresult r = k->library->module_for(c, &m)) return r;
  *out = m->functions()[k->index];
  return CUDA_SUCCESS;
}

// resolve_function, then the compiled kernel (compiled now if need be).
inline CUresult loaded_function(CUfunction h, Function** f, const ptx::Kernel** k, Context* in = nullptr) {
  if (CUresult r = resolve_function(h, f, in)) return r;
  *k = (*f)->kernel();
  if (*k) [[likely]] return CUDA_SUCCESS;
  if (CUresult r = (*f)->load()) return r;
  *k = (*f)->kernel();
  return CUDA_SUCCESS;
}

// Kernel-node parameters from the fields of CUDA_KERNEL_NODE_PARAMS (any
// version): the function (`func`, or else `kern` in context `ctx`, or in
// the current context when ctx is null), the shape, and the parameters
// copied from kernelParams or extra. The shape is checked when the node is
// validated (GraphExec::resolve).
inline CUresult kernel_node_data(CUfunction func, CUkernel kern, CUcontext ctx, const unsigned grid[3],
                                 const unsigned block[3], unsigned shared, void** kernel_params, void** extra,
                                 KernelNodeData* out) {
  // Driver 580: a kernel node without a function is INVALID_HANDLE.
  CUfunction h = func ? func : reinterpret_cast<CUfunction>(kern);
  if (!h) return CUDA_ERROR_INVALID_HANDLE;
  Function* f;
  const ptx::Kernel* k;
  if (!func && ctx) {
    LibKernel* lk = lib_kernel_pool().live(kern);
    if (!lk) return CUDA_ERROR_INVALID_HANDLE;
    Context* c;
    if (CUresult r = ctx_handle(ctx, &c)) return r;
    Module* m;
    if (CUresult r = lk->library->module_for(c, &m)) return r;
    h = reinterpret_cast<CUfunction>(m->functions()[lk->index]);
  }
  if (CUresult r = loaded_function(h, &f, &k)) return r;
  ParamSource src;
  if (CUresult r = param_source(f->entry(), kernel_params, extra, &src)) return r;
  out->fn = f;
  out->module = ModuleRef(f->module);
  out->kern = reinterpret_cast<CUkernel>(f->library_kernel());  // reported back, however it was named
  for (int i = 0; i < 3; ++i) {
    out->grid[i] = grid[i];
    out->block[i] = block[i];
  }
  out->shared = shared;
  out->params.assign((f->entry().param_bytes + 7) / 8, 0);
  pack_params(f->entry(), src, out->params.data());
  return CUDA_SUCCESS;
}

}  // namespace cucpu::api
