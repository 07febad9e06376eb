// Texture and surface objects through the runtime API, as image programs
// use them: a CUDA array sampled with normalized coordinates and linear
// filtering (an image turned by an angle), a buffer fetched with
// tex1Dfetch, and a surface written by one kernel and sampled by the next.
#include <cmath>
#include <vector>

#include "check.h"

// Writes each pixel's sample and the coordinates it sampled at (the
// device's sinf and cosf may differ from the host's by an ulp or two, which
// can move a weight across a rounding step).
__global__ void turn(cudaTextureObject_t tex, float* out, float2* at, int w, int h, float angle) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float u = (float)x / w - 0.5f, v = (float)y / h - 0.5f;
  float tu = u * cosf(angle) - v * sinf(angle) + 0.5f, tv = v * cosf(angle) + u * sinf(angle) + 0.5f;
  out[y * w + x] = tex2D<float>(tex, tu, tv);
  at[y * w + x] = make_float2(tu, tv);
}

__global__ void gather_fetch(cudaTextureObject_t tex, const int* idx, int n, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(tex, idx[i]);
}

__global__ void paint(cudaSurfaceObject_t surf, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) surf2Dwrite(make_uchar4(x, y, x ^ y, 255), surf, x * sizeof(uchar4), y);
}

__global__ void sample_painted(cudaTextureObject_t tex, float4* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float4>(tex, x + 0.5f, y + 0.5f);
}

// The filter as the hardware applies it: normalized coordinates in fixed
// point of 21 fractional bits (rounded down), texel centres at i + 0.5,
// weights in 256ths (each axis's rounded, their product rounded, the
// corners by inclusion-exclusion), coordinates wrapped.
float reference(const std::vector<float>& img, int w, int h, float tu, float tv) {
  auto wrap = [](int i, int n) { return ((i % n) + n) % n; };
  const double fu = floor(tu * 2097152.0) / 2097152.0, fv = floor(tv * 2097152.0) / 2097152.0;
  double x = (fu - floor(fu)) * w - 0.5, y = (fv - floor(fv)) * h - 0.5;
  int i = (int)floor(x), j = (int)floor(y);
  long a = (long)floor((x - floor(x)) * 256 + 0.5), b = (long)floor((y - floor(y)) * 256 + 0.5), ab = (a * b + 128) / 256;
  auto at = [&](int p, int q) { return img[wrap(q, h) * w + wrap(p, w)]; };
  return (float)(((256 - a - b + ab) * at(i, j) + (a - ab) * at(i + 1, j) + (b - ab) * at(i, j + 1) +
                  ab * at(i + 1, j + 1)) / 256.0);
}

