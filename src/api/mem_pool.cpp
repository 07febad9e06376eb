// The stream-ordered allocator: cuMemAllocAsync, cuMemFreeAsync and memory
// pools. A block is allocated when asked for (so it can be used by work
// enqueued after the call, in stream order) and freed when its
// stream-ordered free runs; pools keep attributes and usage counts
// (core/mem_pool.h). Under capture, an allocation becomes a
// memory-allocation node whose block is mapped at once (its address is the
// node's), and freeing a graph's block becomes a memory-free node
// (api/graph_memory.h).
#include "api/common.h"
#include "api/graph_memory.h"
#include "core/allocator.h"
#include "core/ipc.h"
#include "core/mem_pool.h"
#include "core/ops.h"

using namespace cucpu;
using api::NullStream;

namespace {

CUresult device_of(CUdevice dev, Device** out) {
  if (!api::device_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
  *out = &rt().devices[static_cast<size_t>(dev)];
  return CUDA_SUCCESS;
}

MemPool* default_pool_locked(Device* d) {
  if (!d->default_pool) {
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location = {CU_MEM_LOCATION_TYPE_DEVICE, d->ordinal};
    d->default_pool = rt().mempools.create(d, props, true);
  }
  return d->default_pool;
}

MemPool* current_pool(Device* d) {
  std::lock_guard<std::mutex> g(rt().pool_mu);
  return d->current_pool ? d->current_pool : default_pool_locked(d);
}

CUmemoryPool handle(MemPool* p) { return reinterpret_cast<CUmemoryPool>(p); }
MemPool* pool_of(CUmemoryPool h) { return rt().mempools.live(h); }

// Under capture, an allocation or free node of `block`; without a block
// (memory that is not a graph's) the capture refuses the call without
// being invalidated, as driver 580 does.
template <NodeKind kKind>
CUresult route_memory_node(Stream* s, const std::shared_ptr<const GraphMemoryBlock>& block, Route* route) {
  return api::capture_route_lazy(s, [&](NodeParams& p) { p.become<kKind>() = block; }, block != nullptr, route, false);
}

CUresult alloc_from(NullStream ns, CUdeviceptr* dptr, size_t bytes, MemPool* pool, CUstream h) {
  if (!dptr) return CUDA_ERROR_INVALID_VALUE;
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  if (bytes == 0) {  // as driver 580: success, and nothing to free
    *dptr = 0;
    return CUDA_SUCCESS;
  }
  if (!pool) pool = current_pool(s->ctx->device);
  if (pool->device != s->ctx->device) return CUDA_ERROR_INVALID_VALUE;
  // Captured: the block is made before its node, so that a failure adds none.
  std::shared_ptr<const GraphMemoryBlock> block;
  if (s->capturing.load(std::memory_order_acquire) != nullptr) {
    CUresult made;
    block = api::make_graph_memory(s->ctx, bytes, pool->props, {}, &made);
    if (!block) return made;
  }
  Route route;
  if (CUresult r = route_memory_node<NodeKind::kMemAlloc>(s, block, &route)) return r;
  if (route == Route::kCaptured) {
    *dptr = block->dptr;
    return CUDA_SUCCESS;
  }
  // Not captured: an allocation, potentially unsafe while another stream captures.
  if (CUresult r = capture_check_unsafe_call()) return r;
  void* p;
  if (CUresult r = allocate(s->ctx, bytes, MemKind::kDevice, 0, &p, pool)) return r;
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

CUresult alloc_async(NullStream ns, CUdeviceptr* dptr, size_t bytes, CUstream h) {
  return alloc_from(ns, dptr, bytes, nullptr, h);
}

CUresult alloc_from_pool_async(NullStream ns, CUdeviceptr* dptr, size_t bytes, CUmemoryPool hp, CUstream h) {
  MemPool* pool = pool_of(hp);
  if (!pool || pool->exporter) return CUDA_ERROR_INVALID_VALUE;  // an imported pool makes no allocations
  return alloc_from(ns, dptr, bytes, pool, h);
}

CUresult free_async(NullStream ns, CUdeviceptr dptr, CUstream h) {
  Stream* s;
  if (CUresult r = api::stream_handle(h, ns, &s)) return r;
  std::shared_ptr<const GraphMemoryBlock> block = dptr ? api::graph_memory_at(dptr) : nullptr;
  Route route;
  if (CUresult r = route_memory_node<NodeKind::kMemFree>(s, block, &route)) return r;
  if (route == Route::kCaptured) return CUDA_SUCCESS;
  if (dptr == 0) return CUDA_SUCCESS;  // as driver 580: freeing NULL does nothing
  // A graph's block is the graph's: freeing it outside a graph ends nothing
  // here (the next launch would map it again at the same address).
  if (block) return CUDA_SUCCESS;
  const auto base = static_cast<uintptr_t>(dptr);
  // Only pool memory, and only once.
  auto a = Registry::instance().begin_async_free(base);
  if (!a) return CUDA_ERROR_INVALID_VALUE;
  s->enqueue(new FunctionOp([a = *a] { release_allocation(a); }, "stream-ordered free",
                            MemAccess{a->base, a->base + a->size, true, false, 0, /*frees=*/true}));
  return CUDA_SUCCESS;
}

CUresult pool_create(CUmemoryPool* out, const CUmemPoolProps* props) {
  if (!out || !props) return CUDA_ERROR_INVALID_VALUE;
  if (raw_enum(props->allocType) != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  if (raw_enum(props->location.type) != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_NOT_SUPPORTED;  // host pools
  Device* d;
  if (CUresult r = device_of(props->location.id, &d)) return r;
  const int types = raw_enum(props->handleTypes);
  if (types != CU_MEM_HANDLE_TYPE_NONE && types != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return CUDA_ERROR_NOT_SUPPORTED;  // shared between processes through POSIX descriptors only (core/ipc.h)
  *out = handle(rt().mempools.create(d, *props, false));
  return CUDA_SUCCESS;
}

CUresult pool_destroy(CUmemoryPool hp) {
  MemPool* pool = pool_of(hp);
  if (!pool || pool->is_default) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> g(rt().pool_mu);
  if (pool->device->current_pool == pool) pool->device->current_pool = nullptr;  // back to the default
  if (!rt().mempools.try_kill(pool)) return CUDA_ERROR_INVALID_VALUE;  // the object stays: its allocations still count against it
  return CUDA_SUCCESS;
}

CUresult pool_set_access(CUmemoryPool hp, const CUmemAccessDesc* map, size_t count) {
  MemPool* pool = pool_of(hp);
  if (!pool || (count > 0 && !map)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i) {
    Device* d;
    if (raw_enum(map[i].location.type) != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = device_of(map[i].location.id, &d)) return r;
    const int f = api::raw_enum(map[i].flags);
    if (f != CU_MEM_ACCESS_FLAGS_PROT_NONE && f != CU_MEM_ACCESS_FLAGS_PROT_READ && f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = pool->set_access(d->ordinal, static_cast<CUmemAccess_flags>(f))) return r;
  }
  return CUDA_SUCCESS;
}

CUresult pool_get_access(CUmemAccess_flags* flags, CUmemoryPool hp, CUmemLocation* loc) {
  MemPool* pool = pool_of(hp);
  if (!pool || !flags || !loc || raw_enum(loc->type) != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
  Device* d;
  if (CUresult r = device_of(loc->id, &d)) return r;
  *flags = pool->access_of(d->ordinal);
  return CUDA_SUCCESS;
}

CUresult set_current(Device* d, CUmemoryPool hp) {
  MemPool* pool = pool_of(hp);
  if (!pool || pool->device != d || pool->exporter) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> g(rt().pool_mu);
  d->current_pool = pool;
  return CUDA_SUCCESS;
}

CUresult get_default(Device* d, CUmemoryPool* out) {
  std::lock_guard<std::mutex> g(rt().pool_mu);
  *out = handle(default_pool_locked(d));
  return CUDA_SUCCESS;
}

// The CUDA 13 location-based forms: device locations and pinned pools only.
CUresult device_location(const CUmemLocation* loc, const CUmemAllocationType& type, Device** d) {
  if (!loc) return CUDA_ERROR_INVALID_VALUE;
  if (api::raw_enum(type) != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  if (api::raw_enum(loc->type) != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_NOT_SUPPORTED;  // host pools
  return device_of(loc->id, d);
}

}  // namespace

static CUresult impl_cuDeviceGetDefaultMemPool(CUmemoryPool* out, CUdevice dev) {
  Device* d;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = device_of(dev, &d)) return r;
  return get_default(d, out);
}

static CUresult impl_cuDeviceGetMemPool(CUmemoryPool* out, CUdevice dev) {
  Device* d;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = device_of(dev, &d)) return r;
  *out = handle(current_pool(d));
  return CUDA_SUCCESS;
}

static CUresult impl_cuDeviceSetMemPool(CUdevice dev, CUmemoryPool hp) {
  Device* d;
  if (CUresult r = device_of(dev, &d)) return r;
  return set_current(d, hp);
}

static CUresult impl_cuMemGetDefaultMemPool(CUmemoryPool* out, CUmemLocation* loc, const CUmemAllocationType& type) {
  Device* d;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = device_location(loc, type, &d)) return r;
  return get_default(d, out);
}

static CUresult impl_cuMemGetMemPool(CUmemoryPool* out, CUmemLocation* loc, const CUmemAllocationType& type) {
  Device* d;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = device_location(loc, type, &d)) return r;
  *out = handle(current_pool(d));
  return CUDA_SUCCESS;
}

static CUresult impl_cuMemSetMemPool(CUmemLocation* loc, const CUmemAllocationType& type, CUmemoryPool hp) {
  Device* d;
  if (CUresult r = device_location(loc, type, &d)) return r;
  return set_current(d, hp);
}

static CUresult impl_cuMemPoolGetAttribute(CUmemoryPool hp, const CUmemPool_attribute& attr, void* value) {
  MemPool* pool = pool_of(hp);
  if (!pool) return CUDA_ERROR_INVALID_VALUE;
  return pool->get_attribute(api::raw_enum(attr), value);
}

static CUresult impl_cuMemPoolSetAttribute(CUmemoryPool hp, const CUmemPool_attribute& attr, void* value) {
  MemPool* pool = pool_of(hp);
  if (!pool) return CUDA_ERROR_INVALID_VALUE;
  return pool->set_attribute(api::raw_enum(attr), value);
}

// Nothing is cached, so there is nothing to trim.
static CUresult impl_cuMemPoolTrimTo(CUmemoryPool hp, size_t min_bytes_to_keep) { return pool_of(hp) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

// Pools shared between processes (core/ipc.h). A POSIX descriptor travels
// as an int written to handle_out, and as the pointer's value to an import.
static CUresult impl_cuMemPoolExportToShareableHandle(void* handle_out, CUmemoryPool hp,
                                                     const CUmemAllocationHandleType& type, unsigned long long flags) {
  MemPool* pool = pool_of(hp);
  if (!handle_out || !pool || flags != 0 || raw_enum(type) != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
      raw_enum(pool->props.handleTypes) != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || pool->exporter)
    return CUDA_ERROR_INVALID_VALUE;
  int fd = -1;
  if (CUresult r = ipc_pool_export(pool->device->ordinal, &fd)) return r;
  *static_cast<int*>(handle_out) = fd;
  return CUDA_SUCCESS;
}

static CUresult impl_cuMemPoolImportFromShareableHandle(CUmemoryPool* pool_out, void* os_handle,
                                                       const CUmemAllocationHandleType& type, unsigned long long flags) {
  if (!pool_out || flags != 0 || raw_enum(type) != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return CUDA_ERROR_INVALID_VALUE;
  int32_t exporter = 0, device = 0;
  if (CUresult r = ipc_pool_import(static_cast<int>(reinterpret_cast<intptr_t>(os_handle)), &exporter, &device)) return r;
  Device* d;
  if (CUresult r = device_of(device, &d)) return r;
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  MemPool* pool = rt().mempools.create(d, props, false);
  pool->exporter = exporter;
  *pool_out = handle(pool);
  return CUDA_SUCCESS;
}

static CUresult impl_cuMemPoolExportPointer(CUmemPoolPtrExportData* shareData_out, CUdeviceptr ptr) {
  if (!shareData_out) return CUDA_ERROR_INVALID_VALUE;
  return ipc_pool_export_pointer(static_cast<uintptr_t>(ptr), shareData_out);
}

static CUresult impl_cuMemPoolImportPointer(CUdeviceptr* ptr_out, CUmemoryPool hp, CUmemPoolPtrExportData* shareData) {
  MemPool* pool = pool_of(hp);
  if (!ptr_out || !shareData || !pool || !pool->exporter) return CUDA_ERROR_INVALID_VALUE;
  Context* c;
  if (CUresult r = api::current_ctx(&c)) return r;
  uintptr_t p = 0;
  if (CUresult r = ipc_pool_import_pointer(c, pool, *shareData, &p)) return r;
  *ptr_out = static_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

#include "api/entries/mem_pool.inc"
