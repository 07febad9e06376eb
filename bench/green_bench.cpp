// Green contexts as partitions: the launch-to-completion latency of a small
// kernel in one green context, alone, beside a saturating kernel in the
// same green context, and beside one in another green context of disjoint
// SMs. Driver 580 and cucpu both partition: the third row should stay near
// the first, the second should not.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <atomic>
#include <thread>
#include <vector>

#include "bench_util.h"

namespace {

// `tick(p)`: one thread writes 1 (the latency kernel). `burn(p, n)`: every
// thread runs n dependent multiply-adds and stores the result (the
// saturating kernel).
const char kPtx[] =
    ".version 7.0\n.target sm_52\n.address_size 64\n"
    ".visible .entry tick(.param .u64 p)\n{\n"
    "  .reg .b64 %rd<2>;\n  .reg .b32 %r<2>;\n"
    "  ld.param.u64 %rd1, [p];\n  mov.u32 %r1, 1;\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n"
    ".visible .entry burn(.param .u64 p, .param .u32 n)\n{\n"
    "  .reg .b64 %rd<4>;\n  .reg .b32 %r<8>;\n  .reg .f32 %f<4>;\n  .reg .pred %q;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, %tid.x;\n  cvt.rn.f32.u32 %f1, %r2;\n  mov.f32 %f2, 0f3F800000;\n  mov.u32 %r3, 0;\n"
    "LOOP:\n  fma.rn.f32 %f2, %f2, 0f3F7FFFFF, %f1;\n  add.u32 %r3, %r3, 1;\n"
    "  setp.lt.u32 %q, %r3, %r1;\n  @%q bra LOOP;\n"
    "  mul.wide.u32 %rd2, %r2, 4;\n  add.s64 %rd3, %rd1, %rd2;\n  st.global.f32 [%rd3], %f2;\n  ret;\n}\n";

struct Partitions {
  CUgreenCtx a = nullptr, b = nullptr;
  CUfunction tick = nullptr, burn = nullptr;
  CUdeviceptr flag = 0, scratch = 0;
  unsigned sms_b = 0;
};

// Two green contexts of disjoint SMs: the first group of a split in two
// halves, and the second group (or the remainder).
Partitions& partitions() {
  static Partitions p = [] {
    bench::use_primary_context();
    Partitions out;
    CUdevResource dev{};
    bench::check(cuDeviceGetDevResource(0, &dev, CU_DEV_RESOURCE_TYPE_SM));
    CUdevResource groups[2], rest{};
    unsigned n = 2;
    bench::check(cuDevSmResourceSplitByCount(groups, &n, &dev, &rest, 0, dev.sm.smCount / 2));
    CUdevResource second = n == 2 ? groups[1] : rest;
    CUdevResourceDesc da = nullptr, db = nullptr;
    bench::check(cuDevResourceGenerateDesc(&da, &groups[0], 1));
    bench::check(cuDevResourceGenerateDesc(&db, &second, 1));
    bench::check(cuGreenCtxCreate(&out.a, da, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    bench::check(cuGreenCtxCreate(&out.b, db, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    out.sms_b = second.sm.smCount;
    CUmodule m = nullptr;
    bench::check(cuModuleLoadData(&m, kPtx));
    bench::check(cuModuleGetFunction(&out.tick, m, "tick"));
    bench::check(cuModuleGetFunction(&out.burn, m, "burn"));
    bench::check(cuMemAlloc(&out.flag, 4));
    bench::check(cuMemAlloc(&out.scratch, 1 << 22));
    return out;
  }();
  bench::use_primary_context();
  return p;
}

// Keeps the GPU's share of `g` busy with burn kernels (each some
// milliseconds) until destroyed.
class Saturate {
 public:
  Saturate(CUgreenCtx g, const Partitions& p) : p_(p) {
    bench::check(cuGreenCtxStreamCreate(&s_, g, CU_STREAM_NON_BLOCKING, 0));
    thread_ = std::thread([this] {
      bench::use_primary_context();
      unsigned iters = 1 << 14;
      void* args[] = {const_cast<CUdeviceptr*>(&p_.scratch), &iters};
      // Enough blocks for every SM many times over.
      const unsigned blocks = 64 * (p_.sms_b ? p_.sms_b : 1);
      while (!stop_.load(std::memory_order_acquire)) {
        bench::check(cuLaunchKernel(p_.burn, blocks, 1, 1, 128, 1, 1, 0, s_, args, nullptr));
        bench::check(cuStreamSynchronize(s_));
      }
    });
  }
  ~Saturate() {
    stop_.store(true, std::memory_order_release);
    thread_.join();
    bench::check(cuStreamDestroy(s_));
  }

 private:
  const Partitions& p_;
  CUstream s_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// One small kernel in green context A, launched and waited for.
void latency(benchmark::State& state, int beside) {
  Partitions& p = partitions();
  CUstream s = nullptr;
  bench::check(cuGreenCtxStreamCreate(&s, p.a, CU_STREAM_NON_BLOCKING, 0));
  Saturate* busy = beside == 0 ? nullptr : new Saturate(beside == 1 ? p.a : p.b, p);
  void* args[] = {&p.flag};
  for (auto _ : state) {
    bench::check(cuLaunchKernel(p.tick, 1, 1, 1, 32, 1, 1, 0, s, args, nullptr));
    bench::check(cuStreamSynchronize(s));
  }
  delete busy;
  bench::check(cuStreamDestroy(s));
}

void BM_GreenKernelLatencyAlone(benchmark::State& state) { latency(state, 0); }
void BM_GreenKernelLatencyBesideSaturatedSameGreenContext(benchmark::State& state) { latency(state, 1); }
void BM_GreenKernelLatencyBesideSaturatedOtherGreenContext(benchmark::State& state) { latency(state, 2); }

}  // namespace

BENCHMARK(BM_GreenKernelLatencyAlone)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GreenKernelLatencyBesideSaturatedSameGreenContext)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GreenKernelLatencyBesideSaturatedOtherGreenContext)->UseRealTime()->Unit(benchmark::kMicrosecond);
