// First-use costs that warm benchmarks hide: the first capture and the first
// instantiation of a process, 100 nodes each, timed once per process. Run
// each in a process of its own (bench/cold-on-gpu.sh, or
// --benchmark_filter=NAME), after the context exists.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include "bench_util.h"

#include <sys/resource.h>

#include <chrono>

namespace {

using bench::check;
constexpr int kNodes = 100;
void CUDA_CB noop(void*) {}
// The process's page faults so far. getrusage sums over every thread of
// the process (cucpu's workers too), microseconds of its own: it runs
// outside the timed region.
long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void BM_ColdCapture100HostNodes(benchmark::State& st) {
  bench::use_primary_context();
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUgraph g = nullptr;
  long faults = 0;
  for (auto _ : st) {
    faults = minor_faults();
    const Clock::time_point t0 = Clock::now();
    check(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    for (int i = 0; i < kNodes; ++i) check(cuLaunchHostFunc(s, noop, nullptr));
    check(cuStreamEndCapture(s, &g));
    st.SetIterationTime(seconds_since(t0));
    faults = minor_faults() - faults;
  }
  st.counters["page_faults"] = static_cast<double>(faults);
  st.counters["ns_per_node"] = benchmark::Counter(static_cast<double>(kNodes), benchmark::Counter::kIsIterationInvariantRate |
                                                                                benchmark::Counter::kInvert);
  check(cuGraphDestroy(g));
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_ColdCapture100HostNodes)->Iterations(1)->UseManualTime();

void BM_ColdInstantiate100HostNodes(benchmark::State& st) {
  bench::use_primary_context();
  CUgraph g;
  check(cuGraphCreate(&g, 0));
  CUgraphNode last = nullptr;
  for (int i = 0; i < kNodes; ++i) {
    CUDA_HOST_NODE_PARAMS p{noop, nullptr};
    CUgraphNode n;
    check(cuGraphAddHostNode(&n, g, last ? &last : nullptr, last ? 1 : 0, &p));
    last = n;
  }
  CUgraphExec e = nullptr;
  long faults = 0;
  for (auto _ : st) {
    faults = minor_faults();
    const Clock::time_point t0 = Clock::now();
    check(cuGraphInstantiate(&e, g, 0));
    st.SetIterationTime(seconds_since(t0));
    faults = minor_faults() - faults;
  }
  st.counters["page_faults"] = static_cast<double>(faults);
  st.counters["ns_per_node"] = benchmark::Counter(static_cast<double>(kNodes), benchmark::Counter::kIsIterationInvariantRate |
                                                                                benchmark::Counter::kInvert);
  check(cuGraphExecDestroy(e));
  check(cuGraphDestroy(g));
}
BENCHMARK(BM_ColdInstantiate100HostNodes)->Iterations(1)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
