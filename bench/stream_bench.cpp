// Stream-engine benchmarks, one per row of the targets in docs/performance.md.
// Built against any cuda.h and run against any libcuda.so.1, so the same
// binary measures NVIDIA's driver and cucpu (bench/compare-on-gpu.sh).
#include <benchmark/benchmark.h>
#include <cuda.h>

#include "bench_util.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

using bench::check;
void env() { bench::use_primary_context(); }

void CUDA_CB noop(void*) {}

void BM_StreamCreateDestroy(benchmark::State& st) {
  env();
  for (auto _ : st) {
    CUstream s;
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    check(cuStreamDestroy(s));
  }
}
BENCHMARK(BM_StreamCreateDestroy);

void BM_StreamQueryIdle(benchmark::State& st) {
  env();
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (auto _ : st) benchmark::DoNotOptimize(cuStreamQuery(s));
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_StreamQueryIdle);

void BM_StreamGetPriority(benchmark::State& st) {
  env();
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  int priority = 0;
  for (auto _ : st) {
    benchmark::DoNotOptimize(cuStreamGetPriority(s, &priority));
    benchmark::DoNotOptimize(priority);
  }
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_StreamGetPriority);

// The floor of any entry point: a pointer checked and a number stored,
// with the entry's own frame (beside cuStreamGetPriority, which adds a
// stream handle's validation to it).
void BM_DriverGetVersion(benchmark::State& st) {
  env();
  int version = 0;
  for (auto _ : st) {
    benchmark::DoNotOptimize(cuDriverGetVersion(&version));
    benchmark::DoNotOptimize(version);
  }
}
BENCHMARK(BM_DriverGetVersion);

void BM_StreamSynchronizeIdle(benchmark::State& st) {
  env();
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (auto _ : st) check(cuStreamSynchronize(s));
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_StreamSynchronizeIdle);

void enqueue_host_funcs(benchmark::State& st, unsigned stream_flags) {
  env();
  CUstream s;
  check(cuStreamCreate(&s, stream_flags));
  int n = 0;
  for (auto _ : st) {
    check(cuLaunchHostFunc(s, noop, nullptr));
    if (++n % 1024 == 0) {
      st.PauseTiming();
      check(cuStreamSynchronize(s));
      st.ResumeTiming();
    }
  }
  check(cuStreamSynchronize(s));
  check(cuStreamDestroy(s));
}
void BM_LaunchHostFuncEnqueue(benchmark::State& st) { enqueue_host_funcs(st, CU_STREAM_NON_BLOCKING); }
BENCHMARK(BM_LaunchHostFuncEnqueue);
// The enqueuing thread's part alone: the stream is held while 1024 host
// functions queue up behind the hold (bench::StreamHold), so the stream's
// runner works on none of them meanwhile. The difference from the row
// above is what running the stream at the same time costs the enqueuer.
void BM_LaunchHostFuncEnqueueHeld(benchmark::State& st) {
  env();
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  bench::run_held(st, s, [&] { check(cuLaunchHostFunc(s, noop, nullptr)); });
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_LaunchHostFuncEnqueueHeld);
// The same on a blocking stream (cuStreamCreate's default flags), which
// is ordered with the legacy stream.
void BM_LaunchHostFuncEnqueueBlockingStream(benchmark::State& st) { enqueue_host_funcs(st, CU_STREAM_DEFAULT); }
BENCHMARK(BM_LaunchHostFuncEnqueueBlockingStream);

struct Stamp {
  std::atomic<long long> ns{0};
  static void CUDA_CB mark(void* p) {
    static_cast<Stamp*>(p)->ns.store(Clock::now().time_since_epoch().count(), std::memory_order_release);
  }
};

void BM_HostFuncLatency(benchmark::State& st) {
  env();
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  Stamp stamp;
  for (auto _ : st) {
    stamp.ns = 0;
    long long t0 = Clock::now().time_since_epoch().count();
    check(cuLaunchHostFunc(s, Stamp::mark, &stamp));
    long long t1;
    while ((t1 = stamp.ns.load(std::memory_order_acquire)) == 0) {
    }
    st.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
    check(cuStreamSynchronize(s));
  }
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_HostFuncLatency)->UseManualTime();

