// The throughput kernels of bench/kernels/throughput.cu in OpenCL C 1.2, the
// same algorithms at the same work-group sizes, for bench/opencl_bench.cpp
// (PoCL's CPU device as a peer of cucpu). Differences from the CUDA text are
// said where they are.

// y = a * x + y, a work-item an element (work-groups of 256).
__kernel void saxpy(int n, float a, __global const float* restrict x, __global float* restrict y) {
  const int i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}

// *p += v for a float in global memory: OpenCL 1.2 has no float atomic add,
// so a compare-and-swap loop on its bits.
void add_float(volatile __global float* p, float v) {
  volatile __global unsigned* u = (volatile __global unsigned*)p;
  unsigned seen = *u, cur;
  do {
    cur = seen;
    seen = atomic_cmpxchg(u, cur, as_uint(as_float(cur) + v));
  } while (seen != cur);
}

// Each work-group of 256 sums its 256 elements and adds the sum to *out
// with one atomic. Unlike the CUDA kernel (warp shuffles, then the 8 warps'
// sums through shared memory), a tree in local memory all the way down:
// PoCL's CPU device has no sub-groups, and OpenCL C 1.2 no shuffles.
__kernel void block_reduce(__global const float* restrict in, __global float* out, int n) {
  __local float s[256];
  const int l = get_local_id(0), i = get_global_id(0);
  s[l] = i < n ? in[i] : 0.f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = 128; w > 0; w >>= 1) {
    if (l < w) s[l] += s[l + w];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) add_float(out, s[0]);
}

// C = A * B for n x n row-major matrices, 16 x 16 tiles in local memory
// (work-groups of 16 x 16).
__kernel void sgemm(__global const float* restrict A, __global const float* restrict B, __global float* restrict C,
                    int n) {
  __local float As[16][16], Bs[16][16];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int row = get_group_id(1) * 16 + ty, col = get_group_id(0) * 16 + tx;
  float acc = 0.f;
  for (int k = 0; k < n; k += 16) {
    As[ty][tx] = A[row * n + k + tx];
    Bs[ty][tx] = B[(k + ty) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int j = 0; j < 16; ++j) acc += As[ty][j] * Bs[j][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[row * n + col] = acc;
}

// out = c0 * in + c1 * (sum of the 4 neighbours) at the interior points of a
// w x h row-major grid, global memory only; border points are not written
// (work-groups of 32 x 8).
__kernel void stencil5(__global const float* restrict in, __global float* restrict out, int w, int h, float c0,
                       float c1) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
  const int i = y * w + x;
  out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}

// Adds to bins[256] the counts of the bytes of data[0, words) (four bytes a
// word), grid-stride: a work-group counts into local bins with local
// atomics, then adds each nonzero bin to the global one with one atomic.
__kernel void histogram256(__global const unsigned* restrict data, int words, __global unsigned* restrict bins) {
  __local unsigned s[256];
  for (int b = get_local_id(0); b < 256; b += get_local_size(0)) s[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = get_global_id(0); i < words; i += get_global_size(0)) {
    const unsigned v = data[i];
    atomic_inc(&s[v & 255u]);
    atomic_inc(&s[(v >> 8) & 255u]);
    atomic_inc(&s[(v >> 16) & 255u]);
    atomic_inc(&s[v >> 24]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int b = get_local_id(0); b < 256; b += get_local_size(0))
    if (s[b]) atomic_add(&bins[b], s[b]);
}
