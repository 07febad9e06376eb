// Virtual memory management: address reservations, physical allocations,
// their mappings and access, and their export as file descriptors
// (core/vmm.h). Argument checks follow driver 580's answers
// (tools/probes/vmm_probe.cpp, docs/conformance.md).
#include <atomic>

#include "api/common.h"
#include "core/vmm.h"

using namespace cucpu;
using namespace cucpu::api;

namespace {

bool is_host_location(int type) {
  return type == CU_MEM_LOCATION_TYPE_HOST || type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
         type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
}

// The bytes of device memory a physical allocation at `loc` counts against
// (0: host memory), or an error for a location that is none.
CUresult device_total_of(const CUmemLocation& loc, size_t* total) {
  const int type = raw_enum(loc.type);
  if (is_host_location(type)) {
    *total = 0;
    return CUDA_SUCCESS;
  }
  if (type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
  if (!device_ok(loc.id)) return CUDA_ERROR_INVALID_DEVICE;
  *total = rt().devices[static_cast<size_t>(loc.id)].total_mem;
  return CUDA_SUCCESS;
}

}  // namespace

static CUresult impl_cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                                   const CUmemAllocationGranularity_flags& option) {
  // Driver 580 answers 2 MiB for any properties, even ones cuMemCreate refuses.
  if (!granularity || !prop) return CUDA_ERROR_INVALID_VALUE;
  const int o = raw_enum(option);
  if (o != CU_MEM_ALLOC_GRANULARITY_MINIMUM && o != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
    return CUDA_ERROR_INVALID_VALUE;
  *granularity = vmm::kGranularity;
  return CUDA_SUCCESS;
}

static CUresult impl_cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                         unsigned long long flags) {
  if (!ptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  uintptr_t p;
  if (CUresult r = vmm::reserve(size, alignment, static_cast<uintptr_t>(addr), &p)) return r;
  *ptr = static_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

static CUresult impl_cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  if (ptr == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
  return vmm::free_reservation(static_cast<uintptr_t>(ptr), size);
}

static CUresult impl_cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                                 unsigned long long flags) {
  if (!handle || !prop || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (raw_enum(prop->type) != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  const unsigned long long types = static_cast<unsigned long long>(raw_enum(prop->requestedHandleTypes));
  if (types & ~static_cast<unsigned long long>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC))
    return CUDA_ERROR_INVALID_VALUE;  // the Windows types, and bits no type has
  if (types & CU_MEM_HANDLE_TYPE_FABRIC) {
    static std::atomic<bool> said{false};  // said once, as the stubs say it
    if (!said.exchange(true)) log_line("cuMemCreate: fabric handles are not implemented: returning CUDA_ERROR_NOT_SUPPORTED");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  size_t total;
  if (CUresult r = device_total_of(prop->location, &total)) return r;
  uint64_t h;
  if (CUresult r = vmm::create(size, *prop, total, &h)) return r;
  *handle = h;
  return CUDA_SUCCESS;
}

static CUresult impl_cuMemRelease(CUmemGenericAllocationHandle handle) { return vmm::release(handle); }

static CUresult impl_cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                            CUmemGenericAllocationHandle handle) {
  if (!prop) return CUDA_ERROR_INVALID_VALUE;
  return vmm::properties(handle, prop);
}

static CUresult impl_cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  if (!handle) return CUDA_ERROR_INVALID_VALUE;
  uint64_t h;
  if (CUresult r = vmm::retain_handle(reinterpret_cast<uintptr_t>(addr), &h)) return r;
  *handle = h;
  return CUDA_SUCCESS;
}

static CUresult impl_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                              unsigned long long flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return vmm::map(static_cast<uintptr_t>(ptr), size, offset, handle);
}

static CUresult impl_cuMemUnmap(CUdeviceptr ptr, size_t size) { return vmm::unmap(static_cast<uintptr_t>(ptr), size); }

static CUresult impl_cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  if (!desc || count == 0) return CUDA_ERROR_INVALID_VALUE;
  // Every device reads one memory here: the range grants what any
  // descriptor grants.
  unsigned granted = vmm::kAccessNone;
  for (size_t i = 0; i < count; ++i) {
    const int type = raw_enum(desc[i].location.type);
    if (is_host_location(type)) return CUDA_ERROR_NOT_SUPPORTED;  // driver 580
    if (type != CU_MEM_LOCATION_TYPE_DEVICE || !device_ok(desc[i].location.id)) return CUDA_ERROR_INVALID_VALUE;
    const unsigned f = static_cast<unsigned>(raw_enum(desc[i].flags));
    if (f != vmm::kAccessNone && f != vmm::kAccessRead && f != vmm::kAccessReadWrite) return CUDA_ERROR_INVALID_VALUE;
    granted |= f;
  }
  return vmm::set_access(static_cast<uintptr_t>(ptr), size, granted);
}

static CUresult impl_cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) {
  if (!flags || !location) return CUDA_ERROR_INVALID_VALUE;
  const int type = raw_enum(location->type);
  if (type == CU_MEM_LOCATION_TYPE_DEVICE ? !device_ok(location->id) : !is_host_location(type))
    return CUDA_ERROR_INVALID_VALUE;
  unsigned f;
  if (CUresult r = vmm::get_access(static_cast<uintptr_t>(ptr), &f)) return r;
  *flags = f;
  return CUDA_SUCCESS;
}

static CUresult impl_cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                                  const CUmemAllocationHandleType& handleType, unsigned long long flags) {
  if (!shareableHandle || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (raw_enum(handleType) != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
  int fd;
  if (CUresult r = vmm::export_fd(handle, &fd)) return r;
  *static_cast<int*>(shareableHandle) = fd;
  return CUDA_SUCCESS;
}

static CUresult impl_cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                                    const CUmemAllocationHandleType& shHandleType) {
  if (!handle) return CUDA_ERROR_INVALID_VALUE;
  if (raw_enum(shHandleType) != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
  // A POSIX descriptor travels as the pointer's value.
  uint64_t h;
  if (CUresult r = vmm::import_fd(static_cast<int>(reinterpret_cast<intptr_t>(osHandle)), &h)) return r;
  *handle = h;
  return CUDA_SUCCESS;
}

#include "api/entries/vmm.inc"
