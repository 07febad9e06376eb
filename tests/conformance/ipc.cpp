// Interprocess memory handles: a child process (this program again, run as
// `--ipc-child HANDLE BYTES`) maps an allocation of the parent's, reads what
// the parent wrote and writes its own answer back.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"

extern char** environ;

namespace {
constexpr unsigned char kParentByte = 0x5a, kChildByte = 0xa5;

std::string hex_of(const CUipcMemHandle& h) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (unsigned char c : h.reserved) {
    s += digits[c >> 4];
    s += digits[c & 15];
  }
  return s;
}

CUipcMemHandle handle_of(const char* hex) {
  CUipcMemHandle h{};
  for (size_t i = 0; i < sizeof h.reserved && hex[2 * i] && hex[2 * i + 1]; ++i)
    h.reserved[i] = static_cast<char>(std::strtoul(std::string(hex + 2 * i, 2).c_str(), nullptr, 16));
  return h;
}

// Whether every one of the n bytes at p is v.
bool all_bytes_are(CUdeviceptr p, size_t n, unsigned char v) {
  std::vector<unsigned char> got(n);
  if (cuMemcpyDtoH(got.data(), p, n) != CUDA_SUCCESS) return false;
  for (unsigned char b : got)
    if (b != v) return false;
  return true;
}

// Runs the child and gives its exit status (-1: it did not exit).
int run_child(const CUipcMemHandle& h, size_t bytes) {
  std::string hex = hex_of(h), n = std::to_string(bytes);
  char exe[] = "/proc/self/exe";
  char mode[] = "--ipc-child";
  char* argv[] = {exe, mode, hex.data(), n.data(), nullptr};
  pid_t pid;
  if (posix_spawn(&pid, exe, nullptr, nullptr, argv, environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}
}  // namespace

// The child: 0 when it read the parent's bytes and wrote its own; else the
// step that failed, or 10 + the open's error code's position below.
int ipc_child(const char* hex, const char* bytes_text) {
  const size_t bytes = std::strtoull(bytes_text, nullptr, 10);
  CUdevice d;
  CUcontext c;
  if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c)) return 1;
  const CUipcMemHandle h = handle_of(hex);
  CUdeviceptr p = 0, again = 0;
  CUresult r = cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  if (r == CUDA_ERROR_INVALID_HANDLE) return 11;
  if (r == CUDA_ERROR_INVALID_VALUE) return 12;
  if (r == CUDA_ERROR_MAP_FAILED) return 13;
  if (r != CUDA_SUCCESS) return 14;
  if (cuIpcOpenMemHandle(&again, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) || again != p) return 2;
  if (cuIpcCloseMemHandle(again)) return 3;
  if (!all_bytes_are(p, bytes, kParentByte)) return 5;
  if (cuMemFree(p) != CUDA_ERROR_INVALID_VALUE) return 6;  // an import goes by cuIpcCloseMemHandle
  if (cuMemsetD8(p, kChildByte, bytes) || cuCtxSynchronize()) return 7;
  if (cuIpcCloseMemHandle(p)) return 8;
  if (cuIpcCloseMemHandle(p) == CUDA_SUCCESS) return 9;
  return 0;
}

// The child of the event test: opens the event the parent recorded behind
// a held stream, sees it pending (a query, a stream's wait), tells the
// parent through `pipe_fd` to go on, sees it reached, and records it itself.
int ipc_event_child(const char* hex, const char* pipe_fd) {
  CUdevice d;
  CUcontext c;
  if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c)) return 1;
  CUipcEventHandle h{};
  const CUipcMemHandle bytes = handle_of(hex);
  std::memcpy(h.reserved, bytes.reserved, sizeof h.reserved);
  CUevent e = nullptr;
  if (cuIpcOpenEventHandle(&e, h)) return 2;
  CUstream s = nullptr;
  if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) return 3;
  const CUresult pending = cuEventQuery(e);
  if (cuStreamWaitEvent(s, e, 0)) return 4;
  const CUresult held = cuStreamQuery(s);
  const char go = 1;
  if (write(std::atoi(pipe_fd), &go, 1) != 1) return 5;
  if (pending != CUDA_ERROR_NOT_READY) return 6;
  if (held != CUDA_ERROR_NOT_READY) return 7;
  if (cuEventSynchronize(e) || cuEventQuery(e) || cuStreamSynchronize(s)) return 8;
  if (cuEventRecord(e, s) || cuStreamSynchronize(s)) return 9;
  if (cuStreamDestroy(s) || cuEventDestroy(e)) return 10;
  return 0;
}

