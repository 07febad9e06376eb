// Kernel benchmarks: the cost of enqueueing an empty kernel, and of a graph
// of kernel nodes per node.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include "bench_util.h"

namespace {

using bench::check;

const char kEmpty[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry empty(.param .u64 p) { ret; }\n";

CUfunction empty_kernel() {
  static CUfunction f = [] {
    bench::use_primary_context();
    CUmodule m;
    check(cuModuleLoadData(&m, kEmpty));
    CUfunction k;
    check(cuModuleGetFunction(&k, m, "empty"));
    return k;
  }();
  bench::use_primary_context();
  return f;
}

// cuLaunchKernel <<<1,1>>> of an empty kernel with one parameter, on a
// non-blocking stream; drained every 1024 launches outside the timing.
void BM_EmptyKernelLaunchEnqueue(benchmark::State& st) {
  CUfunction f = empty_kernel();
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  void* p = nullptr;
  void* args[] = {&p};
  long n = 0;
  for (auto _ : st) {
    check(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
    if (++n % 1024 == 0) {
      st.PauseTiming();
      check(cuStreamSynchronize(s));
      st.ResumeTiming();
    }
  }
  check(cuStreamSynchronize(s));
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_EmptyKernelLaunchEnqueue);

// A chain of 100 empty kernel nodes, launched and waited for.
void BM_GraphRunKernelNodes(benchmark::State& st) {
  constexpr int kNodes = 100;
  CUfunction f = empty_kernel();
  CUgraph g;
  check(cuGraphCreate(&g, 0));
  void* p = nullptr;
  void* args[] = {&p};
  CUgraphNode prev = nullptr;
  for (int i = 0; i < kNodes; ++i) {
    CUDA_KERNEL_NODE_PARAMS kp{};
    kp.func = f;
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args;
    CUgraphNode n;
    check(cuGraphAddKernelNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, &kp));
    prev = n;
  }
  CUgraphExec e;
  check(cuGraphInstantiate(&e, g, 0));
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (auto _ : st) {
    check(cuGraphLaunch(e, s));
    check(cuStreamSynchronize(s));
  }
  st.counters["ns_per_node"] = benchmark::Counter(static_cast<double>(kNodes) * static_cast<double>(st.iterations()),
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  check(cuStreamDestroy(s));
  check(cuGraphExecDestroy(e));
  check(cuGraphDestroy(g));
}
BENCHMARK(BM_GraphRunKernelNodes)->UseRealTime();

}  // namespace
