// Memory: allocation of device, host, registered and managed memory, CUDA
// arrays, and pointer queries. Every address is host memory; the registry
// (core/allocation.h) records what each range is.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

#include "api/common.h"
#include "core/allocator.h"
#include "core/allocation.h"
#include "core/array.h"
#include "core/capture.h"
#include "core/check.h"
#include "base/checked_math.h"
#include "core/mem_pool.h"
#include "core/vmm.h"

using namespace cucpu;

namespace {

using cucpu::allocate;

CUresult mem_alloc(CUdeviceptr* dptr, size_t bytes) {
  if (!dptr) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  void* p;
  if (CUresult r = allocate(c, bytes, MemKind::kDevice, 0, &p)) return r;
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

CUresult mem_alloc_pitch(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height, unsigned elem) {
  if (!dptr || !pitch) return CUDA_ERROR_INVALID_VALUE;
  if (elem != 4 && elem != 8 && elem != 16) return CUDA_ERROR_INVALID_VALUE;
  if (width == 0 || height == 0) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  // The driver pads rows to 512 bytes. Padding or pitch * height that
  // overflows gives CUDA_ERROR_INVALID_VALUE, as on driver 580 (a block
  // merely too large for the device stays OUT_OF_MEMORY).
  size_t padded, bytes;
  if (!checked_add(width, 511, &padded)) return CUDA_ERROR_INVALID_VALUE;
  const size_t p = padded / 512 * 512;
  if (!checked_mul(p, height, &bytes)) return CUDA_ERROR_INVALID_VALUE;
  void* mem;
  if (CUresult r = allocate(c, bytes, MemKind::kDevice, 0, &mem)) return r;
  *dptr = reinterpret_cast<CUdeviceptr>(mem);
  *pitch = p;
  return CUDA_SUCCESS;
}

CUresult mem_free(uintptr_t p, bool host) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  if (p == 0) return host ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
  auto a = Registry::instance().find(p);
  if (!a || a->base != p) return CUDA_ERROR_INVALID_VALUE;
  bool is_host = a->kind == MemKind::kHost;
  if (is_host != host || a->kind == MemKind::kRegistered) return CUDA_ERROR_INVALID_VALUE;
  if (a->free_pending) return CUDA_ERROR_INVALID_VALUE;  // its cuMemFreeAsync is enqueued already
  if (a->module_owned) return CUDA_ERROR_INVALID_VALUE;   // a module's variable goes with its module
  if (a->vmm) return CUDA_ERROR_INVALID_VALUE;            // a mapping goes by cuMemUnmap
  // Another process's memory goes by cuIpcCloseMemHandle, but a pointer
  // imported into a pool, which a free releases (core/ipc.h).
  if (a->ipc_import && !a->pool) return CUDA_ERROR_INVALID_VALUE;
  if (a->graph_owned) {  // a graph's block goes with its graphs (api/graph_mem_nodes.cpp)
    synchronize_all_contexts();
    return CUDA_SUCCESS;
  }
  // cuMemFree synchronizes: work already enqueued finishes before the
  // memory goes, in every context (another context's stream may use it, as
  // driver 580's free waits for; see docs/conformance.md).
  synchronize_all_contexts();
  if (check::on()) [[unlikely]] check::host_waited_context(nullptr);
  release_allocation(*a);
  return CUDA_SUCCESS;
}

CUresult host_alloc(void** pp, size_t bytes, unsigned flags) {
  if (!pp) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED))
    return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  return allocate(c, bytes, MemKind::kHost, flags, pp);
}

