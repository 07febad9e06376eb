// Dynamic parallelism (built with -rdc=true): kernels that launch kernels
// into the default stream, into a stream they create, as tail and
// fire-and-forget launches, with nesting, device-side copies and sets, and
// the device runtime's error reporting.
#include <cuda_runtime.h>

extern "C" __global__ void cdp_fill(int* out, int base, int value) {
  out[base + blockIdx.x * blockDim.x + threadIdx.x] = value;
}

// Adds one to out[i] when the value before is `expect` (orders children).
extern "C" __global__ void cdp_step(int* out, int expect) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (out[i] == expect) out[i] = expect + 1;
}

// Each block's thread 0 launches children that fill its slice of four rows
// of 1024: the default stream, a created stream, a tail launch and a
// fire-and-forget launch; then a chain of three steps in the default
// stream, which must run in order.
extern "C" __global__ void cdp_parent(int* out, int* errors) {
  if (threadIdx.x != 0) return;
  const int base = blockIdx.x * 64;
  cdp_fill<<<2, 32>>>(out, base, 1);
  cudaStream_t s;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) atomicAdd(errors, 1);
  cdp_fill<<<2, 32, 0, s>>>(out + 1024, base, 2);
  cudaStreamDestroy(s);
  cdp_fill<<<1, 64, 0, cudaStreamTailLaunch>>>(out + 2048, base, 3);
  cdp_fill<<<1, 64, 0, cudaStreamFireAndForget>>>(out + 3072, base, 4);
  for (int k = 0; k < 3; ++k) cdp_step<<<1, 64>>>(out + 4096 + base, k);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
}

// Recursion: depth d launches depth d + 1 until `depth`, each writing its level.
extern "C" __global__ void cdp_nest(int* out, int d, int depth) {
  out[d] = d + 100;
  if (d + 1 < depth) cdp_nest<<<1, 1>>>(out, d + 1, depth);
}

// A tail launch sees what its parent's other children wrote.
extern "C" __global__ void cdp_sum(const int* in, int n, int* out) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += in[i];
  *out = s;
}
extern "C" __global__ void cdp_tail_after(int* data, int* sum) {
  cdp_fill<<<4, 32>>>(data, 0, 5);
  cdp_sum<<<1, 1, 0, cudaStreamTailLaunch>>>(data, 128, sum);
}

// Device-side copies and sets, queued in the default stream after a launch.
extern "C" __global__ void cdp_copies(int* a, int* b, int* c) {
  cdp_fill<<<1, 64>>>(a, 0, 7);
  cudaMemcpyAsync(b, a, 64 * sizeof(int), cudaMemcpyDeviceToDevice, 0);
  cudaMemsetAsync(c, 0x01, 64 * sizeof(int), 0);
}

// What the runtime answers: a launch of a block too large, then the last error.
extern "C" __global__ void cdp_errors(int* out) {
  cdp_fill<<<1, 4096>>>(out, 0, 9);
  out[0] = cudaGetLastError();
  out[1] = cudaGetLastError();
  int dev = -1, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMaxThreadsPerBlock, dev);
  out[2] = dev;
  out[3] = sms;
}

// A child grid of many blocks (the workers share it).
extern "C" __global__ void cdp_big(int* out) { cdp_fill<<<256, 256>>>(out, 0, 11); }

// 3D copies and sets from device code. Boxes of 8-byte rows, 4 rows a
// slice: slice 0 of dst set to 0x22, then a 3x2x2 box of src copied to
// (2, 0, 1) of dst; and a copy of nothing.
__device__ cudaPitchedPtr pitched(unsigned char* p) { return {p, 8, 8, 4}; }

extern "C" __global__ void cdp_copies_3d(int* out, unsigned char* src, unsigned char* dst) {
  cudaMemcpy3DParms none = {};
  out[0] = cudaMemcpy3DAsync(&none, 0);
  out[1] = cudaMemset3DAsync(pitched(dst), 0x22, {8, 4, 1}, 0);
  cudaMemcpy3DParms p = {};
  p.srcPtr = pitched(src);
  p.srcPos = {1, 1, 1};
  p.dstPtr = pitched(dst);
  p.dstPos = {2, 0, 1};
  p.extent = {3, 2, 2};
  p.kind = cudaMemcpyDeviceToDevice;
  out[2] = cudaMemcpy3DAsync(&p, 0);
  out[3] = cudaGetLastError();
}

// A device runtime call cucpu does not provide answers an error, never a hang or a fault.
extern "C" __global__ void cdp_unsupported(int* out) {
  cudaFuncAttributes a;
  out[0] = cudaFuncGetAttributes(&a, cdp_fill);
  out[1] = cudaGetLastError();
}
