// Virtual memory management (core/vmm.h): the reservation, allocation and
// mapping tables, and the address-space operations behind them.
#include "core/vmm.h"

#include <map>
#include <memory>
#include <mutex>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/checked_math.h"
#include "base/memory_file.h"
#include "core/allocation.h"
#include "core/check.h"

namespace cucpu::vmm {
namespace {

// A physical allocation. Lives while a handle names it (handle_refs) or an
// address maps it (the mappings' shared_ptrs); its pages live on in the
// kernel while any mapping of them does.
struct Physical {
  int fd = -1;
  size_t size = 0;
  CUmemAllocationProp prop{};
  bool device_memory = false;  // counted in the registry's device bytes
  uint64_t handle_refs = 1;    // guarded by the tables' lock
  ~Physical() {
    if (fd >= 0) close(fd);
    if (device_memory) Registry::instance().remove_device_bytes(size);
  }
};

struct Mapping {
  size_t size = 0;
  std::shared_ptr<Physical> memory;
  uint64_t handle = 0;
  uint64_t registry_id = 0;
  unsigned access = kAccessNone;
};

struct Tables {
  std::mutex mu;
  std::map<uintptr_t, size_t> reservations;                    // base -> size
  std::map<uint64_t, std::shared_ptr<Physical>> handles;  // live handles only (never reused)
  std::map<uintptr_t, Mapping> mappings;                  // base -> mapping
  uint64_t next_handle = 1;
};

Tables& tables() {
  static Tables* t = new Tables();  // outlives static destruction
  return *t;
}

bool aligned(uintptr_t v) { return v % kGranularity == 0; }

// The reservation holding [p, p + n), or end(). Caller holds the lock.
std::map<uintptr_t, size_t>::iterator reservation_holding(Tables& t, uintptr_t p, size_t n) {
  auto it = t.reservations.upper_bound(p);
  if (it == t.reservations.begin()) return t.reservations.end();
  --it;
  const uintptr_t base = it->first;
  const size_t size = it->second;
  if (p - base >= size || n > size - (p - base)) return t.reservations.end();
  return it;
}

// The mapping containing p, or end(). Caller holds the lock.
std::map<uintptr_t, Mapping>::iterator mapping_at(Tables& t, uintptr_t p) {
  auto it = t.mappings.upper_bound(p);
  if (it == t.mappings.begin()) return t.mappings.end();
  --it;
  return p - it->first < it->second.size ? it : t.mappings.end();
}

// Address space of our own at exactly [va, va + size), inaccessible and
// backed by nothing: what a reservation is between its mappings.
bool map_reserved(uintptr_t va, size_t size) {
  void* p = mmap(reinterpret_cast<void*>(va), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
                 -1, 0);
  return p != MAP_FAILED;
}

int protection(unsigned access) {
  if (access == kAccessReadWrite) return PROT_READ | PROT_WRITE;
  return access == kAccessRead ? PROT_READ : PROT_NONE;
}

// Finds the physical allocation a live handle names, or null. Caller holds the lock.
std::shared_ptr<Physical> live(Tables& t, uint64_t handle) {
  auto it = t.handles.find(handle);
  return it == t.handles.end() ? nullptr : it->second;
}

uint64_t add_handle(Tables& t, std::shared_ptr<Physical> m) {
  const uint64_t h = t.next_handle++;
  t.handles.emplace(h, std::move(m));
  return h;
}

}  // namespace

constexpr uintptr_t kLowestHint = uintptr_t{1} << 32;

CUresult reserve(size_t size, size_t alignment, uintptr_t hint, uintptr_t* out) {
  if (size == 0 || !aligned(size) || !aligned(hint)) return CUDA_ERROR_INVALID_VALUE;
  if (alignment & (alignment - 1)) return CUDA_ERROR_INVALID_VALUE;  // a power of two, or 0
  const size_t align = alignment > kGranularity ? alignment : kGranularity;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  void* p = MAP_FAILED;
  // A hint is only that (the driver may place the range elsewhere): one in
  // the low 4 GiB, where a process keeps its null page and binary, is not taken.
  if (hint >= kLowestHint && hint % align == 0) {
    p = mmap(reinterpret_cast<void*>(hint), size, PROT_NONE, flags | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED && reinterpret_cast<uintptr_t>(p) != hint) {  // a kernel that takes the flag as a hint
      munmap(p, size);
      p = MAP_FAILED;
    }
  }
  if (p == MAP_FAILED) {
    size_t padded;
    if (!checked_add(size, align, &padded)) return CUDA_ERROR_OUT_OF_MEMORY;
    void* raw = mmap(nullptr, padded, PROT_NONE, flags, -1, 0);
    if (raw == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t base = (start + align - 1) / align * align;
    if (base > start) munmap(raw, base - start);
    if (start + padded > base + size) munmap(reinterpret_cast<void*>(base + size), start + padded - (base + size));
    p = reinterpret_cast<void*>(base);
  }
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  t.reservations.emplace(reinterpret_cast<uintptr_t>(p), size);
  *out = reinterpret_cast<uintptr_t>(p);
  return CUDA_SUCCESS;
}

CUresult free_reservation(uintptr_t base, size_t size) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  auto it = t.reservations.find(base);
  if (it == t.reservations.end() || it->second != size) return CUDA_ERROR_INVALID_VALUE;
  auto m = t.mappings.lower_bound(base);
  if (m != t.mappings.end() && m->first - base < size) return CUDA_ERROR_INVALID_VALUE;  // still mapped
  munmap(reinterpret_cast<void*>(base), size);
  t.reservations.erase(it);
  return CUDA_SUCCESS;
}

CUresult create(size_t size, const CUmemAllocationProp& prop, size_t device_total, uint64_t* handle) {
  if (size == 0 || !aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  Registry& reg = Registry::instance();
  const bool device_memory = device_total != 0;
  if (device_memory) {
    // The device's memory is used up as by cuMemAlloc (checked without a
    // lock: concurrent allocations may overshoot by one).
    const size_t used = reg.device_bytes();
    if (size > device_total - (used < device_total ? used : device_total)) return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const int fd = make_memory_file("cucpu-vmm", size);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  auto m = std::make_shared<Physical>();
  m->fd = fd;
  m->size = size;
  m->prop = prop;
  if (device_memory) {
    reg.add_device_bytes(size);
    m->device_memory = true;
  }
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  *handle = add_handle(t, std::move(m));
  return CUDA_SUCCESS;
}

CUresult import_fd(int fd, uint64_t* handle) {
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) return CUDA_ERROR_UNKNOWN;  // driver 580 for a descriptor that is none
  const size_t size = static_cast<size_t>(st.st_size);
  if (!S_ISREG(st.st_mode) || size == 0 || !aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  auto m = std::make_shared<Physical>();
  m->fd = own;
  m->size = size;
  // What an imported handle reads back (driver 580): a pinned allocation
  // of device 0's, with no handle types of its own.
  m->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  m->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  m->prop.location.id = 0;
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  *handle = add_handle(t, std::move(m));
  return CUDA_SUCCESS;
}

CUresult release(uint64_t handle) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  auto it = t.handles.find(handle);
  if (it == t.handles.end()) return CUDA_ERROR_INVALID_VALUE;
  // The last handle reference goes; mappings keep the memory, and
  // cuMemRetainAllocationHandle can name it by the same handle again.
  if (--it->second->handle_refs == 0) t.handles.erase(it);
  return CUDA_SUCCESS;
}

CUresult properties(uint64_t handle, CUmemAllocationProp* out) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  std::shared_ptr<Physical> m = live(t, handle);
  if (!m) return CUDA_ERROR_INVALID_VALUE;
  *out = m->prop;
  return CUDA_SUCCESS;
}

CUresult export_fd(uint64_t handle, int* out) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  std::shared_ptr<Physical> m = live(t, handle);
  if (!m || !(m->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    return CUDA_ERROR_INVALID_VALUE;
  const int fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *out = fd;
  return CUDA_SUCCESS;
}

CUresult map(uintptr_t va, size_t size, size_t offset, uint64_t handle) {
  if (va == 0) return CUDA_ERROR_INVALID_VALUE;
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  std::shared_ptr<Physical> m = live(t, handle);
  if (!m) return CUDA_ERROR_INVALID_VALUE;
  // Driver 580 maps a whole allocation from its start, nothing else.
  if (offset != 0 || size != m->size) return CUDA_ERROR_NOT_SUPPORTED;
  if (!aligned(va)) return CUDA_ERROR_INVALID_VALUE;
  if (reservation_holding(t, va, size) == t.reservations.end()) return CUDA_ERROR_INVALID_VALUE;
  auto next = t.mappings.lower_bound(va);
  if (next != t.mappings.end() && next->first - va < size) return CUDA_ERROR_INVALID_VALUE;
  if (mapping_at(t, va) != t.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
  void* p = mmap(reinterpret_cast<void*>(va), size, PROT_NONE, MAP_SHARED | MAP_FIXED, m->fd, 0);
  if (p == MAP_FAILED) {
    map_reserved(va, size);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  Allocation a;
  a.base = va;
  a.size = size;
  a.kind = MemKind::kDevice;
  a.vmm = true;
  a.access = kAccessNone;
  a.id = Registry::instance().add(a);
  if (check::on()) [[unlikely]] check::memory_renewed(a);
  Mapping mapping;
  mapping.size = size;
  mapping.handle = handle;
  mapping.registry_id = a.id;
  mapping.memory = std::move(m);
  t.mappings.emplace(va, std::move(mapping));
  return CUDA_SUCCESS;
}

CUresult unmap(uintptr_t va, size_t size) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  if (va == 0 || size == 0 || !aligned(va) || !aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  if (reservation_holding(t, va, size) == t.reservations.end()) return CUDA_ERROR_INVALID_VALUE;
  // Every mapping the range touches must lie wholly inside it; parts of the
  // range that nothing maps are fine (driver 580).
  auto first = mapping_at(t, va);
  if (first != t.mappings.end() && first->first < va) return CUDA_ERROR_INVALID_VALUE;
  auto it = t.mappings.lower_bound(va);
  auto end = it;
  for (; end != t.mappings.end() && end->first - va < size; ++end)
    if (end->second.size > size - (end->first - va)) return CUDA_ERROR_INVALID_VALUE;
  // Work still running on the memory faults where it touches it, as on
  // memory freed under it. The physical allocation goes with its last
  // mapping once no handle names it (the shared_ptr, under the lock: its
  // destructor takes only the registry's lock, never this one).
  for (; it != end; it = t.mappings.erase(it)) {
    if (check::on()) [[unlikely]] check::memory_released(it->first);
    Registry::instance().remove_id(it->first, it->second.registry_id);
    map_reserved(it->first, it->second.size);
  }
  return CUDA_SUCCESS;
}

CUresult set_access(uintptr_t va, size_t size, unsigned flags) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  if (va == 0 || size == 0 || !aligned(va) || !aligned(size)) return CUDA_ERROR_INVALID_VALUE;
  // The range must be tiled by whole mappings, one after another.
  auto it = t.mappings.find(va);
  uintptr_t at = va;
  auto end = it;
  for (; at - va < size; ++end) {
    if (end == t.mappings.end() || end->first != at || end->second.size > size - (at - va))
      return CUDA_ERROR_INVALID_VALUE;
    at += end->second.size;
  }
  for (; it != end; ++it) {
    if (mprotect(reinterpret_cast<void*>(it->first), it->second.size, protection(flags)) != 0)
      return CUDA_ERROR_OUT_OF_MEMORY;
    it->second.access = flags;
    Registry::instance().set_access(it->first, static_cast<uint8_t>(flags));
  }
  return CUDA_SUCCESS;
}

CUresult get_access(uintptr_t va, unsigned* flags) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  auto it = mapping_at(t, va);
  if (it == t.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
  *flags = it->second.access;
  return CUDA_SUCCESS;
}

CUresult retain_handle(uintptr_t va, uint64_t* handle) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  auto it = mapping_at(t, va);
  if (it == t.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t h = it->second.handle;
  auto live_it = t.handles.find(h);
  if (live_it != t.handles.end()) {
    ++live_it->second->handle_refs;
  } else {  // released while mapped: the handle names the memory again
    it->second.memory->handle_refs = 1;
    t.handles.emplace(h, it->second.memory);
  }
  *handle = h;
  return CUDA_SUCCESS;
}

bool covers(uintptr_t p, size_t n, unsigned need) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  auto it = mapping_at(t, p);
  for (uintptr_t at = p;;) {
    if (it == t.mappings.end() || it->first > at || (it->second.access & need) != need) return false;
    const uintptr_t mapped_end = it->first + it->second.size;
    if (mapped_end - p >= n) return true;
    at = mapped_end;
    ++it;
  }
}

bool reservation_of(uintptr_t p, uintptr_t* base, size_t* size) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  auto it = reservation_holding(t, p, 1);
  if (it == t.reservations.end()) return false;
  *base = it->first;
  *size = it->second;
  return true;
}

unsigned long long exportable_types(uintptr_t p) {
  Tables& t = tables();
  std::lock_guard lock(t.mu);
  auto it = mapping_at(t, p);
  return it == t.mappings.end() ? 0 : it->second.memory->prop.requestedHandleTypes;
}

}  // namespace cucpu::vmm