CUresult managed_alloc(CUdeviceptr* dptr, size_t bytes, unsigned flags) {
  if (!dptr) return CUDA_ERROR_INVALID_VALUE;
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  void* p;
  if (CUresult r = allocate(c, bytes, MemKind::kManaged, flags, &p)) return r;
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

// True when every page of [base, base + bytes) is mapped in this process (the
// driver pins the range's pages; a hole fails). msync(MS_ASYNC) does nothing
// to anonymous or file memory on Linux but reports ENOMEM for a hole, and it
// walks only the mappings that exist, so a huge range costs nothing.
bool host_range_mapped(uintptr_t base, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = base & ~(page - 1);
  uintptr_t end;
  if (!checked_add(base, bytes, &end) || !checked_add(end, page - 1, &end)) return false;
  end &= ~(page - 1);
  return msync(reinterpret_cast<void*>(first), end - first, MS_ASYNC) == 0;
}

CUresult host_register(void* p, size_t bytes, unsigned flags) {
  if (!p || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  const unsigned known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_IOMEMORY |
                         CU_MEMHOSTREGISTER_READ_ONLY;
  if (flags & ~known) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  auto base = reinterpret_cast<uintptr_t>(p);
  // A range whose end wraps the address space: CUDA_ERROR_INVALID_VALUE (driver 580).
  if (!range_fits(base, bytes)) return CUDA_ERROR_INVALID_VALUE;
  if (!host_range_mapped(base, bytes)) return CUDA_ERROR_INVALID_VALUE;
  auto& reg = Registry::instance();
  Allocation a;
  a.base = base;
  a.size = bytes;
  a.kind = MemKind::kRegistered;
  a.ctx = c->owner;
  a.flags = flags;
  // Any overlap with memory already registered or allocated, checked under
  // the registry's lock (two threads registering one range: one wins).
  if (!reg.add_unless_overlapping(a)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  return CUDA_SUCCESS;
}

// Any context, or none, may unregister (driver 580, as UCX reports it): the
// registration is found by address alone.
CUresult host_unregister(void* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  auto a = Registry::instance().find(reinterpret_cast<uintptr_t>(p));
  if (!a || a->kind != MemKind::kRegistered || a->base != reinterpret_cast<uintptr_t>(p))
    return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  // Another thread may have unregistered it since the find: one of them succeeds.
  return Registry::instance().remove(a->base) ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

CUresult host_device_pointer(CUdeviceptr* pdptr, void* p, unsigned flags) {
  if (!pdptr || !p || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  auto a = Registry::instance().find(reinterpret_cast<uintptr_t>(p));
  if (!a || (a->kind != MemKind::kHost && a->kind != MemKind::kRegistered)) return CUDA_ERROR_INVALID_VALUE;
  *pdptr = reinterpret_cast<CUdeviceptr>(p);  // unified addressing: the same address
  return CUDA_SUCCESS;
}

CUresult address_range(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  auto a = Registry::instance().find(static_cast<uintptr_t>(dptr));
  if (!a || a->kind == MemKind::kHost || a->kind == MemKind::kRegistered) return CUDA_ERROR_NOT_FOUND;
  if (pbase) *pbase = static_cast<CUdeviceptr>(a->base);
  if (psize) *psize = a->size;
  return CUDA_SUCCESS;
}

CUresult mem_info(size_t* free_bytes, size_t* total) {
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  size_t t = c->device->total_mem;
  size_t used = Registry::instance().device_bytes();
  if (free_bytes) *free_bytes = used < t ? t - used : 0;
  if (total) *total = t;
  return CUDA_SUCCESS;
}

// `attr` is the caller's raw value (any bit pattern may arrive).
CUresult pointer_attribute(void* data, int attr, CUdeviceptr ptr) {
  if (!data) return CUDA_ERROR_INVALID_VALUE;
  auto a = Registry::instance().find(static_cast<uintptr_t>(ptr));
  auto put = [&](auto v) { std::memcpy(data, &v, sizeof v); };
  if (!a) {
    // Untracked memory: the driver answers a few attributes for any pointer.
    switch (attr) {
      case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: put(static_cast<unsigned>(0)); return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_IS_MANAGED: put(0u); return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_MAPPED: put(0u); return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_CONTEXT: put(static_cast<CUcontext>(nullptr)); return CUDA_SUCCESS;
      case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: put(-2); return CUDA_SUCCESS;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
  }
  bool host = a->kind == MemKind::kHost || a->kind == MemKind::kRegistered;
  switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: put(reinterpret_cast<CUcontext>(a->ctx)); break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      put(static_cast<unsigned>(host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE));
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: put(static_cast<CUdeviceptr>(ptr)); break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (a->kind == MemKind::kDevice) return CUDA_ERROR_INVALID_VALUE;
      put(reinterpret_cast<void*>(ptr));
      break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: put(a->sync_memops); break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: put(static_cast<unsigned long long>(a->id)); break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: put(static_cast<unsigned>(a->kind == MemKind::kManaged)); break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: put(a->ctx ? a->ctx->device->ordinal : 0); break;  // a library's managed variable has no context
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: {
      // A mapping's range is its reservation's (driver 580); MAPPING_* are its own.
      uintptr_t base = a->base;
      size_t size = a->size;
      if (a->vmm) vmm::reservation_of(a->base, &base, &size);
      if (attr == CU_POINTER_ATTRIBUTE_RANGE_SIZE) put(size);
      else put(static_cast<CUdeviceptr>(base));
      break;
    }
    case CU_POINTER_ATTRIBUTE_MAPPED: put(1u); break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: put(0u); break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      put(a->vmm ? vmm::exportable_types(a->base) : static_cast<unsigned long long>(0));
      break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: put(static_cast<unsigned>(a->access)); break;  // the CUmemAccess_flags values
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: put(static_cast<CUmemoryPool>(nullptr)); break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: put(0u); break;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: put(a->size); break;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: put(reinterpret_cast<void*>(a->base)); break;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: put(static_cast<unsigned long long>(a->id)); break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// The dimension limits the device reports (MAXIMUM_TEXTURE*): driver 580
// refuses an array past them with INVALID_VALUE.
bool within_array_limits(const CUDA_ARRAY3D_DESCRIPTOR& d) {
  auto lim = [](CUdevice_attribute a) { return static_cast<size_t>(api::static_attribute(a)); };
  if (d.Flags & CUDA_ARRAY3D_CUBEMAP) {
    if (d.Width != d.Height) return false;
    if (d.Flags & CUDA_ARRAY3D_LAYERED)
      return d.Width <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH) && d.Depth % 6 == 0 &&
             d.Depth <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS) * 6;
    return d.Width <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH) && d.Depth == 6;
  }
  if (d.Flags & CUDA_ARRAY3D_LAYERED) {
    if (d.Height == 0)
      return d.Width <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH) &&
             d.Depth <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS);
    return d.Width <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH) &&
           d.Height <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT) &&
           d.Depth <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS);
  }
  if (d.Depth)  // within the 3D box or the alternate one (driver 580 takes either)
    return (d.Width <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH) &&
            d.Height <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT) &&
            d.Depth <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH)) ||
           (d.Width <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE) &&
            d.Height <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE) &&
            d.Depth <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE));
  if (d.Height)
    return d.Width <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH) &&
           d.Height <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
  return d.Width <= lim(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
}

