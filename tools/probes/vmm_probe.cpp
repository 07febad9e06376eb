// A probe for docs/conformance.md (build against any libcuda.so.1 and run;
// each case runs in a child process of its own): what a driver answers for
// virtual memory management (cuMemAddressReserve, cuMemCreate, cuMemMap,
// cuMemSetAccess and the rest), good input and bad.
//   g++ -std=c++17 -I$CUDA/include tools/probes/vmm_probe.cpp -lcuda -o /tmp/vmm_probe && /tmp/vmm_probe
#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

const char* name_of(CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  return n ? n : "?";
}
#define SAY(expr) std::printf("  %-60s %s\n", #expr, name_of(expr))
#define VAL(label, v) std::printf("  %-60s %llu\n", label, static_cast<unsigned long long>(v))

CUmemAllocationProp device_prop() {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  return p;
}
CUmemAccessDesc rw() {
  CUmemAccessDesc d{};
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = 0;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return d;
}

size_t g;  // the minimum granularity

// Reserves `n` granules, creates one handle of `m` granules and maps it at the start.
struct Mapped {
  CUdeviceptr p = 0;
  CUmemGenericAllocationHandle h = 0;
};
Mapped map_one(size_t n, size_t m, bool access) {
  Mapped x;
  CUmemAllocationProp prop = device_prop();
  if (cuMemAddressReserve(&x.p, n * g, 0, 0, 0) || cuMemCreate(&x.h, m * g, &prop, 0) ||
      cuMemMap(x.p, m * g, 0, x.h, 0))
    std::printf("  setup failed\n");
  if (access) {
    CUmemAccessDesc d = rw();
    if (cuMemSetAccess(x.p, m * g, &d, 1)) std::printf("  setup access failed\n");
  }
  return x;
}

