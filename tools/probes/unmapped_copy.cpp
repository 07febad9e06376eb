// A probe for docs/conformance.md (build against any libcuda.so.1 and run;
// each case runs in a child process): what a driver does when the host
// memory of a queued pageable copy is unmapped before the copy runs, and
// when a stream-ordered free on another stream lands during a copy.
//   g++ -std=c++17 -I$CUDA/include tools/probes/unmapped_copy.cpp -lcuda -lpthread
#include <cuda.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <thread>

static void CUDA_CB mark(void* f) { static_cast<std::atomic<bool>*>(f)->store(true); }

static int run_case(int which) {
  cuInit(0);
  CUcontext ctx; cuDevicePrimaryCtxRetain(&ctx, 0); cuCtxSetCurrent(ctx);
  const size_t big = size_t{4} << 20;
  CUdeviceptr dev; cuMemAlloc(&dev, big); cuMemsetD8(dev, 7, big);
  CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUresult r = CUDA_SUCCESS, e = CUDA_SUCCESS;
  if (which == 0 || which == 1 || which == 2) {
    // The stream unmaps the memory (a host function) before the copy runs:
    // a pageable copy may not return before it has run.
    static void* host;
    host = mmap(nullptr, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cuLaunchHostFunc(s, [](void*) { munmap(host, size_t{4} << 20); }, nullptr);
    size_t n = which == 1 ? big : 4096;
    if (which == 2) e = cuMemcpyHtoDAsync(dev, host, n, s);
    else e = cuMemcpyDtoHAsync(host, dev, n, s);
    r = cuStreamSynchronize(s);
  } else {
    const size_t bytes = size_t{256} << 20;
    CUstream a; cuStreamCreate(&a, CU_STREAM_NON_BLOCKING);
    CUdeviceptr src, dst;
    cuMemAllocAsync(&src, bytes, a); cuMemAlloc(&dst, bytes);
    cuMemsetD8Async(src, 1, bytes, a); cuStreamSynchronize(a);
    std::atomic<bool> next{false};
    cuLaunchHostFunc(s, mark, &next);
    cuMemcpyDtoDAsync(dst, src, bytes, s);
    while (!next.load()) std::this_thread::yield();
    e = cuMemFreeAsync(src, a);
    r = cuCtxSynchronize();
  }
  const char* en = nullptr; cuGetErrorName(r, &en);
  CUdeviceptr more; CUresult after = cuMemAlloc(&more, 16);
  std::printf("case %d: enqueue %d, sync %d (%s), a later cuMemAlloc %d\n", which, (int)e, (int)r, en ? en : "?", (int)after);
  std::fflush(stdout);
  return 0;
}

int main() {
  const char* names[] = {"DtoH 4 KiB into unmapped pageable memory", "DtoH 4 MiB into unmapped pageable memory",
                         "HtoD 4 KiB from unmapped pageable memory", "cuMemFreeAsync on another stream during a 256 MiB DtoD"};
  for (int c = 0; c < 4; ++c) {
    std::fflush(stdout);
    std::fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
      alarm(20);  // a hang shows as SIGALRM (14)
      _exit(run_case(c));
    }
    int st = 0; waitpid(p, &st, 0);
    std::fflush(stdout);
    if (WIFSIGNALED(st)) std::printf("case %d (%s): killed by signal %d\n", c, names[c], WTERMSIG(st));
    else std::printf("case %d (%s): exit %d\n", c, names[c], WEXITSTATUS(st));
  }
}
