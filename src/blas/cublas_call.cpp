#include "blas/cublas_call.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#include "blas/host_blas.h"

namespace cublas_call {
namespace {

using Stream = void*;
constexpr int kPointerModeDevice = 1;

// cuLaunchHostFunc of the driver the process loaded (cudart opens it
// RTLD_LOCAL, so it is looked up by name, never loaded here).
using HostFunc = int (*)(Stream, void (*)(void*), void*);
HostFunc driver_host_func() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return driver ? reinterpret_cast<HostFunc>(dlsym(driver, "cuLaunchHostFunc")) : nullptr;
}

void run_job(void* data) {
  std::unique_ptr<Job> job(static_cast<Job*>(data));
  if (job->alpha_at) std::memcpy(job->alpha, job->alpha_at, job->scalar_bytes);
  if (job->beta_at) std::memcpy(job->beta, job->beta_at, job->beta_size());
  job->run();
}

}  // namespace

void* nvidia_symbol(const char* name) {
  void* f = dlvsym(RTLD_NEXT, name, "libcublas.so.13");
  return f ? f : dlsym(RTLD_NEXT, name);
}

Status enqueue(Handle h, std::unique_ptr<Job> job, const void* alpha, const void* beta, bool empty) {
  if (!host_blas::available()) {
    std::fprintf(stderr, "cucpu: cuBLAS calls on the host need its BLAS (libopenblas.so.0 or libcblas.so.3), not found\n");
    return kNotSupported;
  }
  static auto get_stream = nvidia<Status (*)(Handle, Stream*)>("cublasGetStream_v2");
  static auto get_mode = nvidia<Status (*)(Handle, int*)>("cublasGetPointerMode_v2");
  static auto host_func = driver_host_func();
  if (!get_stream || !get_mode || !host_func) return kNotInitialized;
  Stream stream = nullptr;
  int mode = 0;
  if (Status s = get_stream(h, &stream)) return s;
  if (Status s = get_mode(h, &mode)) return s;
  if (!alpha || !beta) return kInvalidValue;
  if (mode == kPointerModeDevice) {
    job->alpha_at = alpha;
    job->beta_at = beta;
  } else {
    std::memcpy(job->alpha, alpha, job->scalar_bytes);
    std::memcpy(job->beta, beta, job->beta_size());
  }
  if (empty) return kSuccess;
  if (host_func(stream, run_job, job.get()) != 0) return kExecutionFailed;
  job.release();  // run_job owns it now
  return kSuccess;
}

}  // namespace cublas_call
