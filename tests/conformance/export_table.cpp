// cuGetExportTable and the behaviour cudart relies on: the private tables'
// shapes and answers (context-local storage, context checks, the integrity
// answer, which must equal src/core/integrity_hash's for both drivers), and
// the driver calls cudart makes before any context is current.
#include <pthread.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>
#include <thread>

#include "core/integrity_hash.h"
#include "harness.h"

namespace {

CUuuid uuid(std::initializer_list<unsigned> bytes) {
  CUuuid u{};
  int i = 0;
  for (unsigned b : bytes) u.bytes[i++] = static_cast<char>(b);
  return u;
}
const CUuuid kCudart = uuid({0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9});
const CUuuid kHooks = uuid({0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66});
const CUuuid kTls = uuid({0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc});
const CUuuid kStorage = uuid({0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93});
const CUuuid kChecks = uuid({0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e});
const CUuuid kIntegrity = uuid({0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2});
const CUuuid kUnknown = uuid({0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef});

const uintptr_t* table(const CUuuid& id) {
  const void* t = nullptr;
  ASSERT_CU(cuGetExportTable(&t, &id));
  EXPECT_TRUE(t != nullptr);
  return static_cast<const uintptr_t*>(t);
}

using StoragePut = CUresult (*)(CUcontext, void*, void*, void (*)(CUcontext, void*, void*));
using StorageDelete = CUresult (*)(CUcontext, void*);
using StorageGet = CUresult (*)(void**, CUcontext, void*);

int g_destroyed = 0;
void count_destroy(CUcontext, void*, void*) { ++g_destroyed; }

const char* kManagedPtx =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .global .attribute(.managed) .align 4 .u32 counter = 5;\n"
    ".visible .entry bump()\n{\n.reg .b64 %rd<2>;\n.reg .b32 %r<3>;\n"
    "mov.u64 %rd1, counter;\nld.global.u32 %r1, [%rd1];\nadd.s32 %r2, %r1, 1;\n"
    "st.global.u32 [%rd1], %r2;\nret;\n}\n";

}  // namespace

CONF_TEST(UnknownExportTableIdIsRefusedButNotAsNotSupported) {
  const void* t = nullptr;
  CUresult unknown = cuGetExportTable(&t, &kUnknown);
  conf::info("export_table.unknown_id", unknown);
  EXPECT_TRUE(unknown != CUDA_SUCCESS && unknown != CUDA_ERROR_NOT_SUPPORTED);
  conf::info("export_table.null_table", cuGetExportTable(nullptr, &kCudart));
  conf::info("export_table.null_id", cuGetExportTable(&t, nullptr));
}

CONF_TEST(ExportTablesGiveTheirSizesAndStorageStartsWithAFunction) {
  conf::primary();
  conf::info_value("export_table.cudart_bytes", static_cast<long long>(table(kCudart)[0]));
  conf::info_value("export_table.hooks_bytes", static_cast<long long>(table(kHooks)[0]));
  conf::info_value("export_table.tls_bytes", static_cast<long long>(table(kTls)[0]));
  conf::info_value("export_table.checks_bytes", static_cast<long long>(table(kChecks)[0]));
  conf::info_value("export_table.integrity_bytes", static_cast<long long>(table(kIntegrity)[0]));
  EXPECT_TRUE(table(kStorage)[0] > 4096);  // a function, not a size
}

// What cudart sees before and after it makes a context current.
CONF_TEST(ContextLocalStorageKeepsValuesPerContextAndRunsDestructors) {
  const uintptr_t* t = table(kStorage);
  auto put = reinterpret_cast<StoragePut>(t[0]);
  auto del = reinterpret_cast<StorageDelete>(t[1]);
  auto get = reinterpret_cast<StorageGet>(t[2]);
  int key_a = 0, key_b = 0, value = 0;
  void* out = nullptr;
  CUresult no_context = CUDA_SUCCESS;
  std::thread([&] { no_context = get(&out, nullptr, &key_a); }).join();
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, no_context);
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, get(&out, nullptr, &key_a));
  ASSERT_CU(put(nullptr, &key_a, &value, nullptr));
  ASSERT_CU(get(&out, nullptr, &key_a));
  EXPECT_TRUE(out == &value);
  ASSERT_CU(get(&out, conf::primary(), &key_a));  // explicitly, the same context
  EXPECT_TRUE(out == &value);
  ASSERT_CU(del(conf::primary(), &key_a));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, get(&out, nullptr, &key_a));
  conf::info("context_local_storage.delete_missing", del(conf::primary(), &key_b));
  // A user context runs the destructors when it is destroyed.
  CUdevice d;
  ASSERT_CU(cuDeviceGet(&d, 0));
  CUcontext user = nullptr;
  ASSERT_CU(cuCtxCreate(&user, nullptr, 0, d));
  g_destroyed = 0;
  ASSERT_CU(put(user, &key_b, &value, count_destroy));
  ASSERT_CU(cuCtxDestroy(user));
  conf::info_value("context_local_storage.destructors_run_on_destroy", g_destroyed);
  EXPECT_TRUE(g_destroyed == 1);
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
}

