// A probe for docs/conformance.md (build against any libcuda.so.1 and run;
// the calls that may crash a driver run in child processes): how a driver
// weighs the eight corners of a 3D linear fetch, what a texture descriptor
// reads back, and which texture and surface calls with bad input it refuses.
//   g++ -std=c++17 -I$CUDA/include tools/probes/texture_probe.cpp -lcuda -o /tmp/texture_probe
//   /tmp/texture_probe tests/kernels/ptx/texture.sm90.ptx
#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

void ok(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::fprintf(stderr, "%s: %s\n", what, name ? name : "?");
  std::exit(1);
}
const char* name_of(CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  return n ? n : "?";
}

CUarray make_array3d(CUarray_format f, unsigned channels, size_t w, size_t h, size_t d, unsigned flags) {
  CUDA_ARRAY3D_DESCRIPTOR ad{};
  ad.Width = w;
  ad.Height = h;
  ad.Depth = d;
  ad.Format = f;
  ad.NumChannels = channels;
  ad.Flags = flags;
  CUarray a;
  ok(cuArray3DCreate(&a, &ad), "cuArray3DCreate");
  return a;
}

void upload3d(CUarray a, const float* data, size_t w, size_t h, size_t d) {
  CUDA_MEMCPY3D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = data;
  c.srcPitch = w * sizeof(float);
  c.srcHeight = h;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = a;
  c.WidthInBytes = w * sizeof(float);
  c.Height = h;
  c.Depth = d;
  ok(cuMemcpy3D(&c), "cuMemcpy3D");
}

// The eight corners' weights of 3D linear fetches at upper-texel weights
// (a, b, c) in 256ths, one line per point: "a b c w000 w100 w010 w110 ...",
// corner bit 0 the x axis's upper texel.
void weights3d(CUmodule m) {
  CUfunction f;
  ok(cuModuleGetFunction(&f, m, "tex_3d_f32"), "tex_3d_f32");
  const int ks[] = {1, 3, 9, 17, 31, 50, 64, 77, 100, 127, 128, 150, 170, 200, 231, 250, 255};
  const int nk = sizeof ks / sizeof ks[0];
  const int n = nk * nk * nk;
  std::vector<float> xyz(3 * n);
  for (int i = 0; i < n; ++i) {
    const int k[3] = {ks[i % nk], ks[i / nk % nk], ks[i / nk / nk]};
    // The fraction after the half-texel shift is (k + 0.25) / 256: its rounded weight is k.
    for (int ax = 0; ax < 3; ++ax) xyz[3 * i + ax] = 0.5f + (k[ax] + 0.25f) / 256.0f;
  }
  CUdeviceptr dxyz, dout;
  ok(cuMemAlloc(&dxyz, xyz.size() * sizeof(float)), "alloc");
  ok(cuMemAlloc(&dout, n * 16), "alloc");
  ok(cuMemcpyHtoD(dxyz, xyz.data(), xyz.size() * sizeof(float)), "HtoD");
  std::vector<std::vector<float>> w(8, std::vector<float>(4 * n));
  CUarray a = make_array3d(CU_AD_FORMAT_FLOAT, 1, 2, 2, 2, 0);
  for (int corner = 0; corner < 8; ++corner) {
    float data[8] = {};
    data[corner] = 1.0f;  // index x + 2y + 4z
    upload3d(a, data, 2, 2, 2);
    CUDA_RESOURCE_DESC rd{};
    rd.resType = CU_RESOURCE_TYPE_ARRAY;
    rd.res.array.hArray = a;
    CUDA_TEXTURE_DESC td{};
    for (auto& m : td.addressMode) m = CU_TR_ADDRESS_MODE_CLAMP;
    td.filterMode = CU_TR_FILTER_MODE_LINEAR;
    CUtexObject t;
    ok(cuTexObjectCreate(&t, &rd, &td, nullptr), "cuTexObjectCreate");
    int count = n;
    void* args[] = {&t, &dxyz, &count, &dout};
    ok(cuLaunchKernel(f, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr), "launch");
    ok(cuMemcpyDtoH(w[corner].data(), dout, n * 16), "DtoH");
    ok(cuTexObjectDestroy(t), "destroy");
  }
  for (int i = 0; i < n; ++i) {
    std::printf("W3 %d %d %d", ks[i % nk], ks[i / nk % nk], ks[i / nk / nk]);
    for (int corner = 0; corner < 8; ++corner) std::printf(" %g", w[corner][4 * i] * 256.0f);
    std::printf("\n");
  }
  cuArrayDestroy(a);
  cuMemFree(dxyz);
  cuMemFree(dout);
}

