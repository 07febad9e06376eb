extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void reduce(const float* in, float* out, int n) {
  __shared__ float s[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? s[threadIdx.x] : 0.f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if (threadIdx.x == 0) atomicAdd(out, v);
  }
}
__device__ int g[4];
__constant__ float c[8];
extern "C" __global__ void loc(int* o, int k) {
  int a[16];
  for (int j = 0; j < 16; ++j) a[j] = j * k + c[j & 7];
  o[threadIdx.x] = a[threadIdx.x & 15] + g[k & 3];
  printf("hi %d\n", k);
}
