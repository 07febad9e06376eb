// A probe for docs/conformance.md (build against any libcuda.so.1 and run):
// cuDeviceGetTexture1DLinearMaxWidth by format and channels, and the CUDA
// 13 batched prefetch and discard of managed memory, good input and bad.
//   g++ -std=c++17 -I$CUDA/include tools/probes/batch_prefetch_probe.cpp -lcuda -o /tmp/bp && /tmp/bp
#include <cuda.h>

#include <cstdio>
#include <initializer_list>

namespace {
const char* name_of(CUresult r) {
  const char* n = nullptr;
  cuGetErrorName(r, &n);
  return n ? n : "?";
}
#define SAY(expr) std::printf("%-90s %s\n", #expr, name_of(expr))
}  // namespace

int main() {
  cuInit(0);
  CUcontext ctx;
  cuDevicePrimaryCtxRetain(&ctx, 0);
  cuCtxSetCurrent(ctx);
  size_t w = 0;
  const CUarray_format fmts[] = {CU_AD_FORMAT_UNSIGNED_INT8, CU_AD_FORMAT_HALF, CU_AD_FORMAT_FLOAT};
  for (CUarray_format f : fmts)
    for (unsigned ch : {1u, 2u, 4u}) {
      CUresult r = cuDeviceGetTexture1DLinearMaxWidth(&w, f, ch, 0);
      std::printf("maxwidth fmt=%d ch=%u %s %zu\n", static_cast<int>(f), ch, name_of(r), w);
    }
  SAY(cuDeviceGetTexture1DLinearMaxWidth(nullptr, CU_AD_FORMAT_FLOAT, 1, 0));
  SAY(cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, 3, 0));
  SAY(cuDeviceGetTexture1DLinearMaxWidth(&w, static_cast<CUarray_format>(0x77), 1, 0));
  SAY(cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, 1, 9));
  CUdeviceptr m[3], d;
  for (auto& p : m) cuMemAllocManaged(&p, 1 << 20, CU_MEM_ATTACH_GLOBAL);
  cuMemAlloc(&d, 1 << 20);
  cuMemsetD8(m[0], 0x5a, 1 << 20);
  cuCtxSynchronize();
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  size_t sizes[3] = {4096, 1 << 20, 8192};
  CUmemLocation locs[2] = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, {CU_MEM_LOCATION_TYPE_HOST, 0}};
  size_t idx[2] = {0, 2};
  size_t idx_bad[2] = {1, 2};
  SAY(cuMemPrefetchBatchAsync(m, sizes, 3, locs, idx, 2, 0, s));
  SAY(cuStreamSynchronize(s));
  int loc = -7;
  cuMemRangeGetAttribute(&loc, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m[0], 4096);
  std::printf("m0 last prefetch location %d\n", loc);
  cuMemRangeGetAttribute(&loc, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m[2], 4096);
  std::printf("m2 last prefetch location %d\n", loc);
  SAY(cuMemPrefetchBatchAsync(m, sizes, 0, locs, idx, 2, 0, s));
  SAY(cuMemPrefetchBatchAsync(nullptr, sizes, 3, locs, idx, 2, 0, s));
  SAY(cuMemPrefetchBatchAsync(m, nullptr, 3, locs, idx, 2, 0, s));
  SAY(cuMemPrefetchBatchAsync(m, sizes, 3, nullptr, idx, 2, 0, s));
  SAY(cuMemPrefetchBatchAsync(m, sizes, 3, locs, nullptr, 2, 0, s));
  SAY(cuMemPrefetchBatchAsync(m, sizes, 3, locs, idx, 0, 0, s));
  SAY(cuMemPrefetchBatchAsync(m, sizes, 3, locs, idx, 2, 1, s));
  SAY(cuMemPrefetchBatchAsync(m, sizes, 3, locs, idx_bad, 2, 0, s));
  SAY(cuMemPrefetchBatchAsync(m, sizes, 3, locs, idx, 3, 0, s));
  CUdeviceptr mixed[3] = {m[0], d, m[2]};
  SAY(cuMemPrefetchBatchAsync(mixed, sizes, 3, locs, idx, 2, 0, s));
  size_t zero[3] = {0, 4096, 4096};
  SAY(cuMemPrefetchBatchAsync(m, zero, 3, locs, idx, 2, 0, s));
  size_t big[3] = {(1 << 20) + 1, 4096, 4096};
  SAY(cuMemPrefetchBatchAsync(m, big, 3, locs, idx, 2, 0, s));
  CUmemLocation badloc[2] = {{CU_MEM_LOCATION_TYPE_DEVICE, 9}, {CU_MEM_LOCATION_TYPE_HOST, 0}};
  SAY(cuMemPrefetchBatchAsync(m, sizes, 3, badloc, idx, 2, 0, s));
  SAY(cuMemDiscardBatchAsync(m, sizes, 3, 0, s));
  SAY(cuStreamSynchronize(s));
  unsigned char b = 0;
  cuMemcpyDtoH(&b, m[0], 1);
  std::printf("byte after discard %#x\n", b);
  SAY(cuMemDiscardBatchAsync(m, sizes, 0, 0, s));
  SAY(cuMemDiscardBatchAsync(nullptr, sizes, 3, 0, s));
  SAY(cuMemDiscardBatchAsync(m, sizes, 3, 1, s));
  SAY(cuMemDiscardBatchAsync(mixed, sizes, 3, 0, s));
  SAY(cuMemDiscardAndPrefetchBatchAsync(m, sizes, 3, locs, idx, 2, 0, s));
  SAY(cuMemDiscardAndPrefetchBatchAsync(m, sizes, 3, locs, idx, 2, 1, s));
  SAY(cuStreamSynchronize(s));
  return 0;
}
