// Interprocess memory and events through cudart, as simpleIPC-style
// programs use them: the parent fills an array and records an event behind
// its kernel; a child process (this program again) opens both handles,
// waits for the parent's event, adds one to each element, records the
// event itself and exits; the parent then sees the child's work.
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"

extern char** environ;

namespace {
constexpr int kN = 1 << 16;

__global__ void fill(int* a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = i;
}
__global__ void add_one(int* a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}

template <class H>
std::string hex_of(const H& h) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (char c : h.reserved) {
    s += digits[(static_cast<unsigned char>(c) >> 4) & 15];
    s += digits[static_cast<unsigned char>(c) & 15];
  }
  return s;
}
template <class H>
H handle_of(const char* hex) {
  H h{};
  for (size_t i = 0; i < sizeof h.reserved && hex[2 * i] && hex[2 * i + 1]; ++i)
    h.reserved[i] = static_cast<char>(std::strtoul(std::string(hex + 2 * i, 2).c_str(), nullptr, 16));
  return h;
}

int child(const char* mem_hex, const char* event_hex) {
  int* a = nullptr;
  CHECK_CUDA(cudaIpcOpenMemHandle(reinterpret_cast<void**>(&a), handle_of<cudaIpcMemHandle_t>(mem_hex),
                                  cudaIpcMemLazyEnablePeerAccess));
  cudaEvent_t e = nullptr;
  CHECK_CUDA(cudaIpcOpenEventHandle(&e, handle_of<cudaIpcEventHandle_t>(event_hex)));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamWaitEvent(s, e, 0));  // the parent's fill
  add_one<<<(kN + 255) / 256, 256, 0, s>>>(a, kN);
  CHECK_CUDA(cudaEventRecord(e, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK_CUDA(cudaIpcCloseMemHandle(a));
  CHECK_CUDA(cudaEventDestroy(e));
  CHECK_CUDA(cudaStreamDestroy(s));
  return g_failures ? 1 : 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "child") == 0) return child(argv[2], argv[3]);
  int* a = nullptr;
  CHECK_CUDA(cudaMalloc(&a, kN * sizeof(int)));
  cudaIpcMemHandle_t mh;
  CHECK_CUDA(cudaIpcGetMemHandle(&mh, a));
  cudaEvent_t e;
  CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming));
  cudaIpcEventHandle_t eh;
  CHECK_CUDA(cudaIpcGetEventHandle(&eh, e));
  fill<<<(kN + 255) / 256, 256>>>(a, kN);
  CHECK_CUDA(cudaEventRecord(e, 0));
  std::string mem_hex = hex_of(mh), event_hex = hex_of(eh);
  char mode[] = "child";
  char* args[] = {argv[0], mode, mem_hex.data(), event_hex.data(), nullptr};
  pid_t pid;
  CHECK(posix_spawn(&pid, argv[0], nullptr, nullptr, args, environ) == 0);
  int status = -1;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_CUDA(cudaEventSynchronize(e));  // the child's record
  std::vector<int> got(kN);
  CHECK_CUDA(cudaMemcpy(got.data(), a, kN * sizeof(int), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < kN; ++i) wrong += got[i] != i + 1;
  CHECK(wrong == 0);
  CHECK_CUDA(cudaEventDestroy(e));
  CHECK_CUDA(cudaFree(a));
  return finish("ipc_processes");
}
