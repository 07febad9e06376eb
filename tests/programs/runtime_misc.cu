// Runtime calls that public samples make around their kernels: device flags
// and limits, registered host memory, managed-memory hints and prefetches,
// peer queries, arrays, launches with attributes, capture of stream-ordered
// allocation, and the profiler markers.
#include "check.h"
#include <cuda_profiler_api.h>
#include <vector>

__global__ void twice(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2;
}

int main() {
  CHECK_CUDA(cudaSetDeviceFlags(cudaDeviceMapHost | cudaDeviceScheduleAuto));
  unsigned flags = 0;
  CHECK_CUDA(cudaGetDeviceFlags(&flags));
  CHECK(flags & cudaDeviceMapHost);
  size_t fifo = 0;
  CHECK_CUDA(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 22));
  CHECK_CUDA(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
  CHECK(fifo >= (1 << 22));
  size_t stack = 0;
  CHECK_CUDA(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
  CHECK(stack > 0);
  CHECK_CUDA(cudaDeviceSetCacheConfig(cudaFuncCachePreferL1));
  cudaFuncCache cache;
  CHECK_CUDA(cudaDeviceGetCacheConfig(&cache));
  CHECK_CUDA(cudaProfilerStart());

  const int n = 4096;
  // Registered host memory, used by a kernel through its device pointer.
  std::vector<int> host(n, 3);
  CHECK_CUDA(cudaHostRegister(host.data(), n * sizeof(int), cudaHostRegisterMapped));
  int* dev_view = nullptr;
  CHECK_CUDA(cudaHostGetDevicePointer(&dev_view, host.data(), 0));
  twice<<<n / 256, 256>>>(dev_view, n);
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK(host[0] == 6 && host[n - 1] == 6);
  CHECK_CUDA(cudaHostUnregister(host.data()));

  // Managed memory with hints, prefetches and a stream attachment.
  int* m = nullptr;
  CHECK_CUDA(cudaMallocManaged(&m, n * sizeof(int)));
  for (int i = 0; i < n; ++i) m[i] = i;
  cudaMemLocation dev0{cudaMemLocationTypeDevice, 0};
  CHECK_CUDA(cudaMemAdvise(m, n * sizeof(int), cudaMemAdviseSetReadMostly, dev0));
  CHECK_CUDA(cudaMemAdvise(m, n * sizeof(int), cudaMemAdviseUnsetReadMostly, dev0));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  CHECK_CUDA(cudaMemPrefetchAsync(m, n * sizeof(int), dev0, 0, s));
  CHECK_CUDA(cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle));
  twice<<<n / 256, 256, 0, s>>>(m, n);
  cudaMemLocation host_loc{cudaMemLocationTypeHost, 0};
  CHECK_CUDA(cudaMemPrefetchAsync(m, n * sizeof(int), host_loc, 0, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK(m[5] == 10);
  int read_mostly = -1;
  CHECK_CUDA(cudaMemRangeGetAttribute(&read_mostly, sizeof read_mostly, cudaMemRangeAttributeReadMostly, m,
                                      n * sizeof(int)));
  CHECK(read_mostly == 0);
  CHECK_CUDA(cudaFree(m));

  // One device: no peer, and peer copies within it work.
  int count = 0, can = -1;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  if (count == 1) {
    int* a;
    int* b;
    CHECK_CUDA(cudaMalloc(&a, 64));
    CHECK_CUDA(cudaMalloc(&b, 64));
    CHECK_CUDA(cudaMemset(a, 7, 64));
    CHECK_CUDA(cudaMemcpyPeer(b, 0, a, 0, 64));
    unsigned char h[64];
    CHECK_CUDA(cudaMemcpy(h, b, 64, cudaMemcpyDeviceToHost));
    CHECK(h[63] == 7);
    cudaFree(a);
    cudaFree(b);
  } else {
    CHECK_CUDA(cudaDeviceCanAccessPeer(&can, 0, 1));
  }

  // A CUDA array, written and read back through 2D copies.
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t arr;
  CHECK_CUDA(cudaMallocArray(&arr, &desc, 16, 8));
  std::vector<float> img(16 * 8), back(16 * 8, 0);
  for (int i = 0; i < 16 * 8; ++i) img[i] = i * 0.5f;
  CHECK_CUDA(cudaMemcpy2DToArray(arr, 0, 0, img.data(), 16 * sizeof(float), 16 * sizeof(float), 8,
                                 cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy2DFromArray(back.data(), 16 * sizeof(float), arr, 0, 0, 16 * sizeof(float), 8,
                                   cudaMemcpyDeviceToHost));
  CHECK(back[100] == 50.0f);
  CHECK_CUDA(cudaFreeArray(arr));

  // cudaLaunchKernelEx with a priority attribute.
  int* d;
  CHECK_CUDA(cudaMalloc(&d, n * sizeof(int)));
  CHECK_CUDA(cudaMemset(d, 0, n * sizeof(int)));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(n / 256);
  cfg.blockDim = dim3(256);
  cfg.stream = s;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributePriority;
  attr.val.priority = 0;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CHECK_CUDA(cudaLaunchKernelEx(&cfg, twice, d, n));
  CHECK_CUDA(cudaStreamSynchronize(s));

  // Capturing stream-ordered allocation makes allocation and free nodes.
  cudaGraph_t g;
  CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  int* tmp = nullptr;
  CHECK_CUDA(cudaMallocAsync(&tmp, n * sizeof(int), s));
  CHECK_CUDA(cudaMemcpyAsync(tmp, host.data(), n * sizeof(int), cudaMemcpyHostToDevice, s));
  twice<<<n / 256, 256, 0, s>>>(tmp, n);
  CHECK_CUDA(cudaMemcpyAsync(d, tmp, n * sizeof(int), cudaMemcpyDeviceToDevice, s));
  CHECK_CUDA(cudaFreeAsync(tmp, s));
  CHECK_CUDA(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ge;
  CHECK_CUDA(cudaGraphInstantiate(&ge, g, 0));
  CHECK_CUDA(cudaGraphLaunch(ge, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  int h5 = 0;
  CHECK_CUDA(cudaMemcpy(&h5, d + 5, sizeof h5, cudaMemcpyDeviceToHost));
  CHECK(h5 == 12);  // host[] holds 6 since the registered-memory kernel
  CHECK_CUDA(cudaGraphExecDestroy(ge));
  CHECK_CUDA(cudaGraphDestroy(g));

  CHECK_CUDA(cudaProfilerStop());
  CHECK_CUDA(cudaStreamDestroy(s));
  cudaFree(d);
  return finish("runtime_misc");
}
