// Streams, events, host functions and callbacks through the runtime API;
// ordering is held with a host function gated on a flag, never with sleeps.
#include "check.h"
#include <atomic>
#include <thread>

__global__ void fill(int* x, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}
__global__ void add_one(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}

static std::atomic<int> gate{0};
static std::atomic<int> ran{0};
static void CUDART_CB wait_gate(void*) {
  while (!gate.load()) std::this_thread::yield();
}
static void CUDART_CB count_host(void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); }
static void CUDART_CB callback(cudaStream_t, cudaError_t status, void* p) {
  if (status == cudaSuccess) static_cast<std::atomic<int>*>(p)->fetch_add(10);
}

int main() {
  const int n = 1 << 16;
  int* d;
  CHECK_CUDA(cudaMalloc(&d, n * sizeof(int)));
  cudaStream_t s1, s2;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreate(&s2));
  cudaEvent_t start, stop, mid;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventCreateWithFlags(&mid, cudaEventDisableTiming));

  // Under lazy loading, NVIDIA's driver may wait for running work when it
  // loads a kernel at its first launch: load both before holding a stream.
  fill<<<1, 1>>>(d, 0, 1);
  add_one<<<1, 1>>>(d, 1);
  CHECK_CUDA(cudaDeviceSynchronize());

  // A held stream reports not ready, and work behind the gate waits.
  CHECK_CUDA(cudaLaunchHostFunc(s1, wait_gate, nullptr));
  CHECK_CUDA(cudaEventRecord(start, s1));
  fill<<<n / 256, 256, 0, s1>>>(d, 41, n);
  CHECK_CUDA(cudaEventRecord(mid, s1));
  CHECK_EQ_ERR(cudaStreamQuery(s1), cudaErrorNotReady);
  CHECK_EQ_ERR(cudaEventQuery(mid), cudaErrorNotReady);
  // s2 waits for s1's fill, then adds one.
  CHECK_CUDA(cudaStreamWaitEvent(s2, mid, 0));
  add_one<<<n / 256, 256, 0, s2>>>(d, n);
  CHECK_CUDA(cudaLaunchHostFunc(s2, count_host, &ran));
  CHECK_CUDA(cudaStreamAddCallback(s2, callback, &ran, 0));
  CHECK_CUDA(cudaEventRecord(stop, s2));
  CHECK(ran.load() == 0);
  gate.store(1);
  CHECK_CUDA(cudaEventSynchronize(stop));
  CHECK(ran.load() == 11);
  CHECK_CUDA(cudaStreamQuery(s1));
  float ms = -1;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 0);
  CHECK_EQ_ERR(cudaEventElapsedTime(&ms, start, mid), cudaErrorInvalidResourceHandle);
  int h[4];
  CHECK_CUDA(cudaMemcpyAsync(h, d + n - 4, sizeof h, cudaMemcpyDeviceToHost, s2));
  CHECK_CUDA(cudaStreamSynchronize(s2));
  CHECK(h[0] == 42 && h[3] == 42);

  // The per-thread default stream, from two threads at once.
  int *a, *b;
  CHECK_CUDA(cudaMalloc(&a, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&b, n * sizeof(int)));
  auto work = [&](int* x, int v) {
    fill<<<n / 256, 256, 0, cudaStreamPerThread>>>(x, v, n);
    cudaStreamSynchronize(cudaStreamPerThread);
  };
  std::thread t1(work, a, 7), t2(work, b, 9);
  t1.join();
  t2.join();
  int ha = 0, hb = 0;
  CHECK_CUDA(cudaMemcpy(&ha, a + 5, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&hb, b + 5, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(ha == 7 && hb == 9);

  int prio_lo = 0, prio_hi = 0;
  CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&prio_lo, &prio_hi));
  cudaStream_t sp;
  CHECK_CUDA(cudaStreamCreateWithPriority(&sp, cudaStreamDefault, prio_hi));
  int prio = 1;
  CHECK_CUDA(cudaStreamGetPriority(sp, &prio));
  CHECK(prio == prio_hi);
  unsigned flags = 7;
  CHECK_CUDA(cudaStreamGetFlags(s1, &flags));
  CHECK(flags == cudaStreamNonBlocking);

  CHECK_CUDA(cudaStreamDestroy(sp));
  CHECK_CUDA(cudaStreamDestroy(s1));
  CHECK_CUDA(cudaStreamDestroy(s2));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  CHECK_CUDA(cudaEventDestroy(mid));
  cudaFree(d); cudaFree(a); cudaFree(b);
  return finish("streams_events");
}