void BM_HostFuncSyncRoundTrip(benchmark::State& st) {
  env();
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (auto _ : st) {
    check(cuLaunchHostFunc(s, noop, nullptr));
    check(cuStreamSynchronize(s));
  }
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_HostFuncSyncRoundTrip);

// A stream holding 256 host functions behind a gate, released and then
// synchronized: the cost per op of draining while a thread waits in
// cuStreamSynchronize (each completion must not wake the waiter).
void BM_DrainUnderSynchronize(benchmark::State& st) {
  env();
  constexpr int kOps = 256;
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  std::atomic<bool> open{false};
  auto gate = [](void* p) {
    auto* flag = static_cast<std::atomic<bool>*>(p);
    while (!flag->load(std::memory_order_acquire)) std::this_thread::yield();
  };
  for (auto _ : st) {
    st.PauseTiming();
    open = false;
    check(cuLaunchHostFunc(s, gate, &open));
    for (int i = 0; i < kOps; ++i) check(cuLaunchHostFunc(s, noop, nullptr));
    st.ResumeTiming();
    open.store(true, std::memory_order_release);
    check(cuStreamSynchronize(s));
  }
  st.counters["ns_per_op"] =
      benchmark::Counter(kOps * static_cast<double>(st.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_DrainUnderSynchronize)->Unit(benchmark::kMicrosecond);

// No CUDA: two threads bouncing one cache line each way. Half of this is
// what handing one op to a worker on another core costs at the least, the
// floor under the enqueue benchmark when the worker drains as fast as ops
// arrive.
void BM_MachineCacheLineRoundTrip(benchmark::State& st) {
  alignas(64) static std::atomic<long> ping{0};
  alignas(64) static std::atomic<long> pong{0};
  std::atomic<bool> stop{false};
  ping = 0;
  pong = 0;
  std::thread echo([&] {
    long seen = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      long v = ping.load(std::memory_order_acquire);
      if (v != seen) pong.store(seen = v, std::memory_order_release);
    }
  });
  long n = 0;
  for (auto _ : st) {
    ping.store(++n, std::memory_order_release);
    while (pong.load(std::memory_order_acquire) != n) {
    }
  }
  stop = true;
  echo.join();
}
BENCHMARK(BM_MachineCacheLineRoundTrip);

void BM_EventRecordStreamWait(benchmark::State& st) {
  env();
  CUstream a, b;
  check(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  check(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
  CUevent e;
  check(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  int n = 0;
  for (auto _ : st) {
    check(cuEventRecord(e, a));
    check(cuStreamWaitEvent(b, e, 0));
    if (++n % 1024 == 0) {
      st.PauseTiming();
      check(cuStreamSynchronize(b));
      st.ResumeTiming();
    }
  }
  check(cuStreamSynchronize(b));
  check(cuEventDestroy(e));
  check(cuStreamDestroy(a));
  check(cuStreamDestroy(b));
}
BENCHMARK(BM_EventRecordStreamWait);

void BM_CrossStreamEventLatency(benchmark::State& st) {
  env();
  CUstream a, b;
  check(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  check(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
  CUevent e;
  check(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  Stamp first, second;
  for (auto _ : st) {
    first.ns = 0;
    second.ns = 0;
    check(cuLaunchHostFunc(a, Stamp::mark, &first));
    check(cuEventRecord(e, a));
    check(cuStreamWaitEvent(b, e, 0));
    check(cuLaunchHostFunc(b, Stamp::mark, &second));
    while (second.ns.load(std::memory_order_acquire) == 0) {
    }
    st.SetIterationTime(static_cast<double>(second.ns - first.ns) * 1e-9);
    check(cuStreamSynchronize(b));
  }
  check(cuEventDestroy(e));
  check(cuStreamDestroy(a));
  check(cuStreamDestroy(b));
}
BENCHMARK(BM_CrossStreamEventLatency)->UseManualTime();

void BM_ThousandStreams(benchmark::State& st) {
  env();
  std::vector<CUstream> streams(1000);
  for (auto _ : st) {
    for (auto& s : streams) check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (auto& s : streams) check(cuLaunchHostFunc(s, noop, nullptr));
    for (auto& s : streams) check(cuStreamDestroy(s));
    check(cuCtxSynchronize());
  }
  st.counters["seconds_per_stream"] =
      benchmark::Counter(1000.0 * static_cast<double>(st.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ThousandStreams)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();  // one main for all bench/*.cpp files
