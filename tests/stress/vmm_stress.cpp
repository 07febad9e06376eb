// Stress: virtual memory management and user objects from many threads at
// once. Each thread maps, grants, copies through and unmaps ranges of its
// own while the others do the same; racing releases of one handle succeed
// exactly once; a user object's references dropped from many threads run
// its destructor exactly once.
#include <gtest/gtest.h>
#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace {

void use_primary() {
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUdevice dev;
  ASSERT_EQ(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
}

CUmemAllocationProp device_prop() {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  return p;
}

// One thread's rounds: two allocations side by side in a reservation,
// written by one copy across both, read back, unmapped and freed.
void map_copy_unmap(CUcontext ctx, int rounds, std::atomic<int>* failures) {
  cuCtxSetCurrent(ctx);
  CUmemAllocationProp prop = device_prop();
  size_t g = 0;
  cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  std::vector<unsigned char> in(2 * g), out(2 * g);
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < in.size(); i += 4096) in[i] = static_cast<unsigned char>(r + i / 4096);
    CUdeviceptr p = 0;
    CUmemGenericAllocationHandle a = 0, b = 0;
    CUmemAccessDesc d{};
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    bool ok = cuMemAddressReserve(&p, 2 * g, 0, 0, 0) == CUDA_SUCCESS && cuMemCreate(&a, g, &prop, 0) == CUDA_SUCCESS &&
              cuMemCreate(&b, g, &prop, 0) == CUDA_SUCCESS && cuMemMap(p, g, 0, a, 0) == CUDA_SUCCESS &&
              cuMemMap(p + g, g, 0, b, 0) == CUDA_SUCCESS && cuMemSetAccess(p, 2 * g, &d, 1) == CUDA_SUCCESS &&
              cuMemcpyHtoD(p, in.data(), in.size()) == CUDA_SUCCESS &&
              cuMemcpyDtoH(out.data(), p, out.size()) == CUDA_SUCCESS && out == in;
    ok = cuMemUnmap(p, 2 * g) == CUDA_SUCCESS && ok;
    ok = cuMemRelease(a) == CUDA_SUCCESS && cuMemRelease(b) == CUDA_SUCCESS && ok;
    ok = cuMemAddressFree(p, 2 * g) == CUDA_SUCCESS && ok;
    if (!ok) failures->fetch_add(1);
  }
}

TEST(VmmStress, ThreadsMapCopyAndUnmapRangesOfTheirOwn) {
  use_primary();
  CUcontext ctx;
  ASSERT_EQ(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
  std::atomic<int> failures{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 6; ++t) ts.emplace_back(map_copy_unmap, ctx, 20, &failures);
  for (auto& t : ts) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(VmmStress, RacingReleasesOfOneHandleSucceedOnce) {
  use_primary();
  CUmemAllocationProp prop = device_prop();
  size_t g = 0;
  ASSERT_EQ(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
  for (int round = 0; round < 100; ++round) {
    CUmemGenericAllocationHandle h;
    ASSERT_EQ(cuMemCreate(&h, g, &prop, 0), CUDA_SUCCESS);
    std::atomic<int> ok{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
      ts.emplace_back([&] {
        while (!go.load()) std::this_thread::yield();
        if (cuMemRelease(h) == CUDA_SUCCESS) ok.fetch_add(1);
      });
    go.store(true);
    for (auto& t : ts) t.join();
    ASSERT_EQ(ok.load(), 1);
  }
}

std::atomic<int> g_destroyed{0};
void CUDA_CB count_destroy(void*) { g_destroyed.fetch_add(1); }

TEST(UserObjectStress, ReferencesDroppedFromManyThreadsDestroyOnce) {
  use_primary();
  g_destroyed = 0;
  constexpr int kObjects = 50, kThreads = 4, kEach = 25;
  std::vector<CUuserObject> objects(kObjects);
  for (auto& u : objects)
    ASSERT_EQ(cuUserObjectCreate(&u, nullptr, count_destroy, kThreads * kEach, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
              CUDA_SUCCESS);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&] {
      CUgraph g;
      cuGraphCreate(&g, 0);
      for (auto& u : objects) {
        cuGraphRetainUserObject(g, u, 1, 0);
        for (int i = 0; i < kEach; ++i) cuUserObjectRelease(u, 1);
      }
      cuGraphDestroy(g);  // the graph's references, the last ones
    });
  for (auto& t : ts) t.join();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (g_destroyed.load() < kObjects && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  EXPECT_EQ(g_destroyed.load(), kObjects);
}

}  // namespace