CONF_TEST(IpcEventOrdersWorkOfTwoProcesses) {
  int supported = 0;
  ASSERT_CU(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, 0));
  EXPECT_TRUE(supported == 1);
  CUevent e = nullptr;
  ASSERT_CU(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  CUstream s = nullptr;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  conf::Gate gate;
  ASSERT_CU(cuLaunchHostFunc(s, conf::Gate::hold, &gate));
  // Nothing below throws until the gate is released.
  const CUresult recorded = cuEventRecord(e, s);
  const CUresult pending = cuEventQuery(e);
  CUipcEventHandle h{};
  const CUresult exported = cuIpcGetEventHandle(&h, e);
  int fds[2] = {-1, -1};
  if (exported != CUDA_SUCCESS || pipe(fds) != 0) {
    gate.release();
    throw conf::Failure{"cuIpcGetEventHandle or pipe failed"};
  }
  CUipcMemHandle as_mem{};
  std::memcpy(as_mem.reserved, h.reserved, sizeof h.reserved);
  std::string hex = hex_of(as_mem), fd = std::to_string(fds[1]);
  char exe[] = "/proc/self/exe";
  char mode[] = "--ipc-event-child";
  char* argv[] = {exe, mode, hex.data(), fd.data(), nullptr};
  pid_t pid;
  const bool spawned = posix_spawn(&pid, exe, nullptr, nullptr, argv, environ) == 0;
  close(fds[1]);
  char go = 0;
  const bool told = spawned && read(fds[0], &go, 1) == 1;  // EOF if the child ended first
  close(fds[0]);
  gate.release();
  int status = -1;
  if (spawned && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) status = WEXITSTATUS(status);
  conf::info_value("ipc_event_child_status", status);
  ASSERT_CU(recorded);
  EXPECT_CU(CUDA_ERROR_NOT_READY, pending);
  EXPECT_TRUE(told && status == 0);
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_CU(CUDA_SUCCESS, cuEventQuery(e));
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuEventDestroy(e));
}

CONF_TEST(IpcEventHandlesRefuseOtherEvents) {
  CUevent plain = nullptr, ipc = nullptr;
  ASSERT_CU(cuEventCreate(&plain, CU_EVENT_DISABLE_TIMING));
  CUipcEventHandle h{};
  CUresult r = cuIpcGetEventHandle(&h, plain);
  conf::info("ipc_event_handle_of_plain_event", r);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, r);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuEventCreate(&ipc, CU_EVENT_INTERPROCESS));  // timing must be off
  ASSERT_CU(cuEventCreate(&ipc, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuIpcGetEventHandle(nullptr, ipc));
  r = cuIpcGetEventHandle(&h, nullptr);
  conf::info("ipc_event_handle_of_null", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  // Never recorded: reached, here and through its handle.
  EXPECT_CU(CUDA_SUCCESS, cuEventQuery(ipc));
  ASSERT_CU(cuIpcGetEventHandle(&h, ipc));
  CUipcEventHandle zeros{};
  CUevent opened = nullptr;
  r = cuIpcOpenEventHandle(&opened, zeros);
  conf::info("ipc_open_event_zeros", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuIpcOpenEventHandle(nullptr, h));
  r = cuIpcOpenEventHandle(&opened, h);
  conf::info("ipc_open_event_in_exporting_process", r);
  if (r == CUDA_SUCCESS) ASSERT_CU(cuEventDestroy(opened));
  ASSERT_CU(cuEventDestroy(plain));
  ASSERT_CU(cuEventDestroy(ipc));
}

// The child of the pool test: imports the pool from descriptor `fd_text`
// and the allocation `hex` names, reads the parent's bytes, writes its own,
// and frees the import.
int ipc_pool_child(const char* fd_text, const char* hex, const char* bytes_text) {
  const size_t bytes = std::strtoull(bytes_text, nullptr, 10);
  CUdevice d;
  CUcontext c;
  if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c)) return 1;
  CUmemoryPool pool = nullptr;
  const intptr_t fd = std::atoi(fd_text);
  if (cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(fd), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
    return 2;
  CUmemPoolPtrExportData data{};
  const CUipcMemHandle h = handle_of(hex);
  std::memcpy(data.reserved, h.reserved, sizeof data.reserved);
  CUdeviceptr p = 0;
  if (cuMemPoolImportPointer(&p, pool, &data)) return 3;
  if (!all_bytes_are(p, bytes, kParentByte)) return 5;
  CUdeviceptr more = 0;
  if (cuMemAllocFromPoolAsync(&more, 64, pool, nullptr) != CUDA_ERROR_INVALID_VALUE) return 6;  // imported: no allocations
  if (cuMemsetD8(p, kChildByte, bytes) || cuCtxSynchronize()) return 7;
  if (cuMemFree(p)) return 8;
  if (cuMemPoolDestroy(pool)) return 9;
  return 0;
}

