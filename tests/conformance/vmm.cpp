// Virtual memory management: reservations, physical allocations, mappings,
// access, and export as a file descriptor, with the codes driver 580 gives
// (tools/probes/vmm_probe.cpp, docs/conformance.md).
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "kernels_util.h"

namespace {

CUmemAllocationProp device_prop() {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = 0;
  return p;
}

CUmemAccessDesc access_of(CUmemAccess_flags f) {
  CUmemAccessDesc d{};
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = 0;
  d.flags = f;
  return d;
}

size_t granularity() {
  CUmemAllocationProp prop = device_prop();
  size_t g = 0;
  if (cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || g == 0)
    throw conf::Failure{"no allocation granularity"};
  return g;
}

// A reservation of `granules` granules with one allocation of `mapped`
// granules mapped at its start, read-write when `access`.
struct Mapped {
  CUdeviceptr p = 0;
  size_t reserved = 0, size = 0;
  CUmemGenericAllocationHandle h = 0;
  Mapped(size_t granules, size_t mapped, bool access) {
    const size_t g = granularity();
    reserved = granules * g;
    size = mapped * g;
    CUmemAllocationProp prop = device_prop();
    ASSERT_CU(cuMemAddressReserve(&p, reserved, 0, 0, 0));
    ASSERT_CU(cuMemCreate(&h, size, &prop, 0));
    ASSERT_CU(cuMemMap(p, size, 0, h, 0));
    if (access) {
      CUmemAccessDesc d = access_of(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
      ASSERT_CU(cuMemSetAccess(p, size, &d, 1));
    }
  }
  ~Mapped() {
    cuMemUnmap(p, size);
    cuMemRelease(h);
    cuMemAddressFree(p, reserved);
  }
};

}  // namespace

CONF_TEST(VmmGranularityIsTwoMegabytesForAnyProperties) {
  CUmemAllocationProp prop = device_prop();
  size_t min = 0, rec = 0;
  ASSERT_CU(cuMemGetAllocationGranularity(&min, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  ASSERT_CU(cuMemGetAllocationGranularity(&rec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  EXPECT_TRUE(min == size_t{2} << 20 && rec == min);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemGetAllocationGranularity(nullptr, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemGetAllocationGranularity(&min, nullptr, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemGetAllocationGranularity(&min, &prop, static_cast<CUmemAllocationGranularity_flags>(2)));
  CUmemAllocationProp odd = prop;
  odd.location.id = 9;  // no such device: driver 580 answers all the same
  ASSERT_CU(cuMemGetAllocationGranularity(&min, &odd, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  odd = prop;
  odd.location.type = CU_MEM_LOCATION_TYPE_HOST;
  ASSERT_CU(cuMemGetAllocationGranularity(&min, &odd, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  EXPECT_TRUE(min == size_t{2} << 20);
  int vmm = 0, fd = 0;
  ASSERT_CU(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
  ASSERT_CU(cuDeviceGetAttribute(&fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0));
  EXPECT_TRUE(vmm == 1 && fd == 1);
}

CONF_TEST(VmmReservationsAreAlignedAndFreedWhole) {
  const size_t g = granularity();
  CUdeviceptr p = 0, q = 0;
  ASSERT_CU(cuMemAddressReserve(&p, 4 * g, 0, 0, 0));
  EXPECT_TRUE(p != 0 && p % g == 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressFree(p, 2 * g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressFree(p + g, 3 * g));
  ASSERT_CU(cuMemAddressFree(p, 4 * g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressFree(p, 4 * g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressReserve(nullptr, g, 0, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressReserve(&p, 0, 0, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressReserve(&p, g + 1, 0, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressReserve(&p, g, 3, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressReserve(&p, g, 0, 0, 1));
  ASSERT_CU(cuMemAddressReserve(&q, g, 16 * g, 0, 0));
  EXPECT_TRUE(q % (16 * g) == 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressReserve(&p, g, 0, q + 64 * g + 1, 0));  // a misaligned address
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressFree(0, g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressFree(q, 0));
  ASSERT_CU(cuMemAddressFree(q, g));
}

CONF_TEST(VmmCreateChecksItsPropertiesAndHandlesAreCounted) {
  const size_t g = granularity();
  CUmemAllocationProp prop = device_prop();
  CUmemGenericAllocationHandle h = 0;
  ASSERT_CU(cuMemCreate(&h, g, &prop, 0));
  EXPECT_TRUE(h != 0);
  CUmemAllocationProp back{};
  ASSERT_CU(cuMemGetAllocationPropertiesFromHandle(&back, h));
  EXPECT_TRUE(back.type == CU_MEM_ALLOCATION_TYPE_PINNED && back.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
              back.location.id == 0 && back.requestedHandleTypes == CU_MEM_HANDLE_TYPE_NONE);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemGetAllocationPropertiesFromHandle(nullptr, h));
  ASSERT_CU(cuMemRelease(h));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemRelease(h));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemRelease(0));
  // A released handle: undefined on driver 580 (it still answers), refused here.
  if (conf::on_cucpu()) EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemGetAllocationPropertiesFromHandle(&back, h));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemCreate(nullptr, g, &prop, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&h, 0, &prop, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&h, g + 1, &prop, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&h, g, nullptr, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&h, g, &prop, 1));
  CUmemAllocationProp bad = prop;
  bad.location.id = 9;
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuMemCreate(&h, g, &bad, 0));
  bad = prop;
  bad.type = CU_MEM_ALLOCATION_TYPE_INVALID;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&h, g, &bad, 0));
  bad = prop;
  bad.requestedHandleTypes = CU_MEM_HANDLE_TYPE_WIN32;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&h, g, &bad, 0));
  bad = prop;
  bad.location.type = CU_MEM_LOCATION_TYPE_HOST;
  ASSERT_CU(cuMemCreate(&h, g, &bad, 0));
  ASSERT_CU(cuMemRelease(h));
}

CONF_TEST(VmmMapsWholeAllocationsAndUnmapsWholeMappings) {
  const size_t g = granularity();
  CUmemAllocationProp prop = device_prop();
  CUdeviceptr p = 0, plain = 0;
  CUmemGenericAllocationHandle h = 0, h2 = 0;
  ASSERT_CU(cuMemAddressReserve(&p, 4 * g, 0, 0, 0));
  ASSERT_CU(cuMemCreate(&h, 2 * g, &prop, 0));
  ASSERT_CU(cuMemCreate(&h2, g, &prop, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(p, 2 * g, 0, h, 1));
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMemMap(p, 2 * g, g, h, 0));  // an offset into the allocation
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMemMap(p, g, 0, h, 0));      // part of it
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMemMap(p, 3 * g, 0, h, 0));  // more than it
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(p + 1, 2 * g, 0, h, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(p, 2 * g, 0, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(0, 2 * g, 0, h, 0));
  ASSERT_CU(cuMemMap(p, 2 * g, 0, h, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(p, 2 * g, 0, h, 0));   // mapped already
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(p + g, g, 0, h2, 0));  // overlaps
  ASSERT_CU(cuMemMap(p + 2 * g, g, 0, h2, 0));
  ASSERT_CU(cuMemAlloc(&plain, g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(plain, g, 0, h2, 0));  // not reserved
  ASSERT_CU(cuMemFree(plain));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemUnmap(p, g));            // part of a mapping
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemUnmap(p + g, 2 * g));    // part of one, all of another
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressFree(p, 4 * g));  // still mapped
  ASSERT_CU(cuMemUnmap(p, 4 * g));                                  // both, and a granule nothing maps
  ASSERT_CU(cuMemUnmap(p, 2 * g));                                  // nothing mapped there now
  ASSERT_CU(cuMemRelease(h));
  ASSERT_CU(cuMemRelease(h2));
  ASSERT_CU(cuMemAddressFree(p, 4 * g));
}

CONF_TEST(VmmAccessIsSetOnWholeMappingsAndChecked) {
  const size_t g = granularity();
  Mapped m(4, 2, false);
  unsigned long long flags = 77;
  CUmemLocation dev{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  ASSERT_CU(cuMemGetAccess(&flags, &dev, m.p));
  EXPECT_TRUE(flags == 0);
  std::vector<unsigned char> buf(4096, 1);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(m.p, buf.data(), buf.size()));  // no access yet
  CUmemAccessDesc rw = access_of(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemSetAccess(m.p, 2 * g, nullptr, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemSetAccess(m.p, 2 * g, &rw, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemSetAccess(m.p, 3 * g, &rw, 1));  // past the mapping
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemSetAccess(m.p + 1, g, &rw, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemSetAccess(m.p, g, &rw, 1));      // part of the mapping
  CUmemAccessDesc host = rw;
  host.location.type = CU_MEM_LOCATION_TYPE_HOST;
  EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMemSetAccess(m.p, 2 * g, &host, 1));
  CUmemAccessDesc bad = rw;
  bad.location.id = 9;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemSetAccess(m.p, 2 * g, &bad, 1));
  bad = rw;
  bad.flags = static_cast<CUmemAccess_flags>(2);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemSetAccess(m.p, 2 * g, &bad, 1));
  ASSERT_CU(cuMemSetAccess(m.p, 2 * g, &rw, 1));
  ASSERT_CU(cuMemGetAccess(&flags, &dev, m.p + g + 5));
  EXPECT_TRUE(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemGetAccess(&flags, &dev, m.p + 3 * g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemGetAccess(nullptr, &dev, m.p));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemGetAccess(&flags, nullptr, m.p));
  ASSERT_CU(cuMemcpyHtoD(m.p, buf.data(), buf.size()));
  CUmemAccessDesc ro = access_of(CU_MEM_ACCESS_FLAGS_PROT_READ);
  ASSERT_CU(cuMemSetAccess(m.p, 2 * g, &ro, 1));
  ASSERT_CU(cuMemGetAccess(&flags, &dev, m.p));
  EXPECT_TRUE(flags == CU_MEM_ACCESS_FLAGS_PROT_READ);
  std::vector<unsigned char> back(4096, 0);
  ASSERT_CU(cuMemcpyDtoH(back.data(), m.p, back.size()));
  EXPECT_TRUE(back == buf);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(m.p, buf.data(), buf.size()));  // read-only
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(m.p, 0, 64));
  ASSERT_CU(cuCtxSynchronize());  // refused at the call: the context is unharmed
  // Copies may not reach past the mapping into the reservation.
  ASSERT_CU(cuMemSetAccess(m.p, 2 * g, &rw, 1));
  std::vector<unsigned char> big(3 * g);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(big.data(), m.p, 3 * g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(big.data(), m.p + 2 * g, 64));
  ASSERT_CU(cuCtxSynchronize());
}

CONF_TEST(VmmMappingsSideBySideAreOneRangeAndHandlesAliasTheirMemory) {
  const size_t g = granularity();
  CUmemAllocationProp prop = device_prop();
  CUdeviceptr p = 0, q = 0;
  CUmemGenericAllocationHandle a = 0, b = 0, back = 0;
  ASSERT_CU(cuMemAddressReserve(&p, 2 * g, 0, 0, 0));
  ASSERT_CU(cuMemCreate(&a, g, &prop, 0));
  ASSERT_CU(cuMemCreate(&b, g, &prop, 0));
  ASSERT_CU(cuMemMap(p, g, 0, a, 0));
  ASSERT_CU(cuMemMap(p + g, g, 0, b, 0));
  CUmemAccessDesc rw = access_of(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  ASSERT_CU(cuMemSetAccess(p, 2 * g, &rw, 1));
  std::vector<unsigned char> in(2 * g), out(2 * g, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  ASSERT_CU(cuMemcpyHtoD(p, in.data(), in.size()));  // one copy over both mappings
  ASSERT_CU(cuMemcpyDtoH(out.data(), p, out.size()));
  EXPECT_TRUE(out == in);
  ASSERT_CU(cuMemsetD8(p + g - 8, 0x5a, 16));
  unsigned char edge[16];
  ASSERT_CU(cuMemcpyDtoH(edge, p + g - 8, 16));
  EXPECT_TRUE(edge[0] == 0x5a && edge[15] == 0x5a);
  // A mapping is an address range of its own; its reservation is the
  // pointer's range.
  CUdeviceptr base = 0;
  size_t size = 0;
  ASSERT_CU(cuMemGetAddressRange(&base, &size, p + g + 100));
  EXPECT_TRUE(base == p + g && size == g);
  unsigned type = 0;
  ASSERT_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 10));
  EXPECT_TRUE(type == CU_MEMORYTYPE_DEVICE);
  CUdeviceptr start = 0;
  ASSERT_CU(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + g + 10));
  size_t rsize = 0;
  ASSERT_CU(cuPointerGetAttribute(&rsize, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + g + 10));
  EXPECT_TRUE(start == p && rsize == 2 * g);
  size_t msize = 0;
  ASSERT_CU(cuPointerGetAttribute(&msize, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, p + g + 10));
  void* mbase = nullptr;
  ASSERT_CU(cuPointerGetAttribute(&mbase, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, p + g + 10));
  EXPECT_TRUE(msize == g && reinterpret_cast<CUdeviceptr>(mbase) == p + g);
  unsigned mapped = 0;
  ASSERT_CU(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, p + 10));
  EXPECT_TRUE(mapped == 1);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(p));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(p + g));
  // Retaining by address gives the same handle, counted once more.
  ASSERT_CU(cuMemRetainAllocationHandle(&back, reinterpret_cast<void*>(p + g + 100)));
  EXPECT_TRUE(back == b);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemRetainAllocationHandle(nullptr, reinterpret_cast<void*>(p)));
  CUdeviceptr plain = 0;
  ASSERT_CU(cuMemAlloc(&plain, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemRetainAllocationHandle(&back, reinterpret_cast<void*>(plain)));
  ASSERT_CU(cuMemFree(plain));
  // b mapped a second time reads what the first mapping holds.
  ASSERT_CU(cuMemAddressReserve(&q, g, 0, 0, 0));
  ASSERT_CU(cuMemMap(q, g, 0, b, 0));
  ASSERT_CU(cuMemSetAccess(q, g, &rw, 1));
  unsigned char x[4] = {};
  ASSERT_CU(cuMemcpyDtoH(x, q + 100, 4));
  EXPECT_TRUE(x[0] == in[g + 100] && x[3] == in[g + 103]);
  // Released while mapped: the memory stays until its last mapping goes.
  ASSERT_CU(cuMemRelease(a));
  ASSERT_CU(cuMemRelease(b));
  ASSERT_CU(cuMemRelease(b));  // the retained reference
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemRelease(b));
  ASSERT_CU(cuMemcpyDtoH(x, p + 1, 4));
  EXPECT_TRUE(x[0] == in[1]);
  ASSERT_CU(cuMemUnmap(p, 2 * g));
  ASSERT_CU(cuMemcpyDtoH(x, q + 100, 4));
  EXPECT_TRUE(x[0] == in[g + 100]);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(p, 0, 64));  // unmapped
  ASSERT_CU(cuMemUnmap(q, g));
  ASSERT_CU(cuMemAddressFree(q, g));
  ASSERT_CU(cuMemAddressFree(p, 2 * g));
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, p));
}