CUresult array_create(CUarray* out, const CUDA_ARRAY3D_DESCRIPTOR& d) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  size_t fb = format_bytes(api::raw_enum(d.Format));
  if (fb == 0 || (d.NumChannels != 1 && d.NumChannels != 2 && d.NumChannels != 4)) return CUDA_ERROR_INVALID_VALUE;
  if (d.Width == 0 || (d.Depth && !d.Height)) return CUDA_ERROR_INVALID_VALUE;
  if (d.Flags & ~static_cast<unsigned>(CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_CUBEMAP |
                                       CUDA_ARRAY3D_TEXTURE_GATHER))
    return CUDA_ERROR_INVALID_VALUE;
  // Within the texture limits, a byte size that does not fit size_t, or the
  // device, is refused as a merely too-large array always was (its
  // allocation failing): CUDA_ERROR_OUT_OF_MEMORY.
  if (!within_array_limits(d)) return CUDA_ERROR_INVALID_VALUE;
  const size_t elem = fb * d.NumChannels;
  size_t bytes;
  if (!array_bytes(d, elem, &bytes) || bytes > c->device->total_mem) return CUDA_ERROR_OUT_OF_MEMORY;
  *out = reinterpret_cast<CUarray>(rt().arrays.create(c, d, elem));
  return CUDA_SUCCESS;
}

}  // namespace

