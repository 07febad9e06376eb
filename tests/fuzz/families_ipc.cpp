// Call family: interprocess handles, within the one process the fuzzer
// has: an allocation's handle (asked twice, perturbed, opened here, which
// is refused), an interprocess event's handle opened here as a second
// event, records, waits and queries through both, a shareable pool and an
// allocation of it imported here, and stale handles.
// Everything it makes is gone when it returns.
#include "harness.h"

#include <unistd.h>

namespace fz {

namespace {

template <class H>
void perturb(Reader& r, H& h) {
  if (!r.one_in(4)) return;
  const unsigned n = 1 + r.below(4);
  for (unsigned i = 0; i < n; ++i) h.reserved[r.below(sizeof h.reserved)] ^= static_cast<char>(1 + r.below(255));
}

void ipc_memory(Reader& r) {
  sem_release_all();  // the memset, the close and the free below wait for held work
  CUdeviceptr p = 0;
  if (API(cuMemAlloc_v2, &p, size_t{1} + r.below(1 << 16)) != CUDA_SUCCESS) return;
  CUipcMemHandle h{};
  const CUdeviceptr asked = r.one_in(8) ? p + r.below(64) : r.one_in(16) ? static_cast<CUdeviceptr>(r.u64()) : p;
  API(cuIpcGetMemHandle, maybe(r, &h), asked);
  if (r.one_in(2)) API(cuIpcGetMemHandle, &h, p);
  perturb(r, h);
  CUdeviceptr q = 0;
  if (API(cuIpcOpenMemHandle_v2, maybe(r, &q), h, r.one_in(8) ? r.u32() : 1u) == CUDA_SUCCESS)
    API(cuIpcCloseMemHandle, q);  // not reached: this process made it
  API(cuIpcCloseMemHandle, r.one_in(2) ? p : static_cast<CUdeviceptr>(r.u64()));
  API(cuMemsetD8_v2, p, static_cast<unsigned char>(r.u32()), size_t{1});
  API(cuMemFree_v2, p);
  API(cuIpcGetMemHandle, &h, p);  // freed
}

void ipc_event(Reader& r) {
  CUevent e = nullptr;
  const unsigned flags = r.one_in(8) ? r.flags(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)
                                     : unsigned{CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING};
  if (API(cuEventCreate, &e, flags) != CUDA_SUCCESS) return;
  CUipcEventHandle h{};
  API(cuIpcGetEventHandle, maybe(r, &h), e);
  perturb(r, h);
  CUevent opened = nullptr;
  API(cuIpcOpenEventHandle, maybe(r, &opened), h);
  const unsigned steps = r.count(6);
  for (unsigned i = 0; i < steps; ++i) {
    CUevent which = opened && r.one_in(2) ? opened : e;
    switch (r.below(5)) {
      case 0: API(cuEventRecord, which, g_pool.pick_stream(r)); break;
      case 1: API(cuEventQuery, which); break;
      case 2: API(cuStreamWaitEvent, g_pool.pick_stream(r), which, 0u); break;
      case 3:
        sem_release_all();  // a wait on held work must end
        API(cuEventSynchronize, which);
        break;
      default: {
        CUcontext c = nullptr;
        API(cuCtxGetCurrent, &c);
        r.one_in(2) ? API(cuCtxRecordEvent, r.one_in(4) ? nullptr : c, which)
                    : API(cuCtxWaitEvent, r.one_in(4) ? nullptr : c, which);
        break;
      }
    }
  }
  sem_release_all();
  if (opened) API(cuEventDestroy_v2, opened);
  API(cuEventDestroy_v2, e);
  API(cuIpcGetEventHandle, &h, e);  // destroyed
}

// A shareable pool: its descriptor imported here, an allocation's export
// data (perturbed) imported into it and freed, then stale calls.
void ipc_pool(Reader& r) {
  sem_release_all();  // the synchronizes below wait for held work
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = r.one_in(8) ? static_cast<CUmemAllocationHandleType>(r.flags(0xf))
                                  : CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemoryPool pool = nullptr;
  if (API(cuMemPoolCreate, &pool, &props) != CUDA_SUCCESS) return;
  CUdeviceptr p = 0;
  API(cuMemAllocFromPoolAsync, &p, size_t{1} + r.below(4096), pool, static_cast<CUstream>(nullptr));
  int fd = -1;
  API(cuMemPoolExportToShareableHandle, maybe(r, &fd), pool,
      r.one_in(8) ? as_enum<CUmemAllocationHandleType>(r.enum_range(0, 9)) : CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
      r.one_in(8) ? r.u64() : 0ull);
  CUmemPoolPtrExportData data{};
  API(cuMemPoolExportPointer, maybe(r, &data), r.one_in(8) ? static_cast<CUdeviceptr>(r.u64()) : p);
  perturb(r, data);
  CUmemoryPool imported = nullptr;
  const intptr_t os = r.one_in(8) ? static_cast<intptr_t>(static_cast<int>(r.u32())) : fd;
  if (API(cuMemPoolImportFromShareableHandle, maybe(r, &imported), reinterpret_cast<void*>(os),
          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0ull) == CUDA_SUCCESS) {
    CUdeviceptr q = 0;
    if (API(cuMemPoolImportPointer, maybe(r, &q), r.one_in(8) ? pool : imported, maybe(r, &data)) == CUDA_SUCCESS)
      API(cuMemFree_v2, q);
    CUdeviceptr none = 0;
    API(cuMemAllocFromPoolAsync, &none, size_t{64}, imported, static_cast<CUstream>(nullptr));
    API(cuMemPoolDestroy, imported);
  }
  if (fd >= 0) close(fd);
  if (p) API(cuMemFreeAsync, p, static_cast<CUstream>(nullptr));
  API(cuCtxSynchronize);
  API(cuMemPoolDestroy, pool);
  API(cuMemPoolExportPointer, &data, p);  // freed
}

}  // namespace

void fam_ipc(Reader& r) {
  switch (r.below(3)) {
    case 0: ipc_memory(r); break;
    case 1: ipc_event(r); break;
    default: ipc_pool(r); break;
  }
}

}  // namespace fz
