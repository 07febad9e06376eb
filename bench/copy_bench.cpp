// Copy-engine benchmarks: batched 3D copy enqueue cost, and bandwidth of
// large contiguous and pitched copies next to the machine's own memcpy,
// measured in the same run.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include "bench_util.h"

#include <cstring>
#include <thread>
#include <vector>

namespace {

using bench::check;
void init_once() { bench::use_primary_context(); }

// `ops` stream-ordered copies of `extent`, op i from src + i * bytes to dst + i * bytes.
std::vector<CUDA_MEMCPY3D_BATCH_OP> slice_copies(CUdeviceptr src, CUdeviceptr dst, size_t ops, size_t bytes,
                                                 CUextent3D extent) {
  std::vector<CUDA_MEMCPY3D_BATCH_OP> list(ops);
  for (size_t i = 0; i < ops; ++i) {
    CUDA_MEMCPY3D_BATCH_OP& op = list[i];
    op = {};
    op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.src.op.ptr.ptr = src + i * bytes;
    op.dst.op.ptr.ptr = dst + i * bytes;
    op.extent = extent;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  }
  return list;
}

// Per-op cost of enqueueing a batch of 256 small (1 KiB, 16x8x8 bytes) 3D copies.
void BM_Batch3D_256x1KiB(benchmark::State& st) {
  init_once();
  const size_t ops = 256, bytes = 1024;
  CUdeviceptr src, dst;
  check(cuMemAlloc(&src, ops * bytes));
  check(cuMemAlloc(&dst, ops * bytes));
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  std::vector<CUDA_MEMCPY3D_BATCH_OP> list = slice_copies(src, dst, ops, bytes, {16, 8, 8});
  for (auto _ : st) {
    check(cuMemcpy3DBatchAsync(ops, list.data(), 0, s));
    st.PauseTiming();
    check(cuStreamSynchronize(s));
    st.ResumeTiming();
  }
  st.counters["ns_per_op"] = benchmark::Counter(static_cast<double>(ops) * static_cast<double>(st.iterations()),
                                                benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  check(cuStreamDestroy(s));
  check(cuMemFree(src));
  check(cuMemFree(dst));
}
BENCHMARK(BM_Batch3D_256x1KiB)->UseRealTime();

// A non-blocking stream and two 256 B device buffers, for the small-copy rows.
struct SmallCopy {
  CUstream s;
  CUdeviceptr a, b;
  SmallCopy() {
    init_once();
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    check(cuMemAlloc(&a, 256));
    check(cuMemAlloc(&b, 256));
  }
  ~SmallCopy() {
    check(cuStreamSynchronize(s));
    check(cuMemFree(a));
    check(cuMemFree(b));
    check(cuStreamDestroy(s));
  }
  void enqueue() const { check(cuMemcpyDtoDAsync(b, a, 256, s)); }
};

// Enqueue cost of a small device-to-device copy (the stream runs them
// meanwhile; every 1024 copies it is drained, outside the timing).
void BM_MemcpyDtoDAsync256Enqueue(benchmark::State& st) {
  SmallCopy c;
  int n = 0;
  for (auto _ : st) {
    c.enqueue();
    if (++n % 1024 == 0) {
      st.PauseTiming();
      check(cuStreamSynchronize(c.s));
      st.ResumeTiming();
    }
  }
}
BENCHMARK(BM_MemcpyDtoDAsync256Enqueue);

// The enqueuing thread's part alone, the stream held meanwhile
// (bench::StreamHold; see BM_LaunchHostFuncEnqueueHeld).
void BM_MemcpyDtoDAsync256EnqueueHeld(benchmark::State& st) {
  SmallCopy c;
  bench::run_held(st, c.s, [&] { c.enqueue(); });
}
BENCHMARK(BM_MemcpyDtoDAsync256EnqueueHeld);

// Small memsets through one stream, each enqueued and run (a synchronize
// every 1024, inside the timing): the per-op cost of the whole path, the
// worker's side too. Run once with CUCPU_TRACE set and once without, the
// difference is what tracing costs an op.
void BM_MemsetD8Async64Throughput(benchmark::State& st) {
  init_once();
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr p;
  check(cuMemAlloc(&p, 64));
  int n = 0;
  for (auto _ : st) {
    check(cuMemsetD8Async(p, 1, 64, s));
    if (++n % 1024 == 0) check(cuStreamSynchronize(s));
  }
  check(cuStreamSynchronize(s));
  check(cuMemFree(p));
  check(cuStreamDestroy(s));
}
BENCHMARK(BM_MemsetD8Async64Throughput)->UseRealTime();

constexpr size_t kBig = size_t{256} << 20;

// The machine's memcpy on 1 and 2 threads: the ceiling the copy engine is measured against.
void BM_HostMemcpy(benchmark::State& st) {
  const size_t threads = static_cast<size_t>(st.range(0));
  std::vector<unsigned char> a(kBig, 1), b(kBig, 2);
  for (auto _ : st) {
    std::vector<std::thread> ts;
    const size_t chunk = kBig / threads;
    for (size_t t = 0; t < threads; ++t)
      ts.emplace_back([&, t] { std::memcpy(b.data() + t * chunk, a.data() + t * chunk, chunk); });
    for (auto& t : ts) t.join();
    benchmark::DoNotOptimize(b.data());
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * kBig));
}
BENCHMARK(BM_HostMemcpy)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CopyContiguousDtoD(benchmark::State& st) {
  init_once();
  CUdeviceptr a, b;
  check(cuMemAlloc(&a, kBig));
  check(cuMemAlloc(&b, kBig));
  check(cuMemsetD8(a, 1, kBig));
  check(cuMemsetD8(b, 2, kBig));
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  for (auto _ : st) {
    check(cuMemcpyDtoDAsync(b, a, kBig, s));
    check(cuStreamSynchronize(s));
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * kBig));
  check(cuStreamDestroy(s));
  check(cuMemFree(a));
  check(cuMemFree(b));
}
BENCHMARK(BM_CopyContiguousDtoD)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CopyPitched2D(benchmark::State& st) {
  init_once();
  const size_t width = 4000, pitch = 4096, height = kBig / pitch;
  CUdeviceptr a, b;
  check(cuMemAlloc(&a, kBig));
  check(cuMemAlloc(&b, kBig));
  check(cuMemsetD8(a, 1, kBig));
  check(cuMemsetD8(b, 2, kBig));
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = a;
  c.dstDevice = b;
  c.srcPitch = c.dstPitch = pitch;
  c.WidthInBytes = width;
  c.Height = height;
  for (auto _ : st) {
    check(cuMemcpy2DAsync(&c, s));
    check(cuStreamSynchronize(s));
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * width * height));
  check(cuStreamDestroy(s));
  check(cuMemFree(a));
  check(cuMemFree(b));
}
BENCHMARK(BM_CopyPitched2D)->UseRealTime()->Unit(benchmark::kMillisecond);

// Many medium copies in one batch: uses every worker.
void BM_Batch3D_64x4MiB(benchmark::State& st) {
  init_once();
  const size_t ops = 64, bytes = size_t{4} << 20;
  CUdeviceptr src, dst;
  check(cuMemAlloc(&src, ops * bytes));
  check(cuMemAlloc(&dst, ops * bytes));
  check(cuMemsetD8(src, 1, ops * bytes));
  check(cuMemsetD8(dst, 2, ops * bytes));
  CUstream s;
  check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  std::vector<CUDA_MEMCPY3D_BATCH_OP> list = slice_copies(src, dst, ops, bytes, {4096, 1024, 1});
  for (auto _ : st) {
    check(cuMemcpy3DBatchAsync(ops, list.data(), 0, s));
    check(cuStreamSynchronize(s));
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * ops * bytes));
  check(cuStreamDestroy(s));
  check(cuMemFree(src));
  check(cuMemFree(dst));
}
BENCHMARK(BM_Batch3D_64x4MiB)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
