// cudaGetDeviceProperties agrees with cudaDeviceGetAttribute, and the
// version, count and memory queries answer.
#include "check.h"

int main() {
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  CHECK(count >= 1);
  int drv = 0, rt = 0;
  CHECK_CUDA(cudaDriverGetVersion(&drv));
  CHECK_CUDA(cudaRuntimeGetVersion(&rt));
  CHECK(drv >= 13000 && rt >= 13000);
  CHECK_CUDA(cudaSetDevice(0));
  int dev = -1;
  CHECK_CUDA(cudaGetDevice(&dev));
  CHECK(dev == 0);
  cudaDeviceProp p{};
  CHECK_CUDA(cudaGetDeviceProperties(&p, 0));
  int v = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
  CHECK(v == p.multiProcessorCount && v > 0);
  CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, 0));
  CHECK(v == p.maxThreadsPerBlock && v == 1024);
  CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 0));
  CHECK(v == p.warpSize && v == 32);
  CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 0));
  CHECK(v == p.major);
  CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMinor, 0));
  CHECK(v == p.minor);
  CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlock, 0));
  CHECK((size_t)v == p.sharedMemPerBlock);
  CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMaxGridDimX, 0));
  CHECK(v == p.maxGridSize[0]);
  CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrManagedMemory, 0));
  CHECK(v == p.managedMemory);
  CHECK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrCooperativeLaunch, 0));
  CHECK(v == p.cooperativeLaunch);
  CHECK(p.totalGlobalMem > 0);
  CHECK(p.name[0] != 0);
  size_t free_b = 0, total_b = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
  CHECK(total_b == p.totalGlobalMem && free_b <= total_b);
  char pci[64] = {};
  CHECK_CUDA(cudaDeviceGetPCIBusId(pci, sizeof pci, 0));
  CHECK(pci[0] != 0);
  int by_pci = -1;
  CHECK_CUDA(cudaDeviceGetByPCIBusId(&by_pci, pci));
  CHECK(by_pci == 0);
  CHECK_EQ_ERR(cudaGetDeviceProperties(&p, count), cudaErrorInvalidDevice);
  CHECK_EQ_ERR(cudaSetDevice(count), cudaErrorInvalidDevice);
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaDeviceReset());
  CHECK_CUDA(cudaFree(nullptr));
  return finish("device_props");
}
