// The throughput kernels through OpenCL on a CPU device (PoCL's, on Debian:
// pocl-opencl-icd), a peer of cucpu and of the hand-written C++ in
// kernel_throughput_bench.cpp: the same algorithms in OpenCL C
// (bench/opencl/kernels.cl), the same sizes, data and work-group sizes, the
// same checks of the results. A row times the kernel's enqueue and clFinish
// (plus the same small fill the CUDA row does); buffers are made, the
// program built and each kernel run once for the device's first
// compilation of it, all before the timing. The kernels' text is read from
// bench/opencl (run from the repository root, or set CUCPU_BENCH_OPENCL).
// PoCL's thread count: POCL_MAX_PTHREAD_COUNT (by default one a core).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_inputs.h"

namespace {

void check(cl_int r, const char* what) {
  if (r != CL_SUCCESS) {
    std::fprintf(stderr, "OpenCL: %s failed: %d\n", what, r);
    std::abort();
  }
}

std::string read_source() {
  const char* dir = std::getenv("CUCPU_BENCH_OPENCL");
  std::ifstream f(std::string(dir ? dir : "bench/opencl") + "/kernels.cl");
  std::stringstream ss;
  ss << f.rdbuf();
  if (ss.str().empty()) {
    std::fprintf(stderr, "cannot read bench/opencl/kernels.cl (run from the repository root)\n");
    std::exit(1);
  }
  return ss.str();
}

// The first CPU device of the first platform that has one, its context,
// an in-order queue and kernels.cl built for it: made once per process.
struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_program program = nullptr;
};