int main() {
  const int w = 64, h = 48;
  std::vector<float> img(w * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) img[y * w + x] = (float)((x * 7 + y * 3) % 17);
  cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
  cudaArray_t arr;
  CHECK_CUDA(cudaMallocArray(&arr, &fd, w, h));
  CHECK_CUDA(cudaMemcpy2DToArray(arr, 0, 0, img.data(), w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
  cudaResourceDesc rd = {};
  rd.resType = cudaResourceTypeArray;
  rd.res.array.array = arr;
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeWrap;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 1;
  cudaTextureObject_t tex = 0;
  CHECK_CUDA(cudaCreateTextureObject(&tex, &rd, &td, nullptr));
  float* out;
  float2* at;
  CHECK_CUDA(cudaMalloc(&out, w * h * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&at, w * h * sizeof(float2)));
  const float angle = 0.5f;
  turn<<<dim3(w / 16, h / 16), dim3(16, 16)>>>(tex, out, at, w, h, angle);
  CHECK_CUDA(cudaGetLastError());
  std::vector<float> got(w * h);
  std::vector<float2> coords(w * h);
  CHECK_CUDA(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(coords.data(), at, coords.size() * sizeof(float2), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < w * h; ++i) {
    const float want = reference(img, w, h, coords[i].x, coords[i].y);
    if (fabsf(got[i] - want) > 1e-4f) {
      if (++bad <= 4)
        std::printf("pixel %d at (%.9g, %.9g): got %.9g, want %.9g\n", i, coords[i].x, coords[i].y, got[i], want);
    }
  }
  if (bad) std::printf("turned image: %d of %d pixels differ\n", bad, w * h);
  CHECK(bad == 0);
  cudaResourceDesc back = {};
  CHECK_CUDA(cudaGetTextureObjectResourceDesc(&back, tex));
  CHECK(back.resType == cudaResourceTypeArray && back.res.array.array == arr);
  CHECK_CUDA(cudaDestroyTextureObject(tex));

  // tex1Dfetch on a buffer: an index table read through the texture path.
  const int n = 1000;
  std::vector<int> table(n), idx(n);
  for (int i = 0; i < n; ++i) table[i] = i * i - 7, idx[i] = (i * 37) % n;
  int *dtable, *didx, *dout;
  CHECK_CUDA(cudaMalloc(&dtable, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&didx, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&dout, n * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(dtable, table.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(didx, idx.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaResourceDesc lr = {};
  lr.resType = cudaResourceTypeLinear;
  lr.res.linear.devPtr = dtable;
  lr.res.linear.desc = cudaCreateChannelDesc<int>();
  lr.res.linear.sizeInBytes = n * sizeof(int);
  cudaTextureDesc ltd = {};
  ltd.readMode = cudaReadModeElementType;
  cudaTextureObject_t ltex = 0;
  CHECK_CUDA(cudaCreateTextureObject(&ltex, &lr, &ltd, nullptr));
  gather_fetch<<<(n + 255) / 256, 256>>>(ltex, didx, n, dout);
  std::vector<int> fetched(n);
  CHECK_CUDA(cudaMemcpy(fetched.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < n; ++i) ok &= fetched[i] == table[idx[i]];
  CHECK(ok);
  CHECK_CUDA(cudaDestroyTextureObject(ltex));

  // A surface painted by one kernel, then sampled as normalized floats.
  const int sw = 40, sh = 24;
  cudaChannelFormatDesc cd = cudaCreateChannelDesc<uchar4>();
  cudaArray_t sarr;
  CHECK_CUDA(cudaMallocArray(&sarr, &cd, sw, sh, cudaArraySurfaceLoadStore));
  cudaResourceDesc sr = {};
  sr.resType = cudaResourceTypeArray;
  sr.res.array.array = sarr;
  cudaSurfaceObject_t surf = 0;
  CHECK_CUDA(cudaCreateSurfaceObject(&surf, &sr));
  paint<<<dim3(sw / 8, sh / 8), dim3(8, 8)>>>(surf, sw, sh);
  cudaTextureDesc ntd = {};
  ntd.readMode = cudaReadModeNormalizedFloat;
  cudaTextureObject_t stex = 0;
  CHECK_CUDA(cudaCreateTextureObject(&stex, &sr, &ntd, nullptr));
  float4* dsamples;
  CHECK_CUDA(cudaMalloc(&dsamples, sw * sh * sizeof(float4)));
  sample_painted<<<dim3(sw / 8, sh / 8), dim3(8, 8)>>>(stex, dsamples, sw, sh);
  std::vector<float4> samples(sw * sh);
  CHECK_CUDA(cudaMemcpy(samples.data(), dsamples, samples.size() * sizeof(float4), cudaMemcpyDeviceToHost));
  ok = true;
  for (int y = 0; y < sh; ++y)
    for (int x = 0; x < sw; ++x) {
      const float4 s = samples[y * sw + x];
      ok &= fabsf(s.x - x / 255.0f) < 1e-6f && fabsf(s.y - y / 255.0f) < 1e-6f &&
            fabsf(s.z - (x ^ y) / 255.0f) < 1e-6f && s.w == 1.0f;
    }
  CHECK(ok);
  std::vector<uchar4> raw(sw * sh);
  CHECK_CUDA(cudaMemcpy2DFromArray(raw.data(), sw * sizeof(uchar4), sarr, 0, 0, sw * sizeof(uchar4), sh,
                                   cudaMemcpyDeviceToHost));
  CHECK(raw[5 * sw + 7].x == 7 && raw[5 * sw + 7].y == 5 && raw[5 * sw + 7].z == (7 ^ 5));
  CHECK_CUDA(cudaDestroyTextureObject(stex));
  CHECK_CUDA(cudaDestroySurfaceObject(surf));
  CHECK_CUDA(cudaFreeArray(sarr));
  CHECK_CUDA(cudaFreeArray(arr));
  return finish("textures");
}
