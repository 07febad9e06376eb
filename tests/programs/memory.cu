// Stream-ordered allocation and pools, managed memory, mapped host memory,
// pitched and 2D copies, memsets.
#include "check.h"

__global__ void inc(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}

int main() {
  const int n = 1 << 14;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));

  int* a = nullptr;
  CHECK_CUDA(cudaMallocAsync(&a, n * sizeof(int), s));
  CHECK_CUDA(cudaMemsetAsync(a, 0, n * sizeof(int), s));
  inc<<<n / 256, 256, 0, s>>>(a, n);
  int h = -1;
  CHECK_CUDA(cudaMemcpyAsync(&h, a + 3, sizeof h, cudaMemcpyDeviceToHost, s));
  CHECK_CUDA(cudaFreeAsync(a, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK(h == 1);

  cudaMemPool_t pool;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  CHECK_CUDA(cudaMemPoolCreate(&pool, &props));
  void* p = nullptr;
  CHECK_CUDA(cudaMallocFromPoolAsync(&p, 4096, pool, s));
  CHECK_CUDA(cudaMemsetAsync(p, 0x5a, 4096, s));
  unsigned char byte = 0;
  CHECK_CUDA(cudaMemcpyAsync(&byte, (char*)p + 100, 1, cudaMemcpyDeviceToHost, s));
  CHECK_CUDA(cudaFreeAsync(p, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK(byte == 0x5a);
  CHECK_CUDA(cudaMemPoolDestroy(pool));
  cudaMemPool_t def;
  CHECK_CUDA(cudaDeviceGetDefaultMemPool(&def, 0));
  unsigned long long thr = 1;
  CHECK_CUDA(cudaMemPoolGetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr));
  CHECK(thr == 0);

  int* m = nullptr;
  CHECK_CUDA(cudaMallocManaged(&m, n * sizeof(int)));
  for (int i = 0; i < n; ++i) m[i] = i;
  inc<<<n / 256, 256>>>(m, n);
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK(m[0] == 1 && m[n - 1] == n);
  cudaPointerAttributes pa{};
  CHECK_CUDA(cudaPointerGetAttributes(&pa, m));
  CHECK(pa.type == cudaMemoryTypeManaged);
  CHECK_CUDA(cudaFree(m));

  int* mapped = nullptr;
  CHECK_CUDA(cudaHostAlloc(&mapped, n * sizeof(int), cudaHostAllocMapped));
  for (int i = 0; i < n; ++i) mapped[i] = 2 * i;
  int* dmapped = nullptr;
  CHECK_CUDA(cudaHostGetDevicePointer(&dmapped, mapped, 0));
  inc<<<n / 256, 256>>>(dmapped, n);
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK(mapped[10] == 21);
  CHECK_CUDA(cudaPointerGetAttributes(&pa, mapped));
  CHECK(pa.type == cudaMemoryTypeHost);
  CHECK_CUDA(cudaFreeHost(mapped));

  int* pinned = nullptr;
  CHECK_CUDA(cudaMallocHost(&pinned, 64 * sizeof(int)));
  size_t pitch = 0;
  int* img = nullptr;
  CHECK_CUDA(cudaMallocPitch(&img, &pitch, 8 * sizeof(int), 8));
  CHECK(pitch >= 8 * sizeof(int));
  for (int i = 0; i < 64; ++i) pinned[i] = i;
  CHECK_CUDA(cudaMemcpy2D(img, pitch, pinned, 8 * sizeof(int), 8 * sizeof(int), 8, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset2D(img, pitch, 0, 2 * sizeof(int), 8));
  int back[64] = {};
  CHECK_CUDA(cudaMemcpy2D(back, 8 * sizeof(int), img, pitch, 8 * sizeof(int), 8, cudaMemcpyDeviceToHost));
  CHECK(back[0] == 0 && back[1] == 0 && back[2] == 2 && back[63] == 63 && back[56] == 0);
  CHECK_CUDA(cudaFree(img));
  CHECK_CUDA(cudaFreeHost(pinned));

  size_t free_b = 0, total_b = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
  CHECK(free_b > 0);
  CHECK_EQ_ERR(cudaFree((void*)0x1234), cudaErrorInvalidValue);
  CHECK_CUDA(cudaStreamDestroy(s));
  return finish("memory");
}
