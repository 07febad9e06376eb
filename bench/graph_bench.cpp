// Capture and graph benchmarks: cost per captured node, per instantiated
// node, and per executed host and memset node.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include "bench_util.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using bench::check;
void init_once() { bench::use_primary_context(); }

void CUDA_CB noop(void*) {}
constexpr int kNodes = 256;

benchmark::Counter per_node(benchmark::State& st) {
  return benchmark::Counter(static_cast<double>(kNodes) * static_cast<double>(st.iterations()),
                            benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_CaptureHostNodes(benchmark::State& st) {
  init_once();
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (auto _ : st) {
    check(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    for (int i = 0; i < kNodes; ++i) check(cuLaunchHostFunc(s, noop, nullptr));
    CUgraph g;
    check(cuStreamEndCapture(s, &g));
    st.PauseTiming();
    check(cuGraphDestroy(g));
    st.ResumeTiming();
  }
  st.counters["ns_per_node"] = per_node(st);
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_CaptureHostNodes)->UseRealTime();

// A graph of kNodes nodes: `fan` roots of a chain each (independent work).
CUgraph build(bool memset, CUdeviceptr buf) {
  CUgraph g;
  check(cuGraphCreate(&g, 0));
  CUcontext ctx;
  check(cuCtxGetCurrent(&ctx));
  const int fan = 8;
  std::vector<CUgraphNode> last(fan, nullptr);
  for (int i = 0; i < kNodes; ++i) {
    CUgraphNode n;
    CUgraphNode* dep = last[i % fan] ? &last[i % fan] : nullptr;
    if (memset) {
      CUDA_MEMSET_NODE_PARAMS p{};
      p.dst = buf + static_cast<CUdeviceptr>(i) * 64;
      p.value = static_cast<unsigned>(i);
      p.elementSize = 4;
      p.width = 16;
      p.height = 1;
      check(cuGraphAddMemsetNode(&n, g, dep, dep ? 1 : 0, &p, ctx));
    } else {
      CUDA_HOST_NODE_PARAMS p{noop, nullptr};
      check(cuGraphAddHostNode(&n, g, dep, dep ? 1 : 0, &p));
    }
    last[i % fan] = n;
  }
  return g;
}

void BM_GraphInstantiate(benchmark::State& st) {
  init_once();
  CUgraph g = build(false, 0);
  for (auto _ : st) {
    CUgraphExec e;
    check(cuGraphInstantiate(&e, g, 0));
    st.PauseTiming();
    check(cuGraphExecDestroy(e));
    st.ResumeTiming();
  }
  st.counters["ns_per_node"] = per_node(st);
  check(cuGraphDestroy(g));
}
BENCHMARK(BM_GraphInstantiate)->UseRealTime();

void graph_run(benchmark::State& st, bool memset) {
  init_once();
  CUdeviceptr buf;
  check(cuMemAlloc(&buf, kNodes * 64));
  CUgraph g = build(memset, buf);
  CUgraphExec e;
  check(cuGraphInstantiate(&e, g, 0));
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (auto _ : st) {
    check(cuGraphLaunch(e, s));
    check(cuStreamSynchronize(s));
  }
  st.counters["ns_per_node"] = per_node(st);
  check(cuStreamDestroy(s));
  check(cuGraphExecDestroy(e));
  check(cuGraphDestroy(g));
  check(cuMemFree(buf));
}
void BM_GraphRunHostNodes(benchmark::State& st) { graph_run(st, false); }
void BM_GraphRunMemsetNodes(benchmark::State& st) { graph_run(st, true); }
BENCHMARK(BM_GraphRunHostNodes)->UseRealTime();
BENCHMARK(BM_GraphRunMemsetNodes)->UseRealTime();

}  // namespace