CONF_TEST(ContextCheckPassesForThePrimaryContext) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  const uintptr_t* t = table(kChecks);
  auto check = reinterpret_cast<CUresult (*)(CUcontext, int*, void*)>(t[2]);
  int result = -1;
  void* extra = nullptr;
  ASSERT_CU(check(conf::primary(), &result, &extra));
  EXPECT_TRUE(result == 0);
}

// The answer must be what src/core/integrity_hash computes from what this
// driver reports: cudart checks it the same way.
CONF_TEST(IntegrityAnswerIsTheHashOfWhatTheDriverReports) {
  conf::primary();
  const uintptr_t* integ = table(kIntegrity);
  const uintptr_t* cudart = table(kCudart);
  auto check = reinterpret_cast<CUresult (*)(unsigned, unsigned long long, unsigned long long*)>(integ[1]);
  const unsigned long long when = 1700000000ull;
  for (unsigned version : {13000u, 13001u, 13002u, 12345u}) {
    unsigned long long got[2] = {0, 0};
    ASSERT_CU(check(version, when, got));
    int driver = 0, count = 0;
    ASSERT_CU(cuDriverGetVersion(&driver));
    ASSERT_CU(cuDeviceGetCount(&count));
    std::vector<cucpu::DeviceIdentity> devices(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
      CUuuid u;
      ASSERT_CU(cuDeviceGetUuid(&u, i));
      std::memcpy(devices[i].uuid, u.bytes, 16);
      ASSERT_CU(cuDeviceGetAttribute(&devices[i].pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, i));
      ASSERT_CU(cuDeviceGetAttribute(&devices[i].pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, i));
      ASSERT_CU(cuDeviceGetAttribute(&devices[i].pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, i));
    }
    cucpu::IntegrityInputs in{};
    in.driver_version = static_cast<uint32_t>(driver);
    in.version = version;
    in.process = static_cast<uint32_t>(getpid());
    in.thread = static_cast<uint32_t>(pthread_self());
    in.cudart_table = reinterpret_cast<uintptr_t>(cudart);
    in.integrity_table = reinterpret_cast<uintptr_t>(integ);
    in.function = integ[1];
    in.unix_seconds = when;
    const std::array<uint64_t, 2> want = cucpu::integrity_answer(in, devices.data(), devices.size());
    EXPECT_TRUE(got[0] == want[0] && got[1] == want[1]);
  }
}

