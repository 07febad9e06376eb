// Call families: virtual memory management and user objects. Each call is
// one whole sequence (reserve, create, map, grant, use, unmap, release,
// free) with any step's arguments perturbed, cleaned up before it returns:
// no reservation, mapping or handle outlives the family.
#include "harness.h"

#include <unistd.h>

#include <cstdint>

namespace fz {

namespace {

constexpr size_t kGranule = size_t{2} << 20;

CUmemAllocationProp some_prop(Reader& r) {
  CUmemAllocationProp p{};
  p.type = static_cast<CUmemAllocationType>(r.one_in(8) ? r.enum_range(0, 2) : CU_MEM_ALLOCATION_TYPE_PINNED);
  p.location.type = static_cast<CUmemLocationType>(r.one_in(8) ? r.enum_range(0, 4) : CU_MEM_LOCATION_TYPE_DEVICE);
  p.location.id = r.one_in(8) ? static_cast<int>(r.u32()) : 0;
  p.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(r.one_in(4) ? r.flags(0xf) : 0);
  return p;
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CUCPU_FUZZ_TSAN 1
#endif
#endif
// A size: a few granules mostly, else anything (also a reservation's
// alignment, which costs as much address space). Under ThreadSanitizer at
// most 1 GiB: its application ranges are a few terabytes, and reservations
// of any size exhaust them (the kernel then places mappings where
// ThreadSanitizer has no shadow, and it stops the process).
size_t address_space(size_t n) {
#ifdef CUCPU_FUZZ_TSAN
  if (n > (size_t{1} << 30)) n = size_t{1} << 30;
#endif
  return n;
}
// A reservation's address hint. Under ThreadSanitizer none: its mmap
// interceptor drops a hint outside its ranges but keeps MAP_FIXED_NOREPLACE,
// which then asks the kernel for address 0.
CUdeviceptr address_hint(uint64_t v) {
#ifdef CUCPU_FUZZ_TSAN
  return v & 0;
#else
  return static_cast<CUdeviceptr>(v);
#endif
}
size_t some_size(Reader& r, size_t granules) { return address_space(r.one_in(8) ? r.size() : granules * kGranule); }

CUmemAccessDesc some_access(Reader& r) {
  CUmemAccessDesc d{};
  d.location.type = static_cast<CUmemLocationType>(r.one_in(8) ? r.enum_range(0, 4) : CU_MEM_LOCATION_TYPE_DEVICE);
  d.location.id = r.one_in(8) ? static_cast<int>(r.u32()) : 0;
  d.flags = static_cast<CUmemAccess_flags>(r.one_in(8) ? r.enum_range(0, 3) : CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  return d;
}

}  // namespace

void fam_vmm(Reader& r) {
  size_t g = 0;
  CUmemAllocationProp gp = some_prop(r);
  API(cuMemGetAllocationGranularity, r.one_in(16) ? nullptr : &g, &gp,
      static_cast<CUmemAllocationGranularity_flags>(r.enum_range(0, 1)));
  const size_t granules = 1 + r.below(3);
  CUdeviceptr p = 0;
  const size_t reserve_size = some_size(r, granules);
  const CUresult reserved = API(cuMemAddressReserve, r.one_in(16) ? nullptr : &p, reserve_size,
                                r.one_in(8) ? address_space(r.size()) : 0, r.one_in(16) ? address_hint(r.u64()) : 0,
                                r.one_in(16) ? r.u64() : 0);
  CUmemGenericAllocationHandle h = 0, other = 0;
  CUmemAllocationProp prop = some_prop(r);
  const CUresult created = API(cuMemCreate, r.one_in(16) ? nullptr : &h, some_size(r, 1), &prop,
                               r.one_in(16) ? r.u64() : 0);
  size_t mapped_size = 0;
  bool freed = false;  // the reservation, by the junk free below
  if (created == CUDA_SUCCESS && reserved == CUDA_SUCCESS) {
    CUmemAllocationProp back{};
    API(cuMemGetAllocationPropertiesFromHandle, &back, r.one_in(16) ? r.u64() : h);
    // With two threads, addresses stay at the reservation's start: an offset
    // may reach the other thread's reservation, whose mappings its own
    // checks count on (the input program's race, as a CUDA program's).
    const bool stray = r.one_in(8) && !g_pool.two_threads;
    const CUdeviceptr va = stray ? p + r.below(4) * kGranule + (r.one_in(2) ? r.below(64) : 0) : p;
    const size_t size = r.one_in(8) ? r.size() : back.type ? kGranule : 0;
    if (API(cuMemMap, va, size, r.one_in(8) ? r.size() : 0, r.one_in(16) ? r.u64() : h, r.one_in(16) ? r.u64() : 0) ==
        CUDA_SUCCESS)
      mapped_size = va == p && size <= reserve_size ? size : 0;
    CUmemAccessDesc d[2] = {some_access(r), some_access(r)};
    const bool granted = API(cuMemSetAccess, va, r.one_in(8) ? r.size() : size, r.one_in(16) ? nullptr : d,
                             static_cast<size_t>(r.below(3))) == CUDA_SUCCESS;
    unsigned long long flags = 0;
    API(cuMemGetAccess, r.one_in(16) ? nullptr : &flags, &d[0].location, va + r.below(128));
    if (granted && mapped_size) {
      sem_release_all();  // a synchronous memset waits for the legacy stream
      API(cuMemsetD8_v2, p + r.below(4096), static_cast<unsigned char>(r.u8()), r.below(8192));
    }
    CUmemGenericAllocationHandle back_h = 0;
    if (API(cuMemRetainAllocationHandle, &back_h, reinterpret_cast<void*>(static_cast<uintptr_t>(va + r.below(64)))) ==
        CUDA_SUCCESS)
      API(cuMemRelease, back_h);
    int fd = -1;
    if (API(cuMemExportToShareableHandle, &fd, h, static_cast<CUmemAllocationHandleType>(r.enum_range(0, 8)),
            r.one_in(16) ? r.u64() : 0) == CUDA_SUCCESS) {
      if (API(cuMemImportFromShareableHandle, &other, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
              static_cast<CUmemAllocationHandleType>(r.enum_range(0, 2))) != CUDA_SUCCESS)
        other = 0;
      close(fd);
    }
    // A junk unmap or free first: it must leave the rest alone or refuse
    // (a free whose size happens to be the reservation's frees it).
    if (r.one_in(4) && !g_pool.two_threads) API(cuMemUnmap, p + r.below(4) * kGranule, r.one_in(2) ? r.size() : kGranule);
    if (r.one_in(8) && !g_pool.two_threads && API(cuMemAddressFree, p, r.size()) == CUDA_SUCCESS) freed = true;
  }
  if (reserved == CUDA_SUCCESS && !freed) {
    API(cuMemUnmap, p, reserve_size);
    if (API(cuMemAddressFree, p, reserve_size) != CUDA_SUCCESS)
      violated("an unmapped reservation does not free", "cuMemAddressFree(%#llx, %zu)",
               static_cast<unsigned long long>(p), reserve_size);
  }
  if (created == CUDA_SUCCESS && API(cuMemRelease, h) != CUDA_SUCCESS)
    violated("a created handle does not release", "cuMemRelease(%#llx)", static_cast<unsigned long long>(h));
  if (other) API(cuMemRelease, other);
  // A mapping made at a junk address in another thread's reservation holds
  // the memory until that thread unmaps it.
  API(cuMemRelease, r.one_in(8) ? h : r.u64());  // released: refused
}

// CUDA 13's batched prefetch and discard over managed memory of the
// family's own, any argument perturbed, then freed.
void fam_prefetch_batch(Reader& r) {
  CUdeviceptr m[3] = {};
  const int ctx = g_pool.current_ctx_index();
  const size_t n = 1 + r.below(3);
  for (size_t i = 0; i < n; ++i)
    if (API(cuMemAllocManaged, &m[i], size_t{65536}, static_cast<unsigned>(CU_MEM_ATTACH_GLOBAL)) != CUDA_SUCCESS) m[i] = 0;
  CUdeviceptr ptrs[3];
  size_t sizes[3];
  for (size_t i = 0; i < 3; ++i) {
    ptrs[i] = r.one_in(8) ? static_cast<CUdeviceptr>(r.u64()) : m[i % n] + r.below(64);
    sizes[i] = r.one_in(8) ? r.size() : 1 + r.below(4096);
  }
  CUmemLocation locs[2];
  for (auto& l : locs) {
    l.type = static_cast<CUmemLocationType>(r.one_in(4) ? r.enum_range(0, 4) : CU_MEM_LOCATION_TYPE_DEVICE);
    l.id = r.one_in(8) ? static_cast<int>(r.u32()) : 0;
  }
  size_t idx[2] = {r.one_in(8) ? r.below(4) : 0u, 1 + r.below(3)};
  const size_t count = r.one_in(8) ? 0 : 1 + r.below(3);
  const size_t nlocs = r.below(3);  // at most the two locations held here
  const unsigned long long flags = r.one_in(8) ? r.u64() : 0;
  switch (r.below(3)) {
    case 0: API(cuMemPrefetchBatchAsync, ptrs, sizes, count, locs, idx, nlocs, flags, g_pool.pick_stream(r)); break;
    case 1: API(cuMemDiscardBatchAsync, ptrs, sizes, count, flags, g_pool.pick_stream(r)); break;
    default: API(cuMemDiscardAndPrefetchBatchAsync, ptrs, sizes, count, locs, idx, nlocs, flags, g_pool.pick_stream(r)); break;
  }
  sem_release_all();  // the frees below synchronize
  // A free the other thread's capture refuses (STREAM_CAPTURE_UNSUPPORTED):
  // the allocation joins the pool, to be freed when the input ends.
  for (size_t i = 0; i < n; ++i)
    if (m[i] && API(cuMemFree_v2, m[i]) != CUDA_SUCCESS) new_alloc(m[i], 65536, Mem::kManaged, ctx, true);
}

namespace {
void CUDA_CB noop_destroy(void*) {}
}  // namespace

void fam_user_object(Reader& r) {
  CUuserObject u = nullptr;
  const unsigned refs = r.one_in(8) ? r.u32() : 1 + r.below(4);
  void* const data = nullptr;
  if (API(cuUserObjectCreate, r.one_in(16) ? nullptr : &u, data, r.one_in(16) ? nullptr : noop_destroy, refs,
          r.one_in(8) ? r.u32() : CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) != CUDA_SUCCESS)
    return;
  // The caller's references and the graph's, counted as the driver counts
  // them, so that the caller releases exactly its own at the end.
  uint64_t caller = refs, held = 0;
  CUgraph g = nullptr;
  API(cuGraphCreate, &g, 0u);
  const unsigned n = 1 + r.below(3);
  if (API(cuUserObjectRetain, u, r.one_in(8) ? 0u : n) == CUDA_SUCCESS) caller += n;
  const bool move = r.one_in(2) && caller >= n;
  if (API(cuGraphRetainUserObject, g, u, n, move ? static_cast<unsigned>(CU_GRAPH_USER_OBJECT_MOVE) : 0u) ==
      CUDA_SUCCESS) {
    held = n;
    if (move) caller -= n;
  }
  const unsigned k = r.one_in(8) ? 0u : 1u + r.below(2);
  const CUresult released = API(cuGraphReleaseUserObject, g, u, k);
  if (released == CUDA_SUCCESS) {
    if (k == 0 || k > held) violated("a graph released references it does not hold", "cuGraphReleaseUserObject(%u)", k);
    held -= k;
  }
  API(cuGraphDestroy, g);  // the graph's references
  while (caller > 0) {
    const unsigned part = static_cast<unsigned>(caller > 0x7fffffff ? 0x7fffffff : caller);
    if (API(cuUserObjectRelease, u, part) != CUDA_SUCCESS)
      violated("the caller's references do not release", "cuUserObjectRelease(%p, %u)", static_cast<void*>(u), part);
    caller -= part;
  }
}

}  // namespace fz
