/* Prints how many devices the driver it was linked with reports. */
#include <cuda.h>
#include <stdio.h>

int main(void) {
  int n = -1;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&n) != CUDA_SUCCESS) return 1;
  char name[64] = "";
  CUdevice d;
  if (cuDeviceGet(&d, 0) != CUDA_SUCCESS || cuDeviceGetName(name, sizeof name, d) != CUDA_SUCCESS) return 1;
  printf("%d device(s): %s\n", n, name);
  return 0;
}