// cudart reads __managed__ variables at registration, before it makes any
// context current.
CONF_TEST(LibraryManagedVariableWorksBeforeAnyContextIsCurrent) {
  CUlibrary lib = nullptr;
  CUresult load = CUDA_SUCCESS, managed = CUDA_SUCCESS;
  CUdeviceptr p = 0;
  size_t bytes = 0;
  unsigned value = 0;
  std::thread([&] {
    load = cuLibraryLoadData(&lib, kManagedPtx, nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (load == CUDA_SUCCESS) managed = cuLibraryGetManaged(&p, &bytes, lib, "counter");
    if (managed == CUDA_SUCCESS && p) value = *reinterpret_cast<unsigned*>(p);
  }).join();
  ASSERT_CU(load);
  ASSERT_CU(managed);
  EXPECT_TRUE(bytes == 4 && value == 5);
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUkernel k;
  ASSERT_CU(cuLibraryGetKernel(&k, lib, "bump"));
  ASSERT_CU(cuLaunchKernel(reinterpret_cast<CUfunction>(k), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  EXPECT_TRUE(*reinterpret_cast<unsigned*>(p) == 6);  // the kernel's and the host's are one variable
  CUdeviceptr again = 0;
  ASSERT_CU(cuLibraryGetManaged(&again, nullptr, lib, "counter"));
  EXPECT_TRUE(again == p);
  ASSERT_CU(cuLibraryUnload(lib));
}

// cudart adds kernel nodes with the CUfunction of a library kernel and maps
// what cuGraphKernelNodeGetParams_v2 gives back to its host stub.
CONF_TEST(KernelNodeOfALibraryFunctionGivesThatFunctionBack) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUlibrary lib = nullptr;
  ASSERT_CU(cuLibraryLoadData(&lib, kManagedPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel k;
  CUfunction f;
  ASSERT_CU(cuLibraryGetKernel(&k, lib, "bump"));
  ASSERT_CU(cuKernelGetFunction(&f, k));
  CUgraph g;
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = f;
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = p.blockDimY = p.blockDimZ = 1;
  CUgraphNode n;
  ASSERT_CU(cuGraphAddKernelNode(&n, g, nullptr, 0, &p));
  CUDA_KERNEL_NODE_PARAMS back{};
  ASSERT_CU(cuGraphKernelNodeGetParams(n, &back));
  conf::info_value("kernel_node.func_is_given_function", back.func == f);
  conf::info_value("kernel_node.kern_is_library_kernel", back.kern == k);
  conf::info_value("kernel_node.ctx_is_current", back.ctx == conf::primary());
  EXPECT_TRUE(back.func == f);
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuLibraryUnload(lib));
}

CONF_TEST(PciBusIdRoundTripsAndV2ContextCallsTakeNullAsCurrent) {
  CUdevice d;
  ASSERT_CU(cuDeviceGet(&d, 0));
  char id[64] = {};
  ASSERT_CU(cuDeviceGetPCIBusId(id, sizeof id, d));
  std::printf("INFO pci_bus_id.length %zu\n", std::strlen(id));
  CUdevice back = -1;
  ASSERT_CU(cuDeviceGetByPCIBusId(&back, id));
  EXPECT_TRUE(back == d);
  char shorter[64];
  std::snprintf(shorter, sizeof shorter, "%s", id + 4);  // without the domain's high digits
  conf::info("pci_bus_id.short_domain", cuDeviceGetByPCIBusId(&back, shorter));
  char small[8];
  conf::info("pci_bus_id.small_buffer", cuDeviceGetPCIBusId(small, sizeof small, d));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetByPCIBusId(&back, "not a bus id"));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetPCIBusId(nullptr, 16, d));
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetPCIBusId(id, sizeof id, 99));
  CUdevice cur = -1;
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  ASSERT_CU(cuCtxGetDevice_v2(&cur, nullptr));
  EXPECT_TRUE(cur == d);
  ASSERT_CU(cuCtxSynchronize_v2(nullptr));
  ASSERT_CU(cuCtxSynchronize_v2(conf::primary()));
}

// Defaults a runtime program reads back (cudaDeviceGetLimit, cudaGetDeviceFlags).
CONF_TEST(ContextLimitsAndFlagsReadBackAndDefaultBankSizeIsAccepted) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  const CUlimit limits[] = {CU_LIMIT_STACK_SIZE, CU_LIMIT_PRINTF_FIFO_SIZE, CU_LIMIT_MALLOC_HEAP_SIZE,
                            CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT,
                            CU_LIMIT_MAX_L2_FETCH_GRANULARITY, CU_LIMIT_PERSISTING_L2_CACHE_SIZE};
  for (CUlimit l : limits) {
    size_t v = 0;
    CUresult r = cuCtxGetLimit(&v, l);
    char key[64];
    std::snprintf(key, sizeof key, "ctx_limit.%d", static_cast<int>(l));
    if (r == CUDA_SUCCESS) conf::info_value(key, static_cast<long long>(v));
    else conf::info(key, r);
  }
  unsigned flags = 0;
  ASSERT_CU(cuCtxGetFlags(&flags));
  conf::info_value("ctx_flags.primary", flags);
  CUsharedconfig bank;
  conf::info("ctx_shared_config.set_eight", cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE));
  conf::info("ctx_shared_config.get", cuCtxGetSharedMemConfig(&bank));
  conf::info_value("ctx_shared_config.value", bank);
  conf::info("ctx_shared_config.set_bad", cuCtxSetSharedMemConfig(static_cast<CUsharedconfig>(7)));
  ASSERT_CU(cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE));
}
