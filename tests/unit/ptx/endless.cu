// Kernels that never end (and one that does), for the watchdog's tests
// (CUCPU_KERNEL_TIMEOUT): a plain loop, a loop round a barrier, a spin on a
// flag nobody sets, a loop inside a called function.
extern "C" __global__ void loop_forever(volatile int* o) {
  for (;;) o[threadIdx.x] += 1;
}
extern "C" __global__ void barrier_forever(volatile int* o) {
  for (;;) {
    __syncthreads();
    o[threadIdx.x] += 1;
  }
}
extern "C" __global__ void wait_for_flag(volatile int* flag, int* o) {
  while (*flag == 0) {
  }
  o[threadIdx.x] = 1;
}
__device__ __noinline__ void count_forever(volatile int* o) {
  for (;;) o[0] += 1;
}
extern "C" __global__ void call_forever(volatile int* o) { count_forever(o + threadIdx.x); }
extern "C" __global__ void sum_to(int* o, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += i ^ static_cast<int>(threadIdx.x);
  o[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
