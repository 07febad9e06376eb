// Typical kernels: saxpy, a block reduction (shared memory, barriers and
// shuffles), a tiled SGEMM, a prefix scan, a transpose through a padded
// shared tile, and a 2D stencil. kernels_algos.cpp computes each on the host
// with inputs chosen so the float results are exact.

extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Grid-stride sum of n ints: a shared-memory tree down to one warp, then
// shuffles; one atomicAdd per block. Blocks of 256.
extern "C" __global__ void reduce_sum(const int* in, int n, long long* total) {
  __shared__ long long s[256];
  int t = threadIdx.x;
  long long acc = 0;
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) acc += in[i];
  s[t] = acc;
  __syncthreads();
  for (int w = 128; w >= 32; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t < 32) {
    long long v = s[t];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (t == 0) atomicAdd(reinterpret_cast<unsigned long long*>(total), (unsigned long long)v);
  }
}

// Per-block float maximum and sum (the order-independent maximum is exact;
// the sum's inputs are small integers, so every order gives the same float).
extern "C" __global__ void reduce_float(const float* in, float* block_max, float* block_sum) {
  __shared__ float smax[8], ssum[8];  // blocks of 256: eight warps
  int t = threadIdx.x, lane = t & 31, w = t >> 5;
  float m = in[blockIdx.x * 256 + t], s = m;
  for (int o = 16; o > 0; o >>= 1) {
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    s += __shfl_xor_sync(0xffffffffu, s, o);
  }
  if (lane == 0) {
    smax[w] = m;
    ssum[w] = s;
  }
  __syncthreads();
  if (t == 0) {
    float mm = smax[0], ss = ssum[0];
    for (int j = 1; j < 8; ++j) {
      mm = fmaxf(mm, smax[j]);
      ss += ssum[j];
    }
    block_max[blockIdx.x] = mm;
    block_sum[blockIdx.x] = ss;
  }
}

// C = alpha * A * B + beta * C, row-major, n a multiple of 16, blocks of
// 16x16 threads, one output element per thread.
extern "C" __global__ void sgemm_tiled(int n, float alpha, const float* A, const float* B, float beta, float* C) {
  __shared__ float ta[16][16], tb[16][16];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += 16) {
    ta[ty][tx] = A[row * n + k0 + tx];
    tb[ty][tx] = B[(k0 + ty) * n + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) acc += ta[ty][k] * tb[k][tx];
    __syncthreads();
  }
  C[row * n + col] = alpha * acc + beta * C[row * n + col];
}

// Inclusive scan of each 512-element block (Hillis-Steele, double
// buffered, blocks of 512), plus each block's total for a second pass.
extern "C" __global__ void scan_block(const int* in, int* out, int* block_totals) {
  __shared__ int buf[2][512];
  int t = threadIdx.x, base = blockIdx.x * 512;
  int cur = 0;
  buf[0][t] = in[base + t];
  __syncthreads();
  for (int o = 1; o < 512; o <<= 1) {
    int v = buf[cur][t];
    if (t >= o) v += buf[cur][t - o];
    buf[cur ^ 1][t] = v;
    cur ^= 1;
    __syncthreads();
  }
  out[base + t] = buf[cur][t];
  if (t == 511) block_totals[blockIdx.x] = buf[cur][t];
}

// Adds the exclusive prefix of block totals (computed by a single-block
// scan_block launch over them) to every block after the first.
extern "C" __global__ void scan_add(int* data, const int* scanned_totals) {
  if (blockIdx.x > 0) data[blockIdx.x * 512 + threadIdx.x] += scanned_totals[blockIdx.x - 1];
}

// out (cols x rows) = transpose of in (rows x cols) through a 32x33 tile;
// blocks of 32x8 threads, each thread moving four elements.
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Five-point stencil on a w x h grid with a one-cell halo held fixed;
// 16x16 blocks staging an 18x18 tile.
extern "C" __global__ void stencil2d(const float* in, float* out, int w, int h) {
  __shared__ float tile[18][18];
  int gx = blockIdx.x * 16 + threadIdx.x, gy = blockIdx.y * 16 + threadIdx.y;
  int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
  auto at = [&](int x, int y) { return in[min(max(y, 0), h - 1) * w + min(max(x, 0), w - 1)]; };
  tile[ly][lx] = at(gx, gy);
  if (threadIdx.x == 0) tile[ly][0] = at(gx - 1, gy);
  if (threadIdx.x == 15) tile[ly][17] = at(gx + 1, gy);
  if (threadIdx.y == 0) tile[0][lx] = at(gx, gy - 1);
  if (threadIdx.y == 15) tile[17][lx] = at(gx, gy + 1);
  __syncthreads();
  if (gx >= w || gy >= h) return;
  if (gx == 0 || gy == 0 || gx == w - 1 || gy == h - 1) {
    out[gy * w + gx] = tile[ly][lx];
    return;
  }
  out[gy * w + gx] =
      0.5f * tile[ly][lx] + 0.125f * (tile[ly - 1][lx] + tile[ly + 1][lx] + tile[ly][lx - 1] + tile[ly][lx + 1]);
}
