// Interprocess memory handles (core/ipc.h); interprocess events' entries
// are the events' (api/event.cpp).
#include "api/common.h"
#include "core/ipc.h"

using namespace cucpu;

static CUresult impl_cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) {
  if (!pHandle || !dptr) return CUDA_ERROR_INVALID_VALUE;
  return ipc_export(static_cast<uintptr_t>(dptr), pHandle);
}

// Flags: CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS or none (every device's memory
// is the host's: peers need nothing enabled).
static CUresult impl_cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags) {
  if (!pdptr || (Flags & ~static_cast<unsigned>(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  uintptr_t p = 0;
  if (CUresult r = ipc_open(c, handle, &p)) return r;
  *pdptr = static_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

static CUresult impl_cuIpcCloseMemHandle(CUdeviceptr dptr) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  return ipc_close(c, static_cast<uintptr_t>(dptr));
}

#include "api/entries/ipc.inc"
