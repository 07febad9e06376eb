// cuInit, versions and error strings.
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

#include "api/code_prefault.h"
#include "api/entry.h"

using namespace cucpu;

namespace {
struct ErrorName {
  CUresult code;
  const char* name;
  const char* text;
};
constexpr ErrorName kErrors[] = {
#include "api/error_names.inc"
};
// Takes the code by address: a caller may pass any 32-bit value.
const ErrorName* find_error(const CUresult& e) {
  int code;
  std::memcpy(&code, &e, sizeof code);
  for (const auto& x : kErrors)
    if (x.code == code) return &x;
  return nullptr;
}
}  // namespace

CUresult cucpu::api::state_error() {
  return lib_state() == LibState::kTornDown ? CUDA_ERROR_DEINITIALIZED : CUDA_ERROR_NOT_INITIALIZED;
}

static CUresult impl_cuInit(unsigned int Flags) {
  if (lib_state() == LibState::kTornDown) return CUDA_ERROR_DEINITIALIZED;
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (rt().devices.empty()) return CUDA_ERROR_NO_DEVICE;
  int expected = static_cast<int>(LibState::kUninitialized);
  if (rt().state.compare_exchange_strong(expected, static_cast<int>(LibState::kReady))) api::prefault_own_code();
  return CUDA_SUCCESS;
}

static CUresult impl_cuDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = CUDA_VERSION;
  return CUDA_SUCCESS;
}

static CUresult impl_cuGetErrorName(const CUresult& error, const char** pStr) {
  // Not traced: the tracer itself uses it.
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorName* e = find_error(error);
  if (!e) {
    *pStr = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pStr = e->name;
  return CUDA_SUCCESS;
}

static CUresult impl_cuGetErrorString(const CUresult& error, const char** pStr) {
  if (!pStr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorName* e = find_error(error);
  if (!e) {
    *pStr = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pStr = e->text;
  return CUDA_SUCCESS;
}

bool cucpu::api::trace_peek(const void* addr, void* out, size_t n) {
  iovec local{out, n};
  iovec remote{const_cast<void*>(addr), n};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

#include "api/entries/init.inc"
