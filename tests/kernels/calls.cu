// Barriers and warp collectives inside called functions that nvcc keeps as
// calls (__noinline__): two barriers around a shared exchange, a warp sum
// of shuffles, a function that calls another with a barrier, one called by
// some warps only, and one called under a guard with a result in a register.
extern "C" __device__ __noinline__ int exchange(int* s, int v) {
  s[threadIdx.x] = v;
  __syncthreads();
  const int r = s[(threadIdx.x + 1) % blockDim.x];
  __syncthreads();
  return r;
}

extern "C" __device__ __noinline__ int warp_sum(int v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __device__ __noinline__ int exchange_twice(int* s, int v) {
  int local[4];
  for (int i = 0; i < 4; ++i) local[i] = v + i;
  const int a = exchange(s, local[threadIdx.x & 3]);
  return exchange(s, a * 2) + local[(threadIdx.x + 1) & 3];
}

// blockDim.x a multiple of 32, at most 256.
extern "C" __global__ void call_exchange_and_warp_sum(int* out) {
  __shared__ int s[256];
  const int a = exchange(s, static_cast<int>(threadIdx.x) * 3);
  const int b = warp_sum(static_cast<int>(threadIdx.x));
  out[threadIdx.x] = a + ((threadIdx.x & 31) == 0 ? b : 0);
}

extern "C" __global__ void call_nested_exchanges(int* out) {
  __shared__ int s[256];
  out[threadIdx.x] = exchange_twice(s, static_cast<int>(threadIdx.x) * 5 + 1);
}

// Warps below `warps` sum; the others do not call.
extern "C" __global__ void call_warp_sum_in_some_warps(int* out, int warps) {
  int v = static_cast<int>(threadIdx.x) + 1;
  if (static_cast<int>(threadIdx.x / 32) < warps) v = warp_sum(v);
  out[threadIdx.x] = v;
}
