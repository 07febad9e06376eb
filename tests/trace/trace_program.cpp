// A known program for the timeline-trace test: two streams; on the first a
// host function that holds it until everything is enqueued (so the second
// stream's wait has something to wait for), a memset, a host function and
// an event record; on the second a wait for that event, a copy and a host
// function; then a graph of a memset node and a host node, launched on the
// first stream.
#include <cuda.h>

#include "../common/check_cu.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {
using test_support::check;
std::atomic<bool> g_release{false};
void CUDA_CB mark(void* p) { ++*static_cast<int*>(p); }
void CUDA_CB hold(void*) {
  while (!g_release.load()) std::this_thread::yield();
}
}  // namespace

int main() {
  test_support::use_primary_context();
  CUstream a, b;
  check(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUdeviceptr x, y;
  check(cuMemAlloc(&x, 1 << 16), "cuMemAlloc");
  check(cuMemAlloc(&y, 1 << 16), "cuMemAlloc");
  CUevent e;
  check(cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  int marks = 0;
  check(cuLaunchHostFunc(a, hold, nullptr), "cuLaunchHostFunc");
  check(cuMemsetD8Async(x, 7, 1 << 16, a), "cuMemsetD8Async");
  check(cuLaunchHostFunc(a, mark, &marks), "cuLaunchHostFunc");
  check(cuEventRecord(e, a), "cuEventRecord");
  check(cuStreamWaitEvent(b, e, 0), "cuStreamWaitEvent");
  check(cuMemcpyDtoDAsync(y, x, 1 << 16, b), "cuMemcpyDtoDAsync");
  check(cuLaunchHostFunc(b, mark, &marks), "cuLaunchHostFunc");
  g_release.store(true);
  check(cuStreamSynchronize(b), "cuStreamSynchronize");
  check(cuStreamSynchronize(a), "cuStreamSynchronize");
  CUgraph g;
  check(cuGraphCreate(&g, 0), "cuGraphCreate");
  CUcontext ctx;
  check(cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  CUDA_MEMSET_NODE_PARAMS set{};
  set.dst = x;
  set.elementSize = 1;
  set.width = 1 << 16;
  set.height = 1;
  CUgraphNode setter, host;
  check(cuGraphAddMemsetNode(&setter, g, nullptr, 0, &set, ctx), "cuGraphAddMemsetNode");
  CUDA_HOST_NODE_PARAMS hp{mark, &marks};
  check(cuGraphAddHostNode(&host, g, &setter, 1, &hp), "cuGraphAddHostNode");
  CUgraphExec exec;
  check(cuGraphInstantiate(&exec, g, 0), "cuGraphInstantiate");
  check(cuGraphLaunch(exec, a), "cuGraphLaunch");
  check(cuStreamSynchronize(a), "cuStreamSynchronize");
  check(cuGraphExecDestroy(exec), "cuGraphExecDestroy");
  check(cuGraphDestroy(g), "cuGraphDestroy");
  std::printf("host functions ran: %d\n", marks);
  return marks == 3 ? 0 : 1;
}
