#include "core/ipc.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "base/memory_file.h"
#include "core/allocation.h"
#include "core/allocator.h"
#include "core/context.h"
#include "core/mem_pool.h"

namespace cucpu {
namespace {

constexpr char kMagic[8] = {'c', 'u', 'c', 'p', 'u', 'I', 'P', 'C'};

// What a CUipcMemHandle carries: the exporter's memory file, named as
// /proc/PID/fd/FD and checked by its device and inode, and the allocation's size.
struct Wire {
  char magic[8];
  uint64_t dev;
  uint64_t ino;
  uint64_t size;
  int32_t pid;
  int32_t fd;
};
static_assert(sizeof(Wire) <= sizeof(CUipcMemHandle) && sizeof(CUipcMemHandle) == sizeof(CUmemPoolPtrExportData),
              "a handle and a pool's export data hold the wire form");

// One context's mapping of another process's allocation.
struct Import {
  Context* ctx;  // the memory's owner (a primary context for a converted one)
  int32_t pid;
  uint64_t dev, ino;
  uintptr_t base;
  uint64_t alloc_id;  // the registry's: a mapping its context's teardown removed no longer counts
  unsigned opens;
};

std::mutex g_export_mu;  // one export of an allocation at a time
std::mutex g_import_mu;
std::vector<Import> g_imports;  // guarded by g_import_mu

bool write_all(int fd, const void* p, size_t n) {
  const char* at = static_cast<const char*>(p);
  for (off_t off = 0; n;) {
    const ssize_t w = pwrite(fd, at, n, off);
    if (w <= 0) return false;
    at += w, off += w, n -= static_cast<size_t>(w);
  }
  return true;
}

// Moves the allocation's bytes into a memory file mapped shared at the same
// address; the descriptor, or -1.
int share(const Allocation& a) {
  const size_t pages = backing_pages(a.size);
  const int fd = make_memory_file("cucpu-ipc", pages);
  if (fd < 0) return -1;
  void* base = reinterpret_cast<void*>(a.base);
  if (!write_all(fd, base, pages) ||
      mmap(base, pages, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
    close(fd);
    return -1;
  }
  return fd;
}

bool still_mapped(const Import& i) {
  auto a = Registry::instance().find(i.base);
  return a && a->base == i.base && a->id == i.alloc_id;
}

}  // namespace

namespace {

// Writes into a handle's 64 bytes the wire form of the allocation holding
// `p`, if `exportable` accepts it (else INVALID_VALUE), moving it into a
// memory file first if it was never exported.
template <class Exportable>
CUresult export_allocation(uintptr_t p, Exportable exportable, void* handle_bytes) {
  std::lock_guard<std::mutex> g(g_export_mu);
  auto a = Registry::instance().find(p);
  if (!a || a->ipc_import || !exportable(*a)) return CUDA_ERROR_INVALID_VALUE;
  int fd = a->ipc_fd;
  if (fd < 0) {
    fd = share(*a);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    Registry::instance().update(a->base, [fd](Allocation& x) { x.ipc_fd = fd; });
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) return CUDA_ERROR_UNKNOWN;
  Wire w{};
  std::memcpy(w.magic, kMagic, sizeof kMagic);
  w.dev = st.st_dev;
  w.ino = st.st_ino;
  w.size = a->size;
  w.pid = getpid();
  w.fd = fd;
  std::memset(handle_bytes, 0, sizeof(CUipcMemHandle));
  std::memcpy(handle_bytes, &w, sizeof w);
  return CUDA_SUCCESS;
}

// Maps the memory file `w` names, laid out as a device allocation (pages,
// then a guard) so that its release is release_backing's, and registers
// it for context `owner` (and pool `pool`, for a pool's pointer).
CUresult map_wire(const Wire& w, Context* owner, MemPool* pool, uintptr_t* base, uint64_t* id) {
  const size_t pages = backing_pages(w.size);
  const int fd = open_peer_file(w.pid, w.fd, w.dev, w.ino, pages);
  if (fd < 0) return CUDA_ERROR_INVALID_VALUE;  // the exporter is gone, or freed the allocation (driver 580)
  void* region = mmap(nullptr, pages + kGuard, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  const bool mapped = region != MAP_FAILED &&
                      mmap(region, pages, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
  close(fd);
  if (!mapped) {
    if (region != MAP_FAILED) munmap(region, pages + kGuard);
    return CUDA_ERROR_MAP_FAILED;
  }
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(region);
  a.size = w.size;
  a.kind = MemKind::kDevice;
  a.ctx = owner;
  a.pool = pool;
  a.ipc_import = true;
  if (pool) pool->on_alloc(a.size);
  *id = Registry::instance().add(a);
  *base = a.base;
  return CUDA_SUCCESS;
}

// The wire form in a handle's 64 bytes; false for bytes that are no handle.
bool read_wire(const void* bytes, Wire* w) {
  std::memcpy(w, bytes, sizeof *w);
  return std::memcmp(w->magic, kMagic, sizeof kMagic) == 0 && w->size != 0;
}

}  // namespace

CUresult ipc_export(uintptr_t dptr, CUipcMemHandle* out) {
  auto plain_device_memory = [](const Allocation& a) {
    return a.kind == MemKind::kDevice && !a.pool && !a.vmm && !a.module_owned && !a.graph_owned;
  };
  return export_allocation(dptr, plain_device_memory, out->reserved);
}

CUresult ipc_open(Context* c, const CUipcMemHandle& h, uintptr_t* out) {
  Wire w;
  if (!read_wire(h.reserved, &w)) return CUDA_ERROR_INVALID_VALUE;
  if (w.pid == getpid()) return CUDA_ERROR_INVALID_CONTEXT;  // as the driver: never in the exporting process
  Context* owner = c->owner;
  std::lock_guard<std::mutex> g(g_import_mu);
  for (auto it = g_imports.begin(); it != g_imports.end(); ++it) {
    if (it->ctx != owner || it->pid != w.pid || it->dev != w.dev || it->ino != w.ino) continue;
    if (!still_mapped(*it)) {
      g_imports.erase(it);
      break;
    }
    ++it->opens;
    *out = it->base;
    return CUDA_SUCCESS;
  }
  uintptr_t base = 0;
  uint64_t id = 0;
  if (CUresult r = map_wire(w, owner, nullptr, &base, &id)) return r;
  g_imports.push_back({owner, w.pid, w.dev, w.ino, base, id, 1});
  *out = base;
  return CUDA_SUCCESS;
}

CUresult ipc_close(Context* c, uintptr_t dptr) {
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> g(g_import_mu);
    auto it = g_imports.begin();
    while (it != g_imports.end() && !(it->ctx == c->owner && it->base == dptr)) ++it;
    if (it == g_imports.end() || !still_mapped(*it)) return CUDA_ERROR_INVALID_VALUE;
    if (--it->opens > 0) return CUDA_SUCCESS;
    id = it->alloc_id;
    g_imports.erase(it);
  }
  // As cuMemFree: the work already enqueued, which may use it, ends first.
  synchronize_all_contexts();
  auto a = Registry::instance().find(dptr);
  if (a && a->base == dptr && a->id == id) release_allocation(*a);
  return CUDA_SUCCESS;
}

namespace {
constexpr char kPoolMagic[8] = {'c', 'u', 'c', 'p', 'u', 'I', 'P', 'P'};
// What a pool's shareable handle (a memory file) holds: its process.
struct PoolRecord {
  char magic[8];
  int32_t pid;
  int32_t device;  // the pool's device ordinal
};
}  // namespace

CUresult ipc_pool_export(int device, int* fd_out) {
  const int fd = make_memory_file("cucpu-ipc-pool", 0);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  PoolRecord rec{};
  std::memcpy(rec.magic, kPoolMagic, sizeof kPoolMagic);
  rec.pid = getpid();
  rec.device = device;
  if (pwrite(fd, &rec, sizeof rec, 0) != static_cast<ssize_t>(sizeof rec)) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *fd_out = fd;
  return CUDA_SUCCESS;
}

CUresult ipc_pool_import(int fd, int32_t* exporter, int32_t* device) {
  PoolRecord rec{};
  if (fd < 0 || pread(fd, &rec, sizeof rec, 0) != static_cast<ssize_t>(sizeof rec) ||
      std::memcmp(rec.magic, kPoolMagic, sizeof kPoolMagic) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  *exporter = rec.pid;
  *device = rec.device;
  return CUDA_SUCCESS;
}

CUresult ipc_pool_export_pointer(uintptr_t ptr, CUmemPoolPtrExportData* out) {
  auto of_a_shareable_pool = [](const Allocation& a) {
    return a.pool && !a.free_pending && a.pool->props.handleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  };
  return export_allocation(ptr, of_a_shareable_pool, out->reserved);
}

CUresult ipc_pool_import_pointer(Context* c, MemPool* pool, const CUmemPoolPtrExportData& data, uintptr_t* out) {
  Wire w;
  if (!read_wire(data.reserved, &w) || w.pid != pool->exporter) return CUDA_ERROR_INVALID_VALUE;
  uint64_t id = 0;
  return map_wire(w, c->owner, pool, out, &id);
}

}  // namespace cucpu