CONF_TEST(VmmExportedDescriptorImportsTheSameMemory) {
  const size_t g = granularity();
  CUmemAllocationProp prop = device_prop();
  CUmemGenericAllocationHandle plain = 0, h = 0, imported = 0;
  int fd = -1;
  ASSERT_CU(cuMemCreate(&plain, g, &prop, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemExportToShareableHandle(&fd, plain, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));  // not asked for
  ASSERT_CU(cuMemRelease(plain));
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  ASSERT_CU(cuMemCreate(&h, g, &prop, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemExportToShareableHandle(nullptr, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
  ASSERT_CU(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  EXPECT_TRUE(fd >= 0);
  void* os = reinterpret_cast<void*>(static_cast<intptr_t>(fd));
  ASSERT_CU(cuMemImportFromShareableHandle(&imported, os, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  EXPECT_TRUE(imported != h);
  CUmemAllocationProp back{};
  ASSERT_CU(cuMemGetAllocationPropertiesFromHandle(&back, imported));
  EXPECT_TRUE(back.requestedHandleTypes == CU_MEM_HANDLE_TYPE_NONE);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemImportFromShareableHandle(nullptr, os, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  EXPECT_CU(CUDA_ERROR_UNKNOWN, cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(intptr_t{-1}),
                                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CUdeviceptr p = 0, q = 0;
  ASSERT_CU(cuMemAddressReserve(&p, g, 0, 0, 0));
  ASSERT_CU(cuMemAddressReserve(&q, g, 0, 0, 0));
  ASSERT_CU(cuMemMap(p, g, 0, h, 0));
  ASSERT_CU(cuMemMap(q, g, 0, imported, 0));
  CUmemAccessDesc rw = access_of(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  ASSERT_CU(cuMemSetAccess(p, g, &rw, 1));
  ASSERT_CU(cuMemSetAccess(q, g, &rw, 1));
  unsigned long long types = 0;
  ASSERT_CU(cuPointerGetAttribute(&types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p));
  EXPECT_TRUE(types == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  ASSERT_CU(cuMemsetD32(p, 0x12345678, 16));
  unsigned v = 0;
  ASSERT_CU(cuMemcpyDtoH(&v, q + 8, 4));
  EXPECT_TRUE(v == 0x12345678);
  ASSERT_CU(cuMemUnmap(p, g));
  ASSERT_CU(cuMemUnmap(q, g));
  ASSERT_CU(cuMemRelease(h));
  ASSERT_CU(cuMemRelease(imported));
  ASSERT_CU(cuMemAddressFree(p, g));
  ASSERT_CU(cuMemAddressFree(q, g));
  close(fd);
}

// Stream work and kernels use a mapping as any device memory.
CONF_TEST(VmmMappingsServeStreamsAndKernels) {
  const size_t g = granularity();
  Mapped m(2, 2, true);
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  const int n = static_cast<int>(g / sizeof(int));  // the second mapping granule's worth, over the first
  ASSERT_CU(cuMemsetD32Async(m.p, 0, 2 * g / 4, s));
  kt::Module mod("ptx/checked.sm90.ptx");
  CUdeviceptr dst = m.p + g / 2;  // half in each granule
  int value = 41;
  void* args[] = {&dst, &value, const_cast<int*>(&n)};
  ASSERT_CU(cuLaunchKernel(mod.fn("fill"), (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, args, nullptr));
  ASSERT_CU(cuStreamSynchronize(s));
  std::vector<int> back(2 * g / 4);
  ASSERT_CU(cuMemcpyDtoH(back.data(), m.p, 2 * g));
  const size_t first = g / 2 / 4;
  EXPECT_TRUE(back[first - 1] == 0 && back[first] == 41 && back[first + n - 1] == 41 && back[first + n] == 0);
  ASSERT_CU(cuStreamDestroy(s));
}

// A kernel that writes memory a mapping grants only reads faults the launch
// (a child process: the fault is sticky); the synchronization reports it.
CONF_TEST(FaultChildVmmReadOnlyWrite) {
  if (!kt::in_fault_child()) throw conf::Skip{"runs in a child process of VmmKernelWriteToReadOnlyMappingFaults"};
  const size_t g = granularity();
  Mapped m(1, 1, true);
  CUmemAccessDesc ro = access_of(CU_MEM_ACCESS_FLAGS_PROT_READ);
  ASSERT_CU(cuMemSetAccess(m.p, g, &ro, 1));
  kt::Module mod("ptx/checked.sm90.ptx");
  int value = 7, n = 64;
  void* args[] = {&m.p, &value, &n};
  ASSERT_CU(cuLaunchKernel(mod.fn("fill"), 1, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
  const CUresult r = cuCtxSynchronize();
  conf::info("vmm_read_only_kernel_write", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
}

CONF_TEST(VmmKernelWriteToReadOnlyMappingFaults) {
  if (kt::in_fault_child()) throw conf::Skip{"the parent of FaultChildVmmReadOnlyWrite"};
  kt::run_in_child("FaultChildVmmReadOnlyWrite");
}
