// Managed-memory hints and prefetches: cuMemAdvise, cuMemPrefetchAsync and
// cuMemRangeGetAttribute(s). Memory is one address space here, so hints and
// prefetches move nothing; they are validated as the driver validates them,
// remembered, and reported back. A prefetch is a stream op: the location it
// records is reported once the stream reaches it.
#include <cstring>
#include <vector>

#include "api/common.h"
#include "core/allocation.h"
#include "core/ops.h"

using namespace cucpu;
using namespace cucpu::api;

namespace {

using Location = Allocation::Location;
constexpr int kCpu = -1;          // CU_DEVICE_CPU
constexpr int kNoDevice = -2;     // CU_DEVICE_INVALID

// The managed allocation holding [p, p + n), or an error.
CUresult managed_range(CUdeviceptr p, size_t n, Allocation* out) {
  if (p == 0 || n == 0) return CUDA_ERROR_INVALID_VALUE;
  auto a = Registry::instance().find(static_cast<uintptr_t>(p));
  if (!a || a->kind != MemKind::kManaged || !a->contains(static_cast<uintptr_t>(p), n)) return CUDA_ERROR_INVALID_VALUE;
  *out = *a;
  return CUDA_SUCCESS;
}

// A location as advice and prefetch take it; host NUMA locations count as the host.
CUresult read_location(const CUmemLocation& loc, Location* out) {
  const int type = raw_enum(loc.type);
  switch (type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (!device_ok(loc.id)) return CUDA_ERROR_INVALID_DEVICE;
      *out = {type, loc.id};
      return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
      *out = {CU_MEM_LOCATION_TYPE_HOST, 0};
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}
CUmemLocation from_device(CUdevice d) {
  CUmemLocation l{};
  l.type = d == kCpu ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  l.id = d == kCpu ? 0 : d;
  return l;
}
uint32_t location_bit(const Location& l) {
  return l.type == CU_MEM_LOCATION_TYPE_DEVICE ? 2u << l.id : 1u;
}
int as_device(const Location& l) {
  if (l.type == 0) return kNoDevice;
  return l.type == CU_MEM_LOCATION_TYPE_DEVICE ? l.id : kCpu;
}

CUresult advise(CUdeviceptr p, size_t n, const CUmem_advise& advice, const CUmemLocation& where) {
  Allocation a;
  if (CUresult r = managed_range(p, n, &a)) return r;
  const int what = raw_enum(advice);
  Location loc;
  const bool needs_location = what == CU_MEM_ADVISE_SET_PREFERRED_LOCATION || what == CU_MEM_ADVISE_SET_ACCESSED_BY ||
                              what == CU_MEM_ADVISE_UNSET_ACCESSED_BY;
  if (what < CU_MEM_ADVISE_SET_READ_MOSTLY || what > CU_MEM_ADVISE_UNSET_ACCESSED_BY) return CUDA_ERROR_INVALID_VALUE;
  if (needs_location)
    if (CUresult r = read_location(where, &loc)) return r;
  Registry::instance().update(a.base, [&](Allocation& m) {
    switch (what) {
      case CU_MEM_ADVISE_SET_READ_MOSTLY: m.read_mostly = true; break;
      case CU_MEM_ADVISE_UNSET_READ_MOSTLY: m.read_mostly = false; break;
      case CU_MEM_ADVISE_SET_PREFERRED_LOCATION: m.preferred = loc; break;
      case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION: m.preferred = {}; break;
      case CU_MEM_ADVISE_SET_ACCESSED_BY: m.accessed_by |= location_bit(loc); break;
      case CU_MEM_ADVISE_UNSET_ACCESSED_BY: m.accessed_by &= ~location_bit(loc); break;
    }
  });
  return CUDA_SUCCESS;
}

CUresult prefetch(NullStream ns, CUdeviceptr p, size_t n, const CUmemLocation& where, unsigned flags, CUstream h) {
  Stream* s;
  if (CUresult r = stream_handle(h, ns, &s)) return r;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Location loc;
  if (CUresult r = read_location(where, &loc)) return r;
  Allocation a;
  if (CUresult r = managed_range(p, n, &a)) return r;
  Route route;  // a prefetch is not captured into graphs here
  if (CUresult r = refuse_during_capture(s, &route)) return r;
  const uintptr_t base = a.base;
  s->enqueue(new FunctionOp([base, loc] {
    Registry::instance().update(base, [&](Allocation& m) { m.last_prefetch = loc; });
  }));
  return CUDA_SUCCESS;
}
// The batched forms (CUDA 13). Every range and location is checked before
// anything is enqueued (driver 580: INVALID_VALUE for any bad one);
// location j applies from operation loc_idxs[j] on (the first at 0, each
// later one further on). One stream op records the prefetches. A discard
// leaves the bytes as they are (their contents become undefined; driver
// 580 leaves them too), so it enqueues nothing.
CUresult batch(NullStream ns, CUdeviceptr* dptrs, size_t* sizes, size_t count, const CUmemLocation* locs,
               const size_t* loc_idxs, size_t nlocs, unsigned long long flags, CUstream h, bool prefetches) {
  Stream* s;
  if (CUresult r = stream_handle(h, ns, &s)) return r;
  if (!dptrs || !sizes || count == 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  std::vector<Location> where;
  if (prefetches) {
    if (!locs || !loc_idxs || nlocs == 0 || nlocs > count || loc_idxs[0] != 0) return CUDA_ERROR_INVALID_VALUE;
    where.resize(nlocs);
    for (size_t j = 0; j < nlocs; ++j) {
      if (j > 0 && (loc_idxs[j] <= loc_idxs[j - 1] || loc_idxs[j] >= count)) return CUDA_ERROR_INVALID_VALUE;
      if (read_location(locs[j], &where[j]) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
    }
  }
  std::vector<std::pair<uintptr_t, Location>> records;
  size_t j = 0;
  for (size_t i = 0; i < count; ++i) {
    Allocation a;
    if (managed_range(dptrs[i], sizes[i], &a) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
    if (!prefetches) continue;
    if (j + 1 < nlocs && loc_idxs[j + 1] == i) ++j;
    records.emplace_back(a.base, where[j]);
  }
  Route route;  // not captured into graphs here, as a single prefetch
  if (CUresult r = refuse_during_capture(s, &route)) return r;
  if (prefetches)
    s->enqueue(new FunctionOp([records = std::move(records)] {
      for (const auto& record : records)
        Registry::instance().update(record.first, [&](Allocation& m) { m.last_prefetch = record.second; });
    }));
  return CUDA_SUCCESS;
}
CUresult prefetch_batch(NullStream ns, CUdeviceptr* dptrs, size_t* sizes, size_t count, CUmemLocation* locs,
                        size_t* loc_idxs, size_t nlocs, unsigned long long flags, CUstream h) {
  return batch(ns, dptrs, sizes, count, locs, loc_idxs, nlocs, flags, h, true);
}
CUresult discard_batch(NullStream ns, CUdeviceptr* dptrs, size_t* sizes, size_t count, unsigned long long flags,
                       CUstream h) {
  return batch(ns, dptrs, sizes, count, nullptr, nullptr, 0, flags, h, false);
}

CUresult prefetch_v1(NullStream ns, CUdeviceptr p, size_t n, CUdevice dst, CUstream h) {
  return prefetch(ns, p, n, from_device(dst), 0, h);
}

CUresult range_attribute(void* data, size_t size, int attr, CUdeviceptr p, size_t n) {
  if (!data || size == 0) return CUDA_ERROR_INVALID_VALUE;
  Allocation a;
  if (CUresult r = managed_range(p, n, &a)) return r;
  auto put = [&](int v) {
    if (size != sizeof(int)) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(data, &v, sizeof v);
    return CUDA_SUCCESS;
  };
  switch (attr) {
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: return put(a.read_mostly ? 1 : 0);
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION: return put(as_device(a.preferred));
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION: return put(as_device(a.last_prefetch));
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE: return put(a.preferred.type);
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID: return put(a.preferred.id);
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE: return put(a.last_prefetch.type);
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: return put(a.last_prefetch.id);
    case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
      if (size % sizeof(int) != 0) return CUDA_ERROR_INVALID_VALUE;
      auto* out = static_cast<int*>(data);
      const size_t slots = size / sizeof(int);
      size_t k = 0;
      if ((a.accessed_by & 1u) && k < slots) out[k++] = kCpu;
      for (int d = 0; d < 31 && k < slots; ++d)
        if (a.accessed_by & (2u << d)) out[k++] = d;
      while (k < slots) out[k++] = kNoDevice;
      return CUDA_SUCCESS;
    }
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // namespace

static CUresult impl_cuMemAdvise(CUdeviceptr devPtr, size_t count, const CUmem_advise& advice, CUdevice device) { return advise(devPtr, count, advice, from_device(device)); }

static CUresult impl_cuMemRangeGetAttribute(void* data, size_t dataSize, const CUmem_range_attribute& attribute,
                                            CUdeviceptr devPtr, size_t count) { return range_attribute(data, dataSize, raw_enum(attribute), devPtr, count); }
static CUresult impl_cuMemRangeGetAttributes(void** data, size_t* dataSizes, CUmem_range_attribute* attributes,
                                             size_t numAttributes, CUdeviceptr devPtr, size_t count) {
  if (!data || !dataSizes || !attributes || numAttributes == 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < numAttributes; ++i)
    if (CUresult r = range_attribute(data[i], dataSizes[i], raw_enum(attributes[i]), devPtr, count)) return r;
  return CUDA_SUCCESS;
}

// No profiler is ever attached to cucpu: starting and stopping collection
// succeed and collect nothing, as with NVIDIA's driver when no profiler runs.
static CUresult impl_cuProfilerStart(void) {
  Context* c;
  return current_ctx(&c);
}

#include "api/entries/managed.inc"
