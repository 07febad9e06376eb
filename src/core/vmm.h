// Virtual memory management: reservations of address space, physical
// allocations, and the mappings between them (cuMemAddressReserve,
// cuMemCreate, cuMemMap, cuMemSetAccess and the rest).
//
// A physical allocation is a memfd of its size, so one allocation can be
// mapped at several addresses and exported as a file descriptor (another
// process that imports it maps the same pages). A mapping is registered in
// the allocation registry as device memory (Allocation::vmm), so copies,
// kernels and pointer queries see it as they see any device memory; its
// pages carry the access cuMemSetAccess granted (none until then), so a
// kernel's access beyond that faults.
//
// Contract: every function is thread-safe (one lock over the three tables,
// never held across a call into user code). The caller (api/vmm.cpp) has
// checked the arguments' shapes: null pointers, flags, locations.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda.h"

namespace cucpu::vmm {

// The granularity of sizes, addresses and alignments (driver 580 on an H200:
// 2 MiB, minimum and recommended alike).
constexpr size_t kGranularity = size_t{2} << 20;

// Access as cuMemSetAccess grants it (CUmemAccess_flags values).
constexpr unsigned kAccessNone = 0, kAccessRead = 1, kAccessReadWrite = 3;

CUresult reserve(size_t size, size_t alignment, uintptr_t hint, uintptr_t* out);
// Frees the reservation [base, base + size) exactly; none of it may be mapped.
CUresult free_reservation(uintptr_t base, size_t size);

// A new physical allocation. A device-located one counts against its
// device's memory (cuMemGetInfo) of `device_total` bytes; 0 for one in host
// memory.
CUresult create(size_t size, const CUmemAllocationProp& prop, size_t device_total, uint64_t* handle);
// A new handle for the memory behind a file descriptor another handle exported.
CUresult import_fd(int fd, uint64_t* handle);
CUresult release(uint64_t handle);
CUresult properties(uint64_t handle, CUmemAllocationProp* out);
// A new descriptor of the allocation (the caller's to close).
CUresult export_fd(uint64_t handle, int* out);

CUresult map(uintptr_t va, size_t size, size_t offset, uint64_t handle);
// Unmaps every mapping in [va, va + size), each of which must lie wholly inside.
CUresult unmap(uintptr_t va, size_t size);
// Grants `flags` to the mappings that tile [va, va + size) exactly.
CUresult set_access(uintptr_t va, size_t size, unsigned flags);
CUresult get_access(uintptr_t va, unsigned* flags);
// The handle of the allocation mapped at va, retained once more.
CUresult retain_handle(uintptr_t va, uint64_t* handle);

// Whether [p, p + n) lies in mappings that follow one another without a
// gap, each granting at least `need`.
bool covers(uintptr_t p, size_t n, unsigned need);
// The reservation that contains p.
bool reservation_of(uintptr_t p, uintptr_t* base, size_t* size);
// The handle types the allocation mapped at p may be exported as.
unsigned long long exportable_types(uintptr_t p);

}  // namespace cucpu::vmm
