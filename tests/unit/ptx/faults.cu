// Kernels that fault, for the compiler's fault tests.
#include <cassert>
extern "C" __global__ void wild_store(int* p) { p[threadIdx.x] = 1; }
extern "C" __global__ void misaligned(char* p) { *reinterpret_cast<int*>(p + 1) = 7; }
extern "C" __global__ void trap_kernel() { if (threadIdx.x == 3) asm volatile("trap;"); }
extern "C" __global__ void assert_kernel(int v) { assert(v == 42); }
extern "C" __global__ void deep(int* o, int n);
__device__ __noinline__ int down(int n) { volatile int pad[64]; pad[n & 63] = n; return n ? down(n - 1) + pad[n & 63] : 0; }
extern "C" __global__ void deep(int* o, int n) { o[0] = down(n); }
extern "C" __global__ void stuck_barrier(int* o) { asm volatile("bar.sync 1, 64;"); o[threadIdx.x] = 1; }
extern "C" __global__ void early_exit_barrier(int* o) { if (threadIdx.x >= 16) return; __syncthreads(); o[threadIdx.x] = 1; }