Device make_device() {
  Device d;
  cl_uint count = 0;
  check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  for (cl_platform_id p : platforms)
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 1, &d.device, nullptr) == CL_SUCCESS) {
      d.platform = p;
      break;
    }
  if (!d.platform) {
    std::fprintf(stderr, "no OpenCL CPU device (install pocl-opencl-icd)\n");
    std::exit(1);
  }
  cl_int err;
  d.context = clCreateContext(nullptr, 1, &d.device, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  d.queue = clCreateCommandQueue(d.context, d.device, 0, &err);
  check(err, "clCreateCommandQueue");
  const std::string src = read_source();
  const char* text = src.c_str();
  d.program = clCreateProgramWithSource(d.context, 1, &text, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  if (clBuildProgram(d.program, 1, &d.device, "", nullptr, nullptr) != CL_SUCCESS) {
    size_t len = 0;
    clGetProgramBuildInfo(d.program, d.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &len);
    std::string log(len, '\0');
    clGetProgramBuildInfo(d.program, d.device, CL_PROGRAM_BUILD_LOG, len, log.data(), nullptr);
    std::fprintf(stderr, "kernels.cl does not build:\n%s\n", log.c_str());
    std::exit(1);
  }
  return d;
}

Device& device() {
  static Device d = make_device();
  return d;
}

// A kernel of kernels.cl with its arguments set, released at scope end.
class Kernel {
 public:
  template <class... Args>
  Kernel(const char* name, const Args&... args) {
    cl_int err;
    k_ = clCreateKernel(device().program, name, &err);
    check(err, "clCreateKernel");
    cl_uint i = 0;
    (check(clSetKernelArg(k_, i++, sizeof(Args), &args), "clSetKernelArg"), ...);
  }
  ~Kernel() { clReleaseKernel(k_); }
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // Enqueues over a global range of global[0] x global[1] work-items in
  // groups of local[0] x local[1]; returns at once.
  void enqueue(std::initializer_list<size_t> global, std::initializer_list<size_t> local) {
    check(clEnqueueNDRangeKernel(device().queue, k_, static_cast<cl_uint>(global.size()), nullptr, global.begin(),
                                 local.begin(), 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
  }

 private:
  cl_kernel k_;
};

void finish() { check(clFinish(device().queue), "clFinish"); }

// A buffer holding a copy of host data, read back with read().
struct Buffer {
  template <class T>
  explicit Buffer(const std::vector<T>& h) : bytes(h.size() * sizeof(T)) {
    cl_int err;
    m = clCreateBuffer(device().context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, const_cast<T*>(h.data()),
                       &err);
    check(err, "clCreateBuffer");
  }
  ~Buffer() { clReleaseMemObject(m); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  template <class T>
  std::vector<T> read() const {
    std::vector<T> h(bytes / sizeof(T));
    check(clEnqueueReadBuffer(device().queue, m, CL_TRUE, 0, bytes, h.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
    return h;
  }
  // Sets every 32-bit word to 0; returns at once.
  void zero() {
    const cl_uint z = 0;
    check(clEnqueueFillBuffer(device().queue, m, &z, sizeof z, 0, bytes, 0, nullptr, nullptr),
          "clEnqueueFillBuffer");
  }
  cl_mem m;
  size_t bytes;
};

constexpr int kSaxpyN = 64 << 20;  // 64 Mi floats, as kernel_throughput_bench.cpp
constexpr int kReduceN = 64 << 20;
constexpr int kGemmN = 1024;

// y starts at 2, x is 1, a is 0.5: after k runs every y is 2 + 0.5 k (exact).
void BM_PoclSaxpy64Mi(benchmark::State& st) {
  Buffer x(std::vector<float>(kSaxpyN, 1.f)), y(std::vector<float>(kSaxpyN, 2.f));
  Kernel k("saxpy", cl_int{kSaxpyN}, cl_float{0.5f}, x.m, y.m);
  k.enqueue({kSaxpyN}, {256});
  finish();
  long runs = 1;
  for (auto _ : st) {
    k.enqueue({kSaxpyN}, {256});
    finish();
    ++runs;
  }
  const float want = 2.f + 0.5f * static_cast<float>(runs);
  for (float v : y.read<float>())
    if (v != want) {
      st.SkipWithError("wrong saxpy");
      break;
    }
  st.SetBytesProcessed(st.iterations() * int64_t{kSaxpyN} * 12);
}
BENCHMARK(BM_PoclSaxpy64Mi)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_PoclBlockReduce64Mi(benchmark::State& st) {
  Buffer in(std::vector<float>(kReduceN, 1.f)), out(std::vector<float>(1));
  Kernel k("block_reduce", in.m, out.m, cl_int{kReduceN});
  k.enqueue({kReduceN}, {256});
  finish();
  for (auto _ : st) {
    out.zero();
    k.enqueue({kReduceN}, {256});
    finish();
  }
  if (out.read<float>()[0] != static_cast<float>(kReduceN)) st.SkipWithError("wrong sum");
  st.SetBytesProcessed(st.iterations() * int64_t{kReduceN} * 4);
}
BENCHMARK(BM_PoclBlockReduce64Mi)->UseRealTime()->Unit(benchmark::kMillisecond);

// A is all 1, B all 2: every element of C is 2 n.
void BM_PoclSgemm1024(benchmark::State& st) {
  Buffer a(std::vector<float>(kGemmN * kGemmN, 1.f)), b(std::vector<float>(kGemmN * kGemmN, 2.f)),
      c(std::vector<float>(kGemmN * kGemmN));
  Kernel k("sgemm", a.m, b.m, c.m, cl_int{kGemmN});
  k.enqueue({kGemmN, kGemmN}, {16, 16});
  finish();
  for (auto _ : st) {
    k.enqueue({kGemmN, kGemmN}, {16, 16});
    finish();
  }
  for (float v : c.read<float>())
    if (v != 2.f * kGemmN) {
      st.SkipWithError("wrong product");
      break;
    }
  st.counters["GFLOPS"] = benchmark::Counter(2.0 * kGemmN * kGemmN * kGemmN * static_cast<double>(st.iterations()) / 1e9,
                                             benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PoclSgemm1024)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_PoclStencil4096(benchmark::State& st) {
  const std::vector<float> host = bench::stencil_input();
  Buffer in(host), out(std::vector<float>(host.size(), 0.f));
  const cl_int n = bench::kStencilN;
  Kernel k("stencil5", in.m, out.m, n, n, cl_float{bench::kStencilC0}, cl_float{bench::kStencilC1});
  k.enqueue({size_t(n), size_t(n)}, {32, 8});
  finish();
  for (auto _ : st) {
    k.enqueue({size_t(n), size_t(n)}, {32, 8});
    finish();
  }
  static const std::vector<float> want = bench::stencil_reference(host);
  if (const char* e = bench::stencil_error(out.read<float>().data(), want)) st.SkipWithError(e);
  st.SetBytesProcessed(st.iterations() * int64_t{n} * n * 8);
}
BENCHMARK(BM_PoclStencil4096)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_PoclHistogram64Mi(benchmark::State& st) {
  const std::vector<uint32_t> host = bench::histogram_input();
  Buffer data(host), bins(std::vector<uint32_t>(256));
  Kernel k("histogram256", data.m, cl_int{bench::kHistWords}, bins.m);
  const size_t global = size_t{bench::kHistBlocks} * 256;
  k.enqueue({global}, {256});
  finish();
  for (auto _ : st) {
    bins.zero();
    k.enqueue({global}, {256});
    finish();
  }
  static const std::array<uint32_t, 256> want = bench::histogram_reference(host);
  if (const char* e = bench::histogram_error(bins.read<uint32_t>().data(), want)) st.SkipWithError(e);
  st.SetBytesProcessed(st.iterations() * int64_t{bench::kHistBytes});
}
BENCHMARK(BM_PoclHistogram64Mi)->UseRealTime()->Unit(benchmark::kMillisecond);

std::string device_string(cl_device_info what) {
  size_t len = 0;
  clGetDeviceInfo(device().device, what, 0, nullptr, &len);
  std::string s(len, '\0');
  clGetDeviceInfo(device().device, what, len, s.data(), nullptr);
  if (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

// Google Benchmark's main, with the device named in the report's context.
int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  cl_uint units = 0;
  clGetDeviceInfo(device().device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr);
  size_t len = 0;
  clGetPlatformInfo(device().platform, CL_PLATFORM_VERSION, 0, nullptr, &len);
  std::string platform(len, '\0');
  clGetPlatformInfo(device().platform, CL_PLATFORM_VERSION, len, platform.data(), nullptr);
  if (!platform.empty() && platform.back() == '\0') platform.pop_back();
  benchmark::AddCustomContext("opencl_platform", platform);
  benchmark::AddCustomContext("opencl_device", device_string(CL_DEVICE_NAME));
  benchmark::AddCustomContext("opencl_compute_units", std::to_string(units));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