// What cuTexObjectGetTextureDesc hands back of a border color, by channel count.
void descriptor_readback() {
  for (unsigned channels : {1u, 2u, 4u}) {
    CUarray a = make_array3d(CU_AD_FORMAT_FLOAT, channels, 4, 4, 0, 0);
    CUDA_RESOURCE_DESC rd{};
    rd.resType = CU_RESOURCE_TYPE_ARRAY;
    rd.res.array.hArray = a;
    CUDA_TEXTURE_DESC td{};
    td.addressMode[0] = CU_TR_ADDRESS_MODE_BORDER;
    td.addressMode[1] = CU_TR_ADDRESS_MODE_WRAP;
    td.addressMode[2] = CU_TR_ADDRESS_MODE_MIRROR;
    td.flags = CU_TRSF_NORMALIZED_COORDINATES;
    td.maxAnisotropy = 4;
    td.mipmapFilterMode = CU_TR_FILTER_MODE_LINEAR;
    td.mipmapLevelBias = 1.5f;
    td.minMipmapLevelClamp = 0.5f;
    td.maxMipmapLevelClamp = 3.0f;
    for (int c = 0; c < 4; ++c) td.borderColor[c] = 0.125f * (c + 1);
    CUtexObject t;
    ok(cuTexObjectCreate(&t, &rd, &td, nullptr), "create");
    CUDA_TEXTURE_DESC b{};
    ok(cuTexObjectGetTextureDesc(&b, t), "get");
    std::printf("DESC channels=%u address=%d,%d,%d filter=%d flags=%u aniso=%u mipfilter=%d bias=%g clamp=%g,%g "
                "border=%g,%g,%g,%g\n",
                channels, b.addressMode[0], b.addressMode[1], b.addressMode[2], b.filterMode, b.flags,
                b.maxAnisotropy, b.mipmapFilterMode, b.mipmapLevelBias, b.minMipmapLevelClamp,
                b.maxMipmapLevelClamp, b.borderColor[0], b.borderColor[1], b.borderColor[2], b.borderColor[3]);
    CUDA_RESOURCE_VIEW_DESC v;
    std::memset(&v, 0xab, sizeof v);
    CUresult r = cuTexObjectGetResourceViewDesc(&v, t);
    std::printf("VIEW channels=%u %s format=%d w=%zu h=%zu d=%zu first=%u,%u last=%u,%u\n", channels, name_of(r),
                v.format, v.width, v.height, v.depth, v.firstMipmapLevel, v.firstLayer, v.lastMipmapLevel,
                v.lastLayer);
    cuTexObjectDestroy(t);
    cuArrayDestroy(a);
  }
  std::printf("CALL cuTexObjectDestroy(0) %s\n", name_of(cuTexObjectDestroy(0)));
  std::printf("CALL cuSurfObjectDestroy(0) %s\n", name_of(cuSurfObjectDestroy(0)));
}

// Calls with bad input, each in a child process: its result, or how the child died.
void bad_calls() {
  const char* names[] = {"SurfCreate(null, rd)",   "SurfCreate(s, null)",      "SurfCreate(s, no LDST)",
                         "SurfCreate(s, linear)",  "SurfGetResourceDesc(null)", "TexGetResourceViewDesc(null)",
                         "TexCreate(null, rd, td)", "SurfGetResourceDesc(destroyed)"};
  for (int which = 0; which < 8; ++which) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      CUcontext ctx;
      ok(cuInit(0), "cuInit");
      ok(cuDevicePrimaryCtxRetain(&ctx, 0), "retain");
      ok(cuCtxSetCurrent(ctx), "current");
      CUarray plain = make_array3d(CU_AD_FORMAT_FLOAT, 1, 4, 4, 0, 0);
      CUarray ldst = make_array3d(CU_AD_FORMAT_FLOAT, 1, 4, 4, 0, CUDA_ARRAY3D_SURFACE_LDST);
      CUDA_RESOURCE_DESC rd{};
      rd.resType = CU_RESOURCE_TYPE_ARRAY;
      rd.res.array.hArray = ldst;
      CUdeviceptr lin;
      ok(cuMemAlloc(&lin, 4096), "alloc");
      CUDA_RESOURCE_DESC lr{};
      lr.resType = CU_RESOURCE_TYPE_LINEAR;
      lr.res.linear.devPtr = lin;
      lr.res.linear.format = CU_AD_FORMAT_FLOAT;
      lr.res.linear.numChannels = 1;
      lr.res.linear.sizeInBytes = 4096;
      CUDA_TEXTURE_DESC td{};
      CUsurfObject s = 0;
      CUresult r = CUDA_SUCCESS;
      switch (which) {
        case 0: r = cuSurfObjectCreate(nullptr, &rd); break;
        case 1: r = cuSurfObjectCreate(&s, nullptr); break;
        case 2: rd.res.array.hArray = plain; r = cuSurfObjectCreate(&s, &rd); break;
        case 3: r = cuSurfObjectCreate(&s, &lr); break;
        case 4:
          ok(cuSurfObjectCreate(&s, &rd), "surf");
          r = cuSurfObjectGetResourceDesc(nullptr, s);
          break;
        case 5: {
          CUtexObject t;
          ok(cuTexObjectCreate(&t, &rd, &td, nullptr), "tex");
          r = cuTexObjectGetResourceViewDesc(nullptr, t);
          break;
        }
        case 6: r = cuTexObjectCreate(nullptr, &rd, &td, nullptr); break;
        case 7: {
          ok(cuSurfObjectCreate(&s, &rd), "surf");
          ok(cuSurfObjectDestroy(s), "destroy");
          CUDA_RESOURCE_DESC b{};
          r = cuSurfObjectGetResourceDesc(&b, s);
          break;
        }
      }
      std::printf("BAD %s -> %s\n", names[which], name_of(r));
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) std::printf("BAD %s -> killed by signal %d\n", names[which], WTERMSIG(status));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s texture.sm90.ptx\n", argv[0]);
    return 2;
  }
  bad_calls();  // before this process's cuInit: each child initializes its own driver
  ok(cuInit(0), "cuInit");
  CUcontext ctx;
  ok(cuDevicePrimaryCtxRetain(&ctx, 0), "retain");
  ok(cuCtxSetCurrent(ctx), "current");
  std::ifstream in(argv[1]);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string ptx = ss.str();
  CUmodule m;
  ok(cuModuleLoadData(&m, ptx.c_str()), "cuModuleLoadData");
  descriptor_readback();
  weights3d(m);
  return 0;
}