void case_granularity() {
  CUmemAllocationProp prop = device_prop();
  size_t min = 0, rec = 0;
  SAY(cuMemGetAllocationGranularity(&min, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  SAY(cuMemGetAllocationGranularity(&rec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  VAL("minimum", min);
  VAL("recommended", rec);
  SAY(cuMemGetAllocationGranularity(nullptr, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  SAY(cuMemGetAllocationGranularity(&min, nullptr, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  SAY(cuMemGetAllocationGranularity(&min, &prop, static_cast<CUmemAllocationGranularity_flags>(2)));
  CUmemAllocationProp bad = prop;
  bad.location.id = 9;
  SAY(cuMemGetAllocationGranularity(&min, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  bad = prop;
  bad.type = CU_MEM_ALLOCATION_TYPE_INVALID;
  SAY(cuMemGetAllocationGranularity(&min, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  bad = prop;
  bad.location.type = CU_MEM_LOCATION_TYPE_HOST;
  SAY(cuMemGetAllocationGranularity(&min, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  VAL("host granularity", min);
  bad = prop;
  bad.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  SAY(cuMemGetAllocationGranularity(&min, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  int attr = -1;
  SAY(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
  VAL("VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED", attr);
  SAY(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0));
  VAL("HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED", attr);
}

void case_reserve() {
  CUdeviceptr p = 0;
  SAY(cuMemAddressReserve(&p, 4 * g, 0, 0, 0));
  VAL("reserved % granularity", p % g);
  SAY(cuMemAddressFree(p, 2 * g));
  SAY(cuMemAddressFree(p + g, 3 * g));
  SAY(cuMemAddressFree(p, 4 * g));
  SAY(cuMemAddressFree(p, 4 * g));
  SAY(cuMemAddressReserve(nullptr, g, 0, 0, 0));
  SAY(cuMemAddressReserve(&p, 0, 0, 0, 0));
  SAY(cuMemAddressReserve(&p, g + 1, 0, 0, 0));
  SAY(cuMemAddressReserve(&p, g, 3, 0, 0));
  SAY(cuMemAddressReserve(&p, g, 0, 0, 1));
  CUdeviceptr q = 0;
  SAY(cuMemAddressReserve(&q, g, 16 * g, 0, 0));
  VAL("aligned reserve % 16g", q % (16 * g));
  CUdeviceptr hint = q + 64 * g;
  SAY(cuMemAddressReserve(&p, g, 0, hint, 0));
  VAL("hint honoured", p == hint);
  CUdeviceptr r = 0;
  SAY(cuMemAddressReserve(&r, g, 0, p, 0));
  VAL("hint of a taken range honoured", r == p);
  SAY(cuMemAddressReserve(&r, g, 0, hint + 1, 0));
  SAY(cuMemAddressFree(0, g));
  SAY(cuMemAddressFree(p, 0));
}

void case_create() {
  CUmemAllocationProp prop = device_prop();
  CUmemGenericAllocationHandle h = 0;
  SAY(cuMemCreate(&h, g, &prop, 0));
  VAL("handle nonzero", h != 0);
  CUmemAllocationProp back{};
  SAY(cuMemGetAllocationPropertiesFromHandle(&back, h));
  VAL("back.type", back.type);
  VAL("back.location.type", back.location.type);
  VAL("back.location.id", back.location.id);
  VAL("back.requestedHandleTypes", back.requestedHandleTypes);
  SAY(cuMemRelease(h));
  SAY(cuMemRelease(h));
  SAY(cuMemRelease(0));
  SAY(cuMemCreate(nullptr, g, &prop, 0));
  SAY(cuMemCreate(&h, 0, &prop, 0));
  SAY(cuMemCreate(&h, g + 1, &prop, 0));
  SAY(cuMemCreate(&h, g, nullptr, 0));
  SAY(cuMemCreate(&h, g, &prop, 1));
  CUmemAllocationProp bad = prop;
  bad.location.id = 9;
  SAY(cuMemCreate(&h, g, &bad, 0));
  bad = prop;
  bad.type = CU_MEM_ALLOCATION_TYPE_INVALID;
  SAY(cuMemCreate(&h, g, &bad, 0));
  bad = prop;
  bad.requestedHandleTypes = CU_MEM_HANDLE_TYPE_WIN32;
  SAY(cuMemCreate(&h, g, &bad, 0));
  bad = prop;
  bad.location.type = CU_MEM_LOCATION_TYPE_HOST;
  CUresult r = cuMemCreate(&h, g, &bad, 0);
  std::printf("  %-60s %s\n", "cuMemCreate(host location)", name_of(r));
  if (r == CUDA_SUCCESS) cuMemRelease(h);
  SAY(cuMemGetAllocationPropertiesFromHandle(nullptr, h));
}

void case_map() {
  CUmemAllocationProp prop = device_prop();
  CUdeviceptr p = 0;
  SAY(cuMemAddressReserve(&p, 4 * g, 0, 0, 0));
  CUmemGenericAllocationHandle h = 0, h2 = 0;
  SAY(cuMemCreate(&h, 2 * g, &prop, 0));
  SAY(cuMemCreate(&h2, g, &prop, 0));
  SAY(cuMemMap(p, 2 * g, 0, h, 1));
  SAY(cuMemMap(p, 2 * g, g, h, 0));
  SAY(cuMemMap(p, g, 0, h, 0));
  SAY(cuMemMap(p, 3 * g, 0, h, 0));
  SAY(cuMemMap(p + 1, 2 * g, 0, h, 0));
  SAY(cuMemMap(p + 3 * g, 2 * g, 0, h, 0));
  SAY(cuMemMap(p, 2 * g, 0, 0, 0));
  SAY(cuMemMap(0, 2 * g, 0, h, 0));
  SAY(cuMemMap(p, 2 * g, 0, h, 0));
  SAY(cuMemMap(p, 2 * g, 0, h, 0));
  SAY(cuMemMap(p + g, g, 0, h2, 0));
  SAY(cuMemMap(p + 2 * g, g, 0, h2, 0));
  CUdeviceptr unreserved = 0;
  SAY(cuMemAlloc(&unreserved, g));
  SAY(cuMemMap(unreserved, g, 0, h2, 0));
  SAY(cuMemFree(unreserved));
  SAY(cuMemUnmap(p, g));
  SAY(cuMemUnmap(p + g, 2 * g));
  SAY(cuMemUnmap(p, 3 * g));
  SAY(cuMemUnmap(p + 3 * g, g));
  SAY(cuMemAddressFree(p, 4 * g));
  SAY(cuMemUnmap(p, 2 * g));
  SAY(cuMemUnmap(p, 2 * g));
  SAY(cuMemUnmap(p + 2 * g, g));
  SAY(cuMemRelease(h));
  SAY(cuMemRelease(h2));
  SAY(cuMemAddressFree(p, 4 * g));
}

void case_access() {
  Mapped m = map_one(4, 2, false);
  unsigned long long flags = 77;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  SAY(cuMemGetAccess(&flags, &loc, m.p));
  VAL("access before set", flags);
  CUmemAccessDesc d = rw();
  SAY(cuMemSetAccess(m.p, 2 * g, nullptr, 1));
  SAY(cuMemSetAccess(m.p, 2 * g, &d, 0));
  SAY(cuMemSetAccess(m.p, 3 * g, &d, 1));
  SAY(cuMemSetAccess(m.p + 1, g, &d, 1));
  SAY(cuMemSetAccess(m.p + 2 * g, g, &d, 1));
  CUmemAccessDesc host = d;
  host.location.type = CU_MEM_LOCATION_TYPE_HOST;
  SAY(cuMemSetAccess(m.p, 2 * g, &host, 1));
  CUmemAccessDesc bad = d;
  bad.location.id = 9;
  SAY(cuMemSetAccess(m.p, 2 * g, &bad, 1));
  bad = d;
  bad.flags = static_cast<CUmemAccess_flags>(2);
  SAY(cuMemSetAccess(m.p, 2 * g, &bad, 1));
  SAY(cuMemSetAccess(m.p, g, &d, 1));
  SAY(cuMemGetAccess(&flags, &loc, m.p));
  VAL("access after set of the first granule", flags);
  SAY(cuMemGetAccess(&flags, &loc, m.p + g));
  VAL("access of the second granule", flags);
  SAY(cuMemSetAccess(m.p, 2 * g, &d, 1));
  SAY(cuMemGetAccess(&flags, &loc, m.p + g + 5));
  VAL("access of an interior address", flags);
  SAY(cuMemGetAccess(&flags, &loc, m.p + 3 * g));
  SAY(cuMemGetAccess(nullptr, &loc, m.p));
  SAY(cuMemGetAccess(&flags, nullptr, m.p));
  CUmemLocation hl{CU_MEM_LOCATION_TYPE_HOST, 0};
  SAY(cuMemGetAccess(&flags, &hl, m.p));
  VAL("host access", flags);
  CUmemAccessDesc ro = d;
  ro.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
  SAY(cuMemSetAccess(m.p, 2 * g, &ro, 1));
  SAY(cuMemGetAccess(&flags, &loc, m.p));
  VAL("access after read-only", flags);
  std::vector<unsigned char> buf(g, 1);
  SAY(cuMemcpyDtoH(buf.data(), m.p, g));
  CUresult r = cuMemcpyHtoD(m.p, buf.data(), g);
  std::printf("  %-60s %s\n", "HtoD into read-only", name_of(r));
  std::printf("  %-60s %s\n", "ctx sync after", name_of(cuCtxSynchronize()));
}

void case_no_access_copy() {
  Mapped m = map_one(2, 1, false);
  std::vector<unsigned char> buf(g, 1);
  std::printf("  %-60s %s\n", "HtoD before any access", name_of(cuMemcpyHtoD(m.p, buf.data(), 4096)));
  std::printf("  %-60s %s\n", "ctx sync after", name_of(cuCtxSynchronize()));
}

void case_unmapped_copy() {
  Mapped m = map_one(2, 1, true);
  std::vector<unsigned char> buf(2 * g, 1);
  std::printf("  %-60s %s\n", "DtoH across the mapped and unmapped granule",
              name_of(cuMemcpyDtoH(buf.data(), m.p, 2 * g)));
  std::printf("  %-60s %s\n", "ctx sync after", name_of(cuCtxSynchronize()));
  std::printf("  %-60s %s\n", "DtoH of the unmapped granule", name_of(cuMemcpyDtoH(buf.data(), m.p + g, 64)));
  std::printf("  %-60s %s\n", "ctx sync after", name_of(cuCtxSynchronize()));
}

void case_use() {
  // Two handles side by side: one copy spans them.
  CUmemAllocationProp prop = device_prop();
  CUdeviceptr p = 0;
  CUmemGenericAllocationHandle a = 0, b = 0;
  SAY(cuMemAddressReserve(&p, 2 * g, 0, 0, 0));
  SAY(cuMemCreate(&a, g, &prop, 0));
  SAY(cuMemCreate(&b, g, &prop, 0));
  SAY(cuMemMap(p, g, 0, a, 0));
  SAY(cuMemMap(p + g, g, 0, b, 0));
  CUmemAccessDesc d = rw();
  SAY(cuMemSetAccess(p, 2 * g, &d, 1));
  std::vector<unsigned char> in(2 * g), out(2 * g);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  SAY(cuMemcpyHtoD(p, in.data(), 2 * g));
  SAY(cuMemcpyDtoH(out.data(), p, 2 * g));
  VAL("spanning copy round trip equal", in == out);
  SAY(cuMemsetD8(p + g - 8, 0x5a, 16));
  CUdeviceptr base = 0;
  size_t size = 0;
  SAY(cuMemGetAddressRange(&base, &size, p + g + 100));
  VAL("range base - p", base - p);
  VAL("range size / g", size / g);
  CUmemorytype mt{};
  SAY(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 10));
  VAL("memory type", mt);
  CUdeviceptr start = 0;
  SAY(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + g + 10));
  VAL("range start - p", start - p);
  size_t rsize = 0;
  SAY(cuPointerGetAttribute(&rsize, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + g + 10));
  VAL("range size / g", rsize / g);
  int mapped = -1;
  SAY(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, p + 10));
  VAL("MAPPED", mapped);
  CUmemGenericAllocationHandle ah = 0;
  SAY(cuPointerGetAttribute(&ah, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p + 10));
  VAL("ALLOWED_HANDLE_TYPES", ah);
  size_t msize = 0;
  SAY(cuPointerGetAttribute(&msize, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, p + g + 10));
  VAL("MAPPING_SIZE / g", msize / g);
  CUdeviceptr mbase = 0;
  SAY(cuPointerGetAttribute(&mbase, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, p + g + 10));
  VAL("MAPPING_BASE_ADDR - p", mbase - p);
  unsigned long long buffer_id = 0;
  SAY(cuPointerGetAttribute(&buffer_id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p + 10));
  CUmemGenericAllocationHandle back = 0;
  SAY(cuMemRetainAllocationHandle(&back, reinterpret_cast<void*>(p + g + 100)));
  VAL("retained == b", back == b);
  SAY(cuMemRetainAllocationHandle(&back, reinterpret_cast<void*>(p)));
  VAL("retained == a", back == a);
  SAY(cuMemRelease(back));
  SAY(cuMemRetainAllocationHandle(nullptr, reinterpret_cast<void*>(p)));
  CUdeviceptr plain = 0;
  SAY(cuMemAlloc(&plain, 4096));
  SAY(cuMemRetainAllocationHandle(&back, reinterpret_cast<void*>(plain)));
  SAY(cuMemFree(p));
  SAY(cuMemFree(p + g));
  // Aliasing: b mapped a second time elsewhere reads what the first mapping wrote.
  CUdeviceptr q = 0;
  SAY(cuMemAddressReserve(&q, g, 0, 0, 0));
  SAY(cuMemMap(q, g, 0, b, 0));
  SAY(cuMemSetAccess(q, g, &d, 1));
  unsigned char x[4] = {};
  SAY(cuMemcpyDtoH(x, q + 100, 4));
  VAL("alias reads the first mapping", x[0] == in[g + 100] && x[3] == in[g + 103]);
  // Released while mapped: the memory stays until unmapped.
  SAY(cuMemRelease(a));
  SAY(cuMemRelease(b));
  SAY(cuMemRelease(b));
  SAY(cuMemcpyDtoH(x, p + 1, 4));
  VAL("readable after release", x[0] == in[1]);
  SAY(cuMemUnmap(p, 2 * g));
  SAY(cuMemUnmap(p, g));
  SAY(cuMemcpyDtoH(x, q + 100, 4));
  VAL("alias readable after the other unmap", x[0] == in[g + 100]);
  SAY(cuMemUnmap(q, g));
  SAY(cuMemAddressFree(q, g));
  SAY(cuMemAddressFree(p, 2 * g));
  SAY(cuMemGetAddressRange(&base, &size, p));
  SAY(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
}

void case_export() {
  CUmemAllocationProp prop = device_prop();
  CUmemGenericAllocationHandle h = 0, plain = 0, imported = 0;
  SAY(cuMemCreate(&plain, g, &prop, 0));
  int fd = -1;
  SAY(cuMemExportToShareableHandle(&fd, plain, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  SAY(cuMemCreate(&h, g, &prop, 0));
  SAY(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1));
  SAY(cuMemExportToShareableHandle(nullptr, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  SAY(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  SAY(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  VAL("fd >= 0", fd >= 0);
  SAY(cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  VAL("imported != h", imported != h);
  CUmemAllocationProp back{};
  SAY(cuMemGetAllocationPropertiesFromHandle(&back, imported));
  VAL("imported requestedHandleTypes", back.requestedHandleTypes);
  CUdeviceptr p = 0, q = 0;
  SAY(cuMemAddressReserve(&p, g, 0, 0, 0));
  SAY(cuMemAddressReserve(&q, g, 0, 0, 0));
  SAY(cuMemMap(p, g, 0, h, 0));
  SAY(cuMemMap(q, g, 0, imported, 0));
  CUmemAccessDesc d = rw();
  SAY(cuMemSetAccess(p, g, &d, 1));
  SAY(cuMemSetAccess(q, g, &d, 1));
  SAY(cuMemsetD32(p, 0x12345678, 16));
  unsigned v = 0;
  SAY(cuMemcpyDtoH(&v, q + 8, 4));
  VAL("imported aliases the exported", v == 0x12345678);
  SAY(cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(-1)),
                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  SAY(cuMemImportFromShareableHandle(nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);
}

void case_kernelless_graph() {
  // A mapped range used by stream-ordered work: a memset on a stream and a capture of it.
  Mapped m = map_one(1, 1, true);
  CUstream s;
  SAY(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  SAY(cuMemsetD8Async(m.p, 3, g, s));
  SAY(cuStreamSynchronize(s));
  SAY(cuMemUnmap(m.p, g));
  SAY(cuMemsetD8Async(m.p, 3, 64, s));
  std::printf("  %-60s %s\n", "stream sync after a memset of unmapped memory", name_of(cuStreamSynchronize(s)));
}

using Case = void (*)();
struct Named {
  const char* name;
  Case fn;
};

}  // namespace

int main() {
  const Named cases[] = {{"granularity", case_granularity}, {"reserve", case_reserve},
                         {"create", case_create},           {"map", case_map},
                         {"access", case_access},           {"no_access_copy", case_no_access_copy},
                         {"unmapped_copy", case_unmapped_copy}, {"use", case_use},
                         {"export", case_export},           {"stream", case_kernelless_graph}};
  for (const Named& c : cases) {
    std::printf("%s:\n", c.name);
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      CUcontext ctx;
      if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) {
        std::printf("  no context\n");
        _exit(1);
      }
      CUmemAllocationProp prop = device_prop();
      if (CUresult r = cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)) {
        std::printf("  granularity: %s\n", name_of(r));
        g = 2 << 20;
      }
      c.fn();
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) std::printf("  killed by signal %d\n", WTERMSIG(status));
  }
  return 0;
}
