// Kernel launches: cuLaunchKernel, cuLaunchKernelEx and
// cuLaunchCooperativeKernel, with their per-thread-stream twins. A launch
// on a capturing stream becomes a kernel node.
#include "api/launch_common.h"
#include "core/capture.h"
#include "core/event.h"

// Defined in event.cpp; cuda.h names only the legacy-stream form.
extern "C" CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);

using namespace cucpu;
using api::NullStream;
using api::raw_enum;

namespace {

struct Launch {
  CUfunction f = nullptr;
  LaunchShape shape;
  CUstream stream = nullptr;
  void** kernel_params = nullptr;
  void** extra = nullptr;
  bool cooperative = false;
  const CUlaunchAttribute* attrs = nullptr;  // cuLaunchKernelEx's, already checked
  unsigned num_attrs = 0;
};

// A cooperative grid must be resident all at once.
CUresult check_cooperative(Function* f, const ptx::Kernel* k, const LaunchShape& s) {
  return cooperative_fits(*f, *k, s) ? CUDA_SUCCESS : CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
}

// Makes `p` the kernel node of a launch.
void fill_kernel_node(Function* f, const Launch& a, const ParamSource& src, NodeParams& p) {
  KernelNodeData& k = p.become<NodeKind::kKernel>();
  k.fn = f;
  k.module = ModuleRef(f->module);
  k.grid[0] = a.shape.grid.x, k.grid[1] = a.shape.grid.y, k.grid[2] = a.shape.grid.z;
  k.block[0] = a.shape.block.x, k.block[1] = a.shape.block.y, k.block[2] = a.shape.block.z;
  k.shared = a.shape.shared;
  k.kern = reinterpret_cast<CUkernel>(f->library_kernel());
  k.params.assign((f->entry().param_bytes + 7) / 8, 0);
  pack_params(f->entry(), src, k.params.data());
  if (a.cooperative) {  // cuLaunchCooperativeKernel: the node keeps it cooperative
    CUlaunchAttribute coop{};
    coop.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    coop.value.cooperative = 1;
    k.attrs.push_back(coop);
  }
  for (unsigned i = 0; i < a.num_attrs; ++i) {
    int id = raw_enum(a.attrs[i].id);
    if (id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && a.cooperative) continue;  // already there
    if (id == CU_LAUNCH_ATTRIBUTE_IGNORE || id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ||
        id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
      continue;
    k.attrs.push_back(a.attrs[i]);
  }
}

CUresult launch(NullStream ns, const Launch& a) {
  if (!function_pool().live(a.f) && !lib_kernel_pool().live(a.f)) return CUDA_ERROR_INVALID_HANDLE;
  Stream* s;
  if (CUresult r = api::stream_handle(a.stream, ns, &s)) return r;
  // A CUkernel launches its function in the stream's context.
  Function* f;
  const ptx::Kernel* k;
  if (CUresult r = api::loaded_function(a.f, &f, &k, s->ctx)) return r;
  if (s->ctx->owner != f->module->ctx) return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = check_launch_shape(*f, *k, a.shape)) return r;
  if (a.cooperative) {
    if (CUresult r = check_cooperative(f, k, a.shape)) return r;
  }
  ParamSource src;
  if (CUresult r = param_source(f->entry(), a.kernel_params, a.extra, &src)) return r;
  Route route;
  if (CUresult r = api::capture_route_lazy(s, [&](NodeParams& p) { fill_kernel_node(f, a, src, p); }, true, &route)) return r;
  if (route == Route::kCaptured) return CUDA_SUCCESS;
  if (a.cooperative) enqueue_cooperative_kernel(s, f, a.shape, src);
  else enqueue_kernel(s, f, a.shape, src);
  return CUDA_SUCCESS;
}

CUresult launch_kernel(NullStream ns, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned shared, CUstream h, void** kernel_params, void** extra) {
  Launch a;
  a.f = f;
  a.shape = {{gx, gy, gz}, {bx, by, bz}, shared};
  a.stream = h;
  a.kernel_params = kernel_params;
  a.extra = extra;
  return launch(ns, a);
}

CUresult launch_cooperative(NullStream ns, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared, CUstream h, void** kernel_params) {
  Launch a;
  a.f = f;
  a.shape = {{gx, gy, gz}, {bx, by, bz}, shared};
  a.stream = h;
  a.kernel_params = kernel_params;
  a.cooperative = true;
  return launch(ns, a);
}

// Events cuLaunchKernelEx records once the kernel is done (a programmatic
// event fires no later than that; cucpu runs a kernel's dependents after
// it completes).
struct ExEvents {
  CUevent events[4];
  int n = 0;
};

CUresult launch_ex(NullStream ns, const CUlaunchConfig* config, CUfunction f, void** kernel_params, void** extra) {
  if (!config) return CUDA_ERROR_INVALID_VALUE;
  if (config->numAttrs > 0 && !config->attrs) return CUDA_ERROR_INVALID_VALUE;
  Launch a;
  a.f = f;
  a.shape = {{config->gridDimX, config->gridDimY, config->gridDimZ},
             {config->blockDimX, config->blockDimY, config->blockDimZ},
             config->sharedMemBytes};
  a.stream = config->hStream;
  a.kernel_params = kernel_params;
  a.extra = extra;
  a.attrs = config->attrs;
  a.num_attrs = config->numAttrs;
  ExEvents after;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& at = config->attrs[i];
    const CUlaunchAttributeValue& v = at.value;
    switch (raw_enum(at.id)) {
      case CU_LAUNCH_ATTRIBUTE_IGNORE:
      case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
      case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
      case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
      case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
      case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
        // Hints about placement and memory traffic: nothing to place here.
        break;
      case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        // A scheduling hint; the launch runs at its stream's priority.
        break;
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        a.cooperative = v.cooperative != 0;
        break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
        const unsigned c[3] = {v.clusterDim.x, v.clusterDim.y, v.clusterDim.z};
        const unsigned g[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
        for (int d = 0; d < 3; ++d)
          if (c[d] == 0 || g[d] % c[d] != 0) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        if (uint64_t{c[0]} * c[1] * c[2] > 1) {
          log_line("cuLaunchKernelEx: thread block clusters are not supported");
          return CUDA_ERROR_NOT_SUPPORTED;
        }
        break;
      }
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
      case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT: {
        CUevent e = raw_enum(at.id) == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ? v.programmaticEvent.event
                                                                               : v.launchCompletionEvent.event;
        int flags = raw_enum(at.id) == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ? v.programmaticEvent.flags
                                                                               : v.launchCompletionEvent.flags;
        if (!rt().events.live(e) || (flags & ~CU_EVENT_RECORD_EXTERNAL) != 0) return CUDA_ERROR_INVALID_VALUE;
        if (after.n == 4) return CUDA_ERROR_INVALID_VALUE;
        after.events[after.n++] = e;
        break;
      }
      default:
        return CUDA_ERROR_INVALID_VALUE;
    }
  }
  if (CUresult r = launch(ns, a)) return r;
  for (int i = 0; i < after.n; ++i) {
    CUresult r = ns == NullStream::kPerThread ? cuEventRecord_ptsz(after.events[i], config->hStream)
                                              : cuEventRecord(after.events[i], config->hStream);
    if (r) return r;
  }
  return CUDA_SUCCESS;
}

}  // namespace

#include "api/entries/launch.inc"
