// User objects: their references, held by the caller, graphs, clones and
// executable graphs, and a destructor that runs once the last one goes.
#include <atomic>
#include <chrono>
#include <thread>

#include "harness.h"

namespace {

struct Tracked {
  std::atomic<int> destroyed{0};
};

void CUDA_CB destroy_tracked(void* p) { static_cast<Tracked*>(p)->destroyed.fetch_add(1); }

// The destructor runs on a driver thread of its own, some time after the
// last reference goes: waits for it (bounded: a destructor that never
// runs fails the test).
bool destroyed_eventually(const Tracked& t) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (t.destroyed.load() == 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return t.destroyed.load() == 1;
}

void CUDA_CB noop(void*) {}

}  // namespace

CONF_TEST(UserObjectsCheckTheirArguments) {
  Tracked t;
  CUuserObject u = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuUserObjectCreate(nullptr, &t, destroy_tracked, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuUserObjectCreate(&u, &t, nullptr, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuUserObjectCreate(&u, &t, destroy_tracked, 0, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuUserObjectCreate(&u, &t, destroy_tracked, 1, 0));  // the flag is required
  ASSERT_CU(cuUserObjectCreate(&u, &t, destroy_tracked, 2, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuUserObjectRetain(u, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuUserObjectRelease(u, 0));
  CUgraph g;
  ASSERT_CU(cuGraphCreate(&g, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphRetainUserObject(g, u, 1, 2));
  // A graph releasing a reference it does not hold: driver 580 succeeds
  // and corrupts the object's count (destroyed at once from a count of 1,
  // never destroyed from 2); refused on cucpu.
  if (conf::on_cucpu()) EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphReleaseUserObject(g, u, 1));
  ASSERT_CU(cuGraphDestroy(g));
  EXPECT_TRUE(t.destroyed.load() == 0);
  ASSERT_CU(cuUserObjectRelease(u, 2));
  EXPECT_TRUE(destroyed_eventually(t));
}

CONF_TEST(UserObjectDestructorRunsOnceTheLastReferenceGoes) {
  Tracked t;
  CUuserObject u;
  ASSERT_CU(cuUserObjectCreate(&u, &t, destroy_tracked, 2, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  ASSERT_CU(cuUserObjectRetain(u, 3));
  ASSERT_CU(cuUserObjectRelease(u, 4));
  EXPECT_TRUE(t.destroyed.load() == 0);
  // More than remain: undefined on the driver, refused on cucpu.
  if (conf::on_cucpu()) EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuUserObjectRelease(u, 2));
  ASSERT_CU(cuUserObjectRelease(u, 1));
  EXPECT_TRUE(destroyed_eventually(t));
}

// A graph's references pass to its clones and executable graphs; the
// object lives until the last of them, and every launch in flight, is gone.
CONF_TEST(UserObjectsLiveAsLongAsGraphsClonesAndExecsHoldThem) {
  Tracked t;
  CUuserObject u;
  ASSERT_CU(cuUserObjectCreate(&u, &t, destroy_tracked, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  CUgraph g, clone;
  ASSERT_CU(cuGraphCreate(&g, 0));
  ASSERT_CU(cuGraphRetainUserObject(g, u, 1, CU_GRAPH_USER_OBJECT_MOVE));  // the caller's reference, moved
  CUgraphNode n;
  CUDA_HOST_NODE_PARAMS hp{noop, nullptr};
  ASSERT_CU(cuGraphAddHostNode(&n, g, nullptr, 0, &hp));
  ASSERT_CU(cuGraphClone(&clone, g));
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuGraphDestroy(clone));
  EXPECT_TRUE(t.destroyed.load() == 0);  // the exec's reference
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuGraphLaunch(e, s));
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(t.destroyed.load() == 0);
  ASSERT_CU(cuGraphExecDestroy(e));
  EXPECT_TRUE(destroyed_eventually(t));
  ASSERT_CU(cuStreamDestroy(s));

  // A graph's own references go with cuGraphReleaseUserObject.
  Tracked t2;
  CUuserObject u2;
  ASSERT_CU(cuUserObjectCreate(&u2, &t2, destroy_tracked, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
  ASSERT_CU(cuGraphCreate(&g, 0));
  ASSERT_CU(cuGraphRetainUserObject(g, u2, 2, 0));
  ASSERT_CU(cuUserObjectRelease(u2, 1));
  ASSERT_CU(cuGraphReleaseUserObject(g, u2, 1));
  EXPECT_TRUE(t2.destroyed.load() == 0);
  ASSERT_CU(cuGraphReleaseUserObject(g, u2, 1));
  EXPECT_TRUE(destroyed_eventually(t2));
  ASSERT_CU(cuGraphDestroy(g));
}
