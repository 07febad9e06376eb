// Prints device facts of the real driver: every attribute value, the stream
// priority range, and a few context-level answers.
#include <cuda.h>
#include <cstdio>
int main() {
  std::printf("init %d\n", cuInit(0));
  CUdevice d; cuDeviceGet(&d, 0);
  for (int a = 1; a < 160; ++a) {
    int v = 0; CUresult r = cuDeviceGetAttribute(&v, (CUdevice_attribute)a, d);
    std::printf("attr %d %d %d\n", a, r, v);
  }
  char name[256]; cuDeviceGetName(name, 256, d); std::printf("name %s\n", name);
  size_t tm; cuDeviceTotalMem(&tm, d); std::printf("totalmem %zu\n", tm);
  CUcontext c; std::printf("ctxcreate %d\n", cuCtxCreate(&c, nullptr, 0, d));
  int lo, hi; cuCtxGetStreamPriorityRange(&lo, &hi); std::printf("prio %d %d\n", lo, hi);
  unsigned ver; cuCtxGetApiVersion(c, &ver); std::printf("apiver %u\n", ver);
  int dv; cuDriverGetVersion(&dv); std::printf("driver %d\n", dv);
  for (int e = 0; e < 1000; ++e) { const char* s = nullptr;
    if (cuGetErrorName((CUresult)e, &s) == CUDA_SUCCESS) std::printf("err %d %s\n", e, s); }
  return 0;
}
