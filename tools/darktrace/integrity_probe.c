/* Calls slot 1 of the driver's integrity table directly and prints every
 * input the answer may depend on, so that an implementation can be checked
 * against NVIDIA's driver. usage: integrity_probe [LIBCUDA_PATH] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*export_fn)(const void**, const unsigned char*);
static const unsigned char kIntegrity[16] = {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
                                             0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2};
static const unsigned char kCudart[16] = {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                                          0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9};

int main(int argc, char** argv) {
  void* lib = dlopen(argc > 1 ? argv[1] : "libcuda.so.1", RTLD_NOW);
  if (!lib) { printf("dlopen: %s\n", dlerror()); return 1; }
  int (*init)(unsigned) = dlsym(lib, "cuInit");
  int (*drv)(int*) = dlsym(lib, "cuDriverGetVersion");
  int (*count)(int*) = dlsym(lib, "cuDeviceGetCount");
  int (*uuid)(unsigned char*, int) = dlsym(lib, "cuDeviceGetUuid_v2");
  int (*attr)(int*, int, int) = dlsym(lib, "cuDeviceGetAttribute");
  export_fn ex = (export_fn)dlsym(lib, "cuGetExportTable");
  printf("cuInit %d\n", init(0));
  int dv = 0, n = 0;
  drv(&dv);
  count(&n);
  printf("driver %d devices %d pid %d tid %ld pthread_self %#lx\n", dv, n, getpid(),
         (long)syscall(SYS_gettid), (unsigned long)pthread_self());
  for (int d = 0; d < n; ++d) {
    unsigned char u[16];
    int dom = -1, bus = -1, dev = -1;
    uuid(u, d);
    attr(&dom, 50, d);  /* PCI domain */
    attr(&bus, 33, d);  /* PCI bus */
    attr(&dev, 34, d);  /* PCI device */
    printf("device %d uuid ", d);
    for (int i = 0; i < 16; ++i) printf("%02x", u[i]);
    printf(" pci %d %d %d\n", dom, bus, dev);
  }
  const void* it = 0;
  const void* ct = 0;
  printf("integrity table %d\n", ex(&it, kIntegrity));
  printf("cudart table %d\n", ex(&ct, kCudart));
  const uintptr_t* slots = it;
  printf("integrity %p cudart %p slot0 %#lx slot1 %#lx slot2 %#lx\n", it, ct,
         (unsigned long)slots[0], (unsigned long)slots[1], (unsigned long)slots[2]);
  typedef int (*check_fn)(unsigned, unsigned long long, unsigned long long*);
  check_fn f = (check_fn)slots[1];
  unsigned versions[] = {13000, 13001, 13002, 12080, 13005, 12345};
  unsigned long long t = (unsigned long long)time(0);
  for (unsigned v = 0; v < sizeof versions / sizeof *versions; ++v) {
    unsigned long long out[2] = {0, 0};
    int r = f(versions[v], t, out);
    printf("check version %u time %llu -> %d %#llx %#llx\n", versions[v], t, r, out[0], out[1]);
  }
  return 0;
}
