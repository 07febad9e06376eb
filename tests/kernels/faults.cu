// Device-side printf, assert, trap, memory faults and __nanosleep. The
// fault kernels leave their context unusable, so kernels_faults.cpp runs
// each of them in a context of its own.
#include <assert.h>
#include <stdio.h>

extern "C" __global__ void say_hello(int v, double d) {
  if (threadIdx.x < 2)
    printf("hello from block %d thread %d: v=%d d=%.3f s=%s c=%c x=%llx\n", blockIdx.x, threadIdx.x, v, d, "str", 'q',
           0x1234abcdull);
}

// Fails its assertion where v == 42 (every thread of the launch).
extern "C" __global__ void assert_if(int v, int* out) {
  out[threadIdx.x] = v;
  assert(v != 42);
  out[threadIdx.x] = v + 1;
}

extern "C" __global__ void trap_if(int v, int* out) {
  out[0] = 1;
  if (v) asm volatile("trap;");
  out[0] = 2;
}

// Stores to p + off elements; the test passes an offset far outside any
// allocation.
extern "C" __global__ void store_far(int* p, long long off) { p[off] = 7; }

extern "C" __global__ void load_far(const int* p, long long off, int* out) { *out = p[off]; }

// A 4-byte load from p + off_bytes; an odd offset is misaligned.
extern "C" __global__ void load_misaligned(const char* p, int off_bytes, int* out) {
  *out = *reinterpret_cast<const int*>(p + off_bytes);
}

extern "C" __global__ void store_misaligned(char* p, int off_bytes) { *reinterpret_cast<double*>(p + off_bytes) = 1.0; }

// __nanosleep between two globaltimer reads; out[i] = elapsed ns.
extern "C" __global__ void nap(unsigned ns, unsigned long long* out) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  __nanosleep(ns);
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  out[blockIdx.x * blockDim.x + threadIdx.x] = t1 - t0;
}

// An atomic add whose result is unused (the worker's table combines it) to
// an address far from any allocation faults at the thread that names it.
extern "C" __global__ void reduce_far(float* p, long long offset) {
  if (threadIdx.x == 0) atomicAdd(p + offset, 1.0f);
}