static CUresult impl_cuMemFree_v2(CUdeviceptr dptr) { return mem_free(static_cast<uintptr_t>(dptr), false); }
static CUresult impl_cuMemAllocHost_v2(void** pp, size_t bytesize) { return host_alloc(pp, bytesize, 0); }

static CUresult impl_cuMemFreeHost(void* p) { return mem_free(reinterpret_cast<uintptr_t>(p), true); }

static CUresult impl_cuMemHostGetFlags(unsigned int* pFlags, void* p) {
  if (!pFlags || !p) return CUDA_ERROR_INVALID_VALUE;
  auto a = Registry::instance().find(reinterpret_cast<uintptr_t>(p));
  if (!a || a->kind != MemKind::kHost) return CUDA_ERROR_INVALID_VALUE;
  *pFlags = a->flags;
  return CUDA_SUCCESS;
}

static CUresult impl_cuPointerGetAttribute(void* data, const CUpointer_attribute& attribute, CUdeviceptr ptr) { return pointer_attribute(data, api::raw_enum(attribute), ptr); }
static CUresult impl_cuPointerGetAttributes(unsigned int n, CUpointer_attribute* attrs, void** data, CUdeviceptr ptr) {
  if (n == 0 || !attrs || !data) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < n; ++i) {
    if (!data[i]) return CUDA_ERROR_INVALID_VALUE;
    const int attr = api::raw_enum(attrs[i]);
    if (pointer_attribute(data[i], attr, ptr) != CUDA_SUCCESS) {
      // The plural form reports "not applicable" by leaving a zero value.
      std::memset(data[i], 0, attr == CU_POINTER_ATTRIBUTE_RANGE_SIZE ? sizeof(size_t) : sizeof(unsigned));
    }
  }
  return CUDA_SUCCESS;
}
static CUresult impl_cuPointerSetAttribute(const void* value, const CUpointer_attribute& attribute, CUdeviceptr ptr) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  if (api::raw_enum(attribute) != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS) return CUDA_ERROR_INVALID_VALUE;
  auto a = Registry::instance().find(static_cast<uintptr_t>(ptr));
  if (!a) return CUDA_ERROR_INVALID_VALUE;
  Registry::instance().set_sync_memops(a->base, *static_cast<const unsigned*>(value) != 0);
  return CUDA_SUCCESS;
}

static CUresult impl_cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* d) {
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY3D_DESCRIPTOR d3{d->Width, d->Height, 0, {}, d->NumChannels, 0};
  copy_enum(d3.Format, d->Format);
  return array_create(pHandle, d3);
}
static CUresult impl_cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* d) {
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  return array_create(pHandle, *d);
}
static CUresult impl_cuArrayDestroy(CUarray h) {
  Array* a = rt().arrays.live(h);
  if (!a) return CUDA_ERROR_INVALID_HANDLE;
  // An array outlives its context's destruction as a handle only: driver
  // 580 then answers CONTEXT_IS_DESTROYED (the handle goes either way).
  // The slot may hold a newer context: its id tells.
  const bool ctx_alive = rt().contexts.live(a->ctx) && a->ctx->id == a->ctx_id;
  if (!rt().arrays.try_kill(a)) return CUDA_ERROR_INVALID_HANDLE;  // another thread destroyed it first
  if (ctx_alive) synchronize_all_contexts();
  rt().arrays.release(a);  // executable graphs that copy to or from it keep its storage
  return ctx_alive ? CUDA_SUCCESS : CUDA_ERROR_CONTEXT_IS_DESTROYED;
}
static CUresult impl_cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* d, CUarray h) {
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  Array* a = rt().arrays.live(h);
  if (!a) return CUDA_ERROR_INVALID_HANDLE;
  *d = a->desc;
  return CUDA_SUCCESS;
}
static CUresult impl_cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* d, CUarray h) {
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  Array* a = rt().arrays.live(h);
  if (!a) return CUDA_ERROR_INVALID_HANDLE;
  if (a->desc.Depth) return CUDA_ERROR_INVALID_VALUE;
  *d = {a->desc.Width, a->desc.Height, a->desc.Format, a->desc.NumChannels};
  return CUDA_SUCCESS;
}

#include "api/entries/memory.inc"
