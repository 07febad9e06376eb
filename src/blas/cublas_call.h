// What the preloaded cuBLAS entry points share: the ABI facts they need
// (cublas_api.h and library_types.h of CUDA 13.0), NVIDIA's functions they
// hand calls on to, and the enqueueing of a job on a handle's stream.
#pragma once

#include <cstddef>
#include <memory>

namespace cublas_call {

using Handle = void*;
using Status = int;
constexpr Status kSuccess = 0, kNotInitialized = 1, kInvalidValue = 7, kExecutionFailed = 13, kNotSupported = 15;
constexpr int kOpN = 0, kOpT = 1, kOpC = 2;
enum DataType : int { kR32F = 0, kR64F = 1, kR16F = 2, kC32F = 4, kC64F = 5, kR16BF = 14 };

// The bytes of a scalar of the computation on `type` (float for f16 and
// bf16, whose products cuBLAS computes in float).
inline size_t scalar_bytes(int type) { return type == kC64F ? 16 : type == kC32F || type == kR64F ? 8 : 4; }

// NVIDIA's own entry point `name` (null when libcublas is not loaded).
void* nvidia_symbol(const char* name);
template <class F>
F nvidia(const char* name) {
  return reinterpret_cast<F>(nvidia_symbol(name));
}

// Work for the host's BLAS, run on the stream. The scalars alpha and beta
// (float, double or their complexes: `scalar_bytes`, and `beta_bytes` where
// beta's type differs, as in herk) are copied at the call when they are in
// host memory, or read from `*_at` when it runs (CUBLAS_POINTER_MODE_DEVICE).
struct Job {
  virtual ~Job() = default;
  virtual void run() = 0;
  size_t beta_size() const { return beta_bytes ? beta_bytes : scalar_bytes; }
  unsigned char alpha[16] = {}, beta[16] = {};
  size_t scalar_bytes = 4, beta_bytes = 0;
  const void* alpha_at = nullptr;
  const void* beta_at = nullptr;
};

// Enqueues `job` on the handle's stream as a host function (cuLaunchHostFunc,
// so stream order, events and capture hold), once its scalars are taken.
// `empty`: nothing to compute (the call succeeds, nothing is enqueued).
Status enqueue(Handle h, std::unique_ptr<Job> job, const void* alpha, const void* beta, bool empty);

}  // namespace cublas_call
