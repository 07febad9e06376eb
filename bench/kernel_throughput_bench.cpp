// Kernel throughput, launch latency and compile time, through the driver
// API (so the same binary measures NVIDIA's driver or cucpu), next to the
// same algorithms written by hand (hand_kernels.cpp) in the same binary.
// The kernels' PTX is read from bench/kernels (run from the repository root,
// or set CUCPU_BENCH_KERNELS).
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "hand_kernels.h"
#include "kernel_inputs.h"

namespace {

using bench::check;

std::string read_ptx(const char* name) {
  const char* dir = std::getenv("CUCPU_BENCH_KERNELS");
  std::ifstream f(std::string(dir ? dir : "bench/kernels") + "/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  if (ss.str().empty()) {
    std::fprintf(stderr, "cannot read bench/kernels/%s (run from the repository root)\n", name);
    std::exit(1);
  }
  return ss.str();
}

CUmodule throughput_module() {
  static CUmodule m = [] {
    bench::use_primary_context();
    CUmodule mod;
    check(cuModuleLoadData(&mod, read_ptx("throughput.sm90.ptx").c_str()));
    return mod;
  }();
  bench::use_primary_context();
  return m;
}

CUfunction fn(const char* name) {
  CUfunction f;
  check(cuModuleGetFunction(&f, throughput_module(), name));
  return f;
}

struct DeviceVector {
  explicit DeviceVector(size_t n, float v = 0.f) : n(n) {
    check(cuMemAlloc(&p, n * sizeof(float)));
    std::vector<float> h(n, v);
    check(cuMemcpyHtoD(p, h.data(), n * sizeof(float)));
  }
  ~DeviceVector() { cuMemFree(p); }
  CUdeviceptr p = 0;
  size_t n;
};

// Device memory holding a copy of host data, read back with read().
struct DeviceCopy {
  template <class T>
  explicit DeviceCopy(const std::vector<T>& h) : bytes(h.size() * sizeof(T)) {
    check(cuMemAlloc(&p, bytes));
    check(cuMemcpyHtoD(p, h.data(), bytes));
  }
  ~DeviceCopy() { cuMemFree(p); }
  template <class T>
  std::vector<T> read() const {
    std::vector<T> h(bytes / sizeof(T));
    check(cuMemcpyDtoH(h.data(), p, bytes));
    return h;
  }
  CUdeviceptr p = 0;
  size_t bytes;
};

constexpr int kSaxpyN = 64 << 20;  // 64 Mi floats
constexpr int kReduceN = 64 << 20;
constexpr int kGemmN = 1024;

void BM_KernelSaxpy64Mi(benchmark::State& st) {
  CUfunction f = fn("saxpy");
  DeviceVector x(kSaxpyN, 1.f), y(kSaxpyN, 2.f);
  int n = kSaxpyN;
  float a = 0.5f;
  void* args[] = {&n, &a, &x.p, &y.p};
  long runs = 0;
  for (auto _ : st) {
    check(cuLaunchKernel(f, kSaxpyN / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    check(cuCtxSynchronize());
    ++runs;
  }
  // y started at 2 and x is 1: after k runs every y is 2 + 0.5 k (exact).
  std::vector<float> got(kSaxpyN);
  check(cuMemcpyDtoH(got.data(), y.p, got.size() * sizeof(float)));
  if (std::any_of(got.begin(), got.end(), [&](float v) { return v != 2.f + 0.5f * static_cast<float>(runs); }))
    st.SkipWithError("wrong saxpy");
  st.SetBytesProcessed(st.iterations() * int64_t{kSaxpyN} * 12);
}
BENCHMARK(BM_KernelSaxpy64Mi)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_HandSaxpy64Mi(benchmark::State& st) {
  std::vector<float> x(kSaxpyN, 1.f), y(kSaxpyN, 2.f);
  for (auto _ : st) {
    bench::hand_saxpy(kSaxpyN, 0.5f, x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  st.SetBytesProcessed(st.iterations() * int64_t{kSaxpyN} * 12);
}
BENCHMARK(BM_HandSaxpy64Mi)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_KernelBlockReduce64Mi(benchmark::State& st) {
  CUfunction f = fn("block_reduce");
  DeviceVector in(kReduceN, 1.f), out(1);
  int n = kReduceN;
  void* args[] = {&in.p, &out.p, &n};
  for (auto _ : st) {
    check(cuMemsetD32(out.p, 0, 1));
    check(cuLaunchKernel(f, kReduceN / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    check(cuCtxSynchronize());
  }
  float total = 0;
  check(cuMemcpyDtoH(&total, out.p, sizeof total));
  if (total != static_cast<float>(kReduceN)) st.SkipWithError("wrong sum");
  st.SetBytesProcessed(st.iterations() * int64_t{kReduceN} * 4);
}
BENCHMARK(BM_KernelBlockReduce64Mi)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_HandBlockReduce64Mi(benchmark::State& st) {
  std::vector<float> in(kReduceN, 1.f);
  for (auto _ : st) benchmark::DoNotOptimize(bench::hand_block_reduce(in.data(), kReduceN));
  st.SetBytesProcessed(st.iterations() * int64_t{kReduceN} * 4);
}
BENCHMARK(BM_HandBlockReduce64Mi)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_KernelSgemm1024(benchmark::State& st) {
  CUfunction f = fn("sgemm");
  DeviceVector a(kGemmN * kGemmN, 1.f), b(kGemmN * kGemmN, 2.f), c(kGemmN * kGemmN);
  int n = kGemmN;
  void* args[] = {&a.p, &b.p, &c.p, &n};
  for (auto _ : st) {
    check(cuLaunchKernel(f, kGemmN / 16, kGemmN / 16, 1, 16, 16, 1, 0, nullptr, args, nullptr));
    check(cuCtxSynchronize());
  }
  // A is all 1, B all 2: every element of C is 2 n.
  std::vector<float> got(size_t{kGemmN} * kGemmN);
  check(cuMemcpyDtoH(got.data(), c.p, got.size() * sizeof(float)));
  if (std::any_of(got.begin(), got.end(), [](float v) { return v != 2.f * kGemmN; })) st.SkipWithError("wrong product");
  st.counters["GFLOPS"] = benchmark::Counter(2.0 * kGemmN * kGemmN * kGemmN * static_cast<double>(st.iterations()) / 1e9,
                                             benchmark::Counter::kIsRate);
}
BENCHMARK(BM_KernelSgemm1024)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_HandSgemm1024(benchmark::State& st) {
  std::vector<float> a(kGemmN * kGemmN, 1.f), b(kGemmN * kGemmN, 2.f), c(kGemmN * kGemmN);
  for (auto _ : st) {
    bench::hand_sgemm(a.data(), b.data(), c.data(), kGemmN);
    benchmark::DoNotOptimize(c.data());
  }
  st.counters["GFLOPS"] = benchmark::Counter(2.0 * kGemmN * kGemmN * kGemmN * static_cast<double>(st.iterations()) / 1e9,
                                             benchmark::Counter::kIsRate);
}
BENCHMARK(BM_HandSgemm1024)->UseRealTime()->Unit(benchmark::kMillisecond);

// One 4096 x 4096 grid a launch, 32 x 8 blocks; bytes: each point read once
// and written once (the neighbours' reads counted as cache hits).
void BM_KernelStencil4096(benchmark::State& st) {
  CUfunction f = fn("stencil5");
  const std::vector<float> host = bench::stencil_input();
  DeviceCopy in(host), out(std::vector<float>(host.size(), 0.f));
  int w = bench::kStencilN, h = bench::kStencilN;
  float c0 = bench::kStencilC0, c1 = bench::kStencilC1;
  void* args[] = {&in.p, &out.p, &w, &h, &c0, &c1};
  for (auto _ : st) {
    check(cuLaunchKernel(f, w / 32, h / 8, 1, 32, 8, 1, 0, nullptr, args, nullptr));
    check(cuCtxSynchronize());
  }
  static const std::vector<float> want = bench::stencil_reference(host);
  if (const char* e = bench::stencil_error(out.read<float>().data(), want)) st.SkipWithError(e);
  st.SetBytesProcessed(st.iterations() * int64_t{bench::kStencilN} * bench::kStencilN * 8);
}
BENCHMARK(BM_KernelStencil4096)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_HandStencil4096(benchmark::State& st) {
  const std::vector<float> in = bench::stencil_input();
  std::vector<float> out(in.size(), 0.f);
  const int n = bench::kStencilN;
  for (auto _ : st) {
    bench::hand_stencil5(in.data(), out.data(), n, n, bench::kStencilC0, bench::kStencilC1);
    benchmark::DoNotOptimize(out.data());
  }
  static const std::vector<float> want = bench::stencil_reference(in);
  if (const char* e = bench::stencil_error(out.data(), want)) st.SkipWithError(e);
  st.SetBytesProcessed(st.iterations() * int64_t{n} * n * 8);
}
BENCHMARK(BM_HandStencil4096)->UseRealTime()->Unit(benchmark::kMillisecond);

// The 256 bins zeroed and the 64 Mi bytes counted, a launch of kHistBlocks
// blocks of 256 threads (grid-stride).
void BM_KernelHistogram64Mi(benchmark::State& st) {
  CUfunction f = fn("histogram256");
  const std::vector<uint32_t> host = bench::histogram_input();
  DeviceCopy data(host), bins(std::vector<uint32_t>(256));
  int words = bench::kHistWords;
  void* args[] = {&data.p, &words, &bins.p};
  for (auto _ : st) {
    check(cuMemsetD32(bins.p, 0, 256));
    check(cuLaunchKernel(f, bench::kHistBlocks, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    check(cuCtxSynchronize());
  }
  static const std::array<uint32_t, 256> want = bench::histogram_reference(host);
  if (const char* e = bench::histogram_error(bins.read<uint32_t>().data(), want)) st.SkipWithError(e);
  st.SetBytesProcessed(st.iterations() * int64_t{bench::kHistBytes});
}
BENCHMARK(BM_KernelHistogram64Mi)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_HandHistogram64Mi(benchmark::State& st) {
  const std::vector<uint32_t> data = bench::histogram_input();
  uint32_t bins[256];
  for (auto _ : st) {
    std::fill(bins, bins + 256, 0u);
    bench::hand_histogram256(data.data(), bench::kHistWords, bins, bench::kHistBlocks);
    benchmark::DoNotOptimize(bins);
  }
  static const std::array<uint32_t, 256> want = bench::histogram_reference(data);
  if (const char* e = bench::histogram_error(bins, want)) st.SkipWithError(e);
  st.SetBytesProcessed(st.iterations() * int64_t{bench::kHistBytes});
}
BENCHMARK(BM_HandHistogram64Mi)->UseRealTime()->Unit(benchmark::kMillisecond);

// Launch of an empty <<<1,1>>> kernel to its completion seen by the host.
void BM_EmptyKernelLaunchToCompletion(benchmark::State& st) {
  CUfunction f = fn("empty");
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (auto _ : st) {
    check(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr));
    check(cuStreamSynchronize(s));
  }
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_EmptyKernelLaunchToCompletion)->UseRealTime();

// First launch of a ~200-line PTX kernel: load, compile, launch, finish.
// Each iteration's text is new (a comment differs), so nothing is cached.
void BM_Compile200LineKernelFirstLaunch(benchmark::State& st) {
  bench::use_primary_context();
  setenv("CUCPU_CACHE", "0", 1);
  const std::string base = read_ptx("compile_200.sm90.ptx");
  DeviceVector in(256, 1.f), out(256);
  CUdeviceptr idx;
  check(cuMemAlloc(&idx, 1024 * sizeof(int)));
  check(cuMemsetD32(idx, 3, 1024));
  int n = 256;
  float k = 0.5f;
  void* args[] = {&in.p, &out.p, &idx, &n, &k};
  static long round = 0;  // across runs too: every text is new
  for (auto _ : st) {
    const std::string text = base + "\n// round " + std::to_string(round++) + "\n";
    CUmodule m;
    CUfunction f;
    check(cuModuleLoadData(&m, text.c_str()));
    check(cuModuleGetFunction(&f, m, "mix"));
    check(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    check(cuCtxSynchronize());
    check(cuModuleUnload(m));
  }
  check(cuMemFree(idx));
  unsetenv("CUCPU_CACHE");
}
BENCHMARK(BM_Compile200LineKernelFirstLaunch)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
