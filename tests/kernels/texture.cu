// Texture and surface objects: fetches of every dimensionality through
// tex2D / tex1Dfetch / tex3D / layered forms, gathers, and surface loads
// and stores with each out-of-range mode. kernels_texture.cpp holds the
// host side: it builds the objects and checks what each thread returned.
// Coordinates come in as arrays so that one launch probes many points.

extern "C" __global__ void tex_2d_f32(cudaTextureObject_t t, const float* xy, int n, float4* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, xy[2 * i], xy[2 * i + 1]);
}

extern "C" __global__ void tex_2d_s32(cudaTextureObject_t t, const float* xy, int n, int4* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<int4>(t, xy[2 * i], xy[2 * i + 1]);
}

extern "C" __global__ void tex_2d_u32(cudaTextureObject_t t, const float* xy, int n, uint4* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<uint4>(t, xy[2 * i], xy[2 * i + 1]);
}

extern "C" __global__ void tex_1d_f32(cudaTextureObject_t t, const float* x, int n, float4* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1D<float4>(t, x[i]);
}

extern "C" __global__ void tex_1d_fetch_f32(cudaTextureObject_t t, const int* x, int n, float4* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float4>(t, x[i]);
}

extern "C" __global__ void tex_1d_fetch_s32(cudaTextureObject_t t, const int* x, int n, int4* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int4>(t, x[i]);
}

extern "C" __global__ void tex_3d_f32(cudaTextureObject_t t, const float* xyz, int n, float4* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float4>(t, xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
}

extern "C" __global__ void tex_2d_layered_f32(cudaTextureObject_t t, const float* xy, const int* layer, int n,
                                              float4* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float4>(t, xy[2 * i], xy[2 * i + 1], layer[i]);
}

extern "C" __global__ void tex_1d_layered_f32(cudaTextureObject_t t, const float* x, const int* layer, int n,
                                              float4* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1DLayered<float4>(t, x[i], layer[i]);
}

// One gather per component, so that each thread returns all four.
extern "C" __global__ void tex_gather_f32(cudaTextureObject_t t, const float* xy, int n, float4* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = xy[2 * i], y = xy[2 * i + 1];
  out[4 * i + 0] = tex2Dgather<float4>(t, x, y, 0);
  out[4 * i + 1] = tex2Dgather<float4>(t, x, y, 1);
  out[4 * i + 2] = tex2Dgather<float4>(t, x, y, 2);
  out[4 * i + 3] = tex2Dgather<float4>(t, x, y, 3);
}

// A single-channel float texture read as a scalar (the form most programs use).
extern "C" __global__ void tex_2d_scalar(cudaTextureObject_t t, const float* xy, int n, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, xy[2 * i], xy[2 * i + 1]);
}

// Surfaces: each thread of a w x h grid reads its int element, and writes
// it back doubled plus one, x in bytes as the hardware takes it.
extern "C" __global__ void surf_2d_rw(cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  int v = surf2Dread<int>(s, x * 4, y);
  surf2Dwrite(2 * v + 1, s, x * 4, y);
}

// Reads at the given (byte x, y) points with each boundary mode.
extern "C" __global__ void surf_2d_read_modes(cudaSurfaceObject_t s, const int* xy, int n, int* zero, int* clamp) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  zero[i] = surf2Dread<int>(s, xy[2 * i], xy[2 * i + 1], cudaBoundaryModeZero);
  clamp[i] = surf2Dread<int>(s, xy[2 * i], xy[2 * i + 1], cudaBoundaryModeClamp);
}

// Writes `v` at (byte x, y) with the zero mode (out of range: dropped), or
// with the trap mode when `trap`.
extern "C" __global__ void surf_2d_write(cudaSurfaceObject_t s, int x, int y, int v, int trap) {
  if (trap) surf2Dwrite(v, s, x, y, cudaBoundaryModeTrap);
  else surf2Dwrite(v, s, x, y, cudaBoundaryModeZero);
}

// 1D and 3D surfaces of float4 and uchar4 elements: out = in + 1 per channel.
extern "C" __global__ void surf_1d_f4(cudaSurfaceObject_t s, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= w) return;
  float4 v = surf1Dread<float4>(s, x * 16);
  surf1Dwrite(make_float4(v.x + 1, v.y + 1, v.z + 1, v.w + 1), s, x * 16);
}

extern "C" __global__ void surf_3d_u8x4(cudaSurfaceObject_t s, int w, int h, int d) {
  int x = threadIdx.x, y = threadIdx.y, z = blockIdx.x;
  if (x >= w || y >= h || z >= d) return;
  uchar4 v = surf3Dread<uchar4>(s, x * 4, y, z);
  surf3Dwrite(make_uchar4(v.x + 1, v.y + 1, v.z + 1, v.w + 1), s, x * 4, y, z);
}

// Cube maps: a direction per thread, the fetched texel.
extern "C" __global__ void tex_cube_f32(cudaTextureObject_t t, const float* xyz, int n, float4* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemap<float4>(t, xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
}