CONF_TEST(IpcPoolSharesAnAllocationWithAnotherProcess) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = 0;
  CUmemoryPool pool = nullptr;
  ASSERT_CU(cuMemPoolCreate(&pool, &props));
  const size_t bytes = (1 << 16) + 100;
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAllocFromPoolAsync(&p, bytes, pool, nullptr));
  ASSERT_CU(cuMemsetD8Async(p, kParentByte, bytes, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  int fd = -1;
  ASSERT_CU(cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CUmemPoolPtrExportData data{};
  ASSERT_CU(cuMemPoolExportPointer(&data, p));
  // The child inherits a copy of the descriptor (dup clears close-on-exec).
  const int inherited = dup(fd);
  CUipcMemHandle as_mem{};
  std::memcpy(as_mem.reserved, data.reserved, sizeof as_mem.reserved);
  std::string fd_text = std::to_string(inherited), hex = hex_of(as_mem), n = std::to_string(bytes);
  char exe[] = "/proc/self/exe";
  char mode[] = "--ipc-pool-child";
  char* argv[] = {exe, mode, fd_text.data(), hex.data(), n.data(), nullptr};
  pid_t pid;
  int status = -1;
  if (posix_spawn(&pid, exe, nullptr, nullptr, argv, environ) == 0 && waitpid(pid, &status, 0) == pid &&
      WIFEXITED(status))
    status = WEXITSTATUS(status);
  close(inherited);
  close(fd);
  conf::info_value("ipc_pool_child_status", status);
  EXPECT_TRUE(status == 0);
  EXPECT_TRUE(all_bytes_are(p, bytes, kChildByte));
  ASSERT_CU(cuMemFreeAsync(p, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  ASSERT_CU(cuMemPoolDestroy(pool));
}

CONF_TEST(IpcPoolCallsRefusePoolsThatAreNotShared) {
  CUmemoryPool plain = nullptr;
  CUdevice d;
  ASSERT_CU(cuDeviceGet(&d, 0));
  ASSERT_CU(cuDeviceGetDefaultMemPool(&plain, d));
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAllocFromPoolAsync(&p, 256, plain, nullptr));
  CUmemPoolPtrExportData data{};
  CUresult r = cuMemPoolExportPointer(&data, p);
  conf::info("pool_export_pointer_of_plain_pool", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  int fd = -1;
  r = cuMemPoolExportToShareableHandle(&fd, plain, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  conf::info("pool_export_of_plain_pool", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  CUdeviceptr q = 0;
  r = cuMemPoolImportPointer(&q, plain, &data);
  conf::info("pool_import_pointer_into_plain_pool", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  CUmemoryPool imported = nullptr;
  r = cuMemPoolImportFromShareableHandle(&imported, reinterpret_cast<void*>(intptr_t{-1}),
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  conf::info("pool_import_of_no_descriptor", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPoolExportPointer(nullptr, p));
  ASSERT_CU(cuMemFreeAsync(p, nullptr));
  ASSERT_CU(cuCtxSynchronize());
}

CONF_TEST(IpcMemHandleSharesAnAllocationWithAnotherProcess) {
  const size_t bytes = (1 << 20) + 100;
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAlloc(&p, bytes));
  ASSERT_CU(cuMemsetD8(p, kParentByte, bytes));
  CUipcMemHandle h{};
  ASSERT_CU(cuIpcGetMemHandle(&h, p));
  CUipcMemHandle same{};
  ASSERT_CU(cuIpcGetMemHandle(&same, p));
  EXPECT_TRUE(std::memcmp(&h, &same, sizeof h) == 0);
  const int status = run_child(h, bytes);
  conf::info_value("ipc_child_status", status);
  EXPECT_TRUE(status == 0);
  EXPECT_TRUE(all_bytes_are(p, bytes, kChildByte));
  // The exporter's own process may not open it.
  CUdeviceptr q = 0;
  CUresult r = cuIpcOpenMemHandle(&q, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  conf::info("ipc_open_in_exporting_process", r);
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, r);
  // Once freed, its handle opens nothing.
  ASSERT_CU(cuMemFree(p));
  const int stale = run_child(h, bytes);
  conf::info_value("ipc_child_status_after_free", stale);
  EXPECT_TRUE(stale == 12);  // the open: INVALID_VALUE (driver 580)
}

CONF_TEST(IpcMemHandlesRefuseWhatIsNoDeviceAllocation) {
  CUipcMemHandle h{};
  CUdeviceptr p = 0;
  ASSERT_CU(cuMemAlloc(&p, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuIpcGetMemHandle(nullptr, p));
  CUresult r = cuIpcGetMemHandle(&h, 0);
  conf::info("ipc_get_null_pointer", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  void* host = nullptr;
  ASSERT_CU(cuMemAllocHost(&host, 4096));
  r = cuIpcGetMemHandle(&h, reinterpret_cast<CUdeviceptr>(host));
  conf::info("ipc_get_pinned_host", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  ASSERT_CU(cuMemFreeHost(host));
  CUdeviceptr managed = 0;
  ASSERT_CU(cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL));
  r = cuIpcGetMemHandle(&h, managed);
  conf::info("ipc_get_managed", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  ASSERT_CU(cuMemFree(managed));
  // Bytes that are no handle, and a pointer that is no open mapping.
  CUipcMemHandle zeros{};
  CUdeviceptr q = 0;
  r = cuIpcOpenMemHandle(&q, zeros, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  conf::info("ipc_open_zeros", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  ASSERT_CU(cuIpcGetMemHandle(&h, p));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuIpcOpenMemHandle(nullptr, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  r = cuIpcCloseMemHandle(p);
  conf::info("ipc_close_own_allocation", r);
  EXPECT_TRUE(r != CUDA_SUCCESS);
  ASSERT_CU(cuMemFree(p));
}
