// A program with a stream-ordering bug that passes by luck: stream b reads
// what stream a's host function writes, but nothing orders b after a (the
// cuStreamWaitEvent is missing). It passes when a's work finishes before b's
// starts, which a normal schedule gives (the host does some work between
// the two enqueues); a schedule that runs a's work late shows the bug.
#include <cuda.h>

#include "../common/check_cu.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {
std::atomic<int> g_value{0};
int g_seen = -1;
using test_support::check;
void CUDA_CB produce(void*) { g_value.store(42); }
void CUDA_CB consume(void*) { g_seen = g_value.load(); }
}  // namespace

int main() {
  test_support::use_primary_context();
  CUstream a, b;
  check(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUevent done;
  check(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  check(cuLaunchHostFunc(a, produce, nullptr), "cuLaunchHostFunc");
  check(cuEventRecord(done, a), "cuEventRecord");
  // The host's own work between the two enqueues (about 15 ms: the work
  // before it is done by then even on a loaded machine).
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(15);
  while (std::chrono::steady_clock::now() < until) {
  }
  // Missing: cuStreamWaitEvent(b, done, 0);
  check(cuLaunchHostFunc(b, consume, nullptr), "cuLaunchHostFunc");
  check(cuStreamSynchronize(b), "cuStreamSynchronize");
  check(cuStreamSynchronize(a), "cuStreamSynchronize");
  std::printf("consumer saw %d\n", g_seen);
  return g_seen == 42 ? 0 : 1;
}
