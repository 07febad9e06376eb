// The bundled sample: a plain CUDA driver-API host program. Built against
// cuda.h and linked with -lcuda, it runs unchanged on NVIDIA's driver or on
// cucpu (`cucpu run -- ./streams_demo`) and prints what it did.
#include <cuda.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                             \
  do {                                                                          \
    CUresult r_ = (call);                                                       \
    if (r_ != CUDA_SUCCESS) {                                                   \
      const char* n_ = nullptr;                                                 \
      cuGetErrorName(r_, &n_);                                                  \
      std::fprintf(stderr, "%s failed: %s\n", #call, n_ ? n_ : "?");            \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

namespace {
std::atomic<int> g_step{0};
struct Note {
  const char* text;
  int order = 0;
};
void CUDA_CB say(void* p) {
  auto* n = static_cast<Note*>(p);
  n->order = ++g_step;
  std::printf("  host function %d on a worker: %s\n", n->order, n->text);
}
}  // namespace

int main() {
  CHECK(cuInit(0));
  int version = 0, count = 0;
  CHECK(cuDriverGetVersion(&version));
  CHECK(cuDeviceGetCount(&count));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  char name[128];
  CHECK(cuDeviceGetName(name, sizeof name, dev));
  std::printf("driver %d, %d device(s), device 0: %s\n", version, count, name);

  CUcontext ctx;
  CHECK(cuCtxCreate(&ctx, nullptr, 0, dev));
  int least, greatest;
  CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
  std::printf("context created; stream priorities %d (least) .. %d (greatest)\n", least, greatest);

  // Memory: a device buffer filled from the host, set, and read back.
  const size_t n = 1 << 20;
  std::vector<unsigned char> host(n), back(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>(i);
  CUdeviceptr buf;
  CHECK(cuMemAlloc(&buf, n));
  CHECK(cuMemcpyHtoD(buf, host.data(), n));

  // Two streams ordered through an event: s2 waits for s1's work.
  CUstream s1, s2;
  CHECK(cuStreamCreateWithPriority(&s1, CU_STREAM_NON_BLOCKING, greatest));
  CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
  CUevent done_s1, t0, t1;
  CHECK(cuEventCreate(&done_s1, CU_EVENT_DISABLE_TIMING));
  CHECK(cuEventCreate(&t0, 0));
  CHECK(cuEventCreate(&t1, 0));
  Note a{"s1 sets the first half to 0xAB"}, b{"s2 waited for s1's event, now reads back"};
  CHECK(cuEventRecord(t0, s1));
  CHECK(cuMemsetD8Async(buf, 0xAB, n / 2, s1));
  CHECK(cuLaunchHostFunc(s1, say, &a));
  CHECK(cuEventRecord(done_s1, s1));
  CHECK(cuStreamWaitEvent(s2, done_s1, 0));
  CHECK(cuLaunchHostFunc(s2, say, &b));
  CHECK(cuMemcpyDtoHAsync(back.data(), buf, n, s2));
  CHECK(cuEventRecord(t1, s2));
  CHECK(cuStreamSynchronize(s2));
  float ms = 0;
  CHECK(cuEventElapsedTime(&ms, t0, t1));
  bool ok = back[0] == 0xAB && back[n / 2 - 1] == 0xAB && back[n / 2] == host[n / 2] && a.order == 1 && b.order == 2;
  std::printf("event-ordered streams: %s (%.3f ms between the timing events)\n", ok ? "correct" : "WRONG", ms);

  // The legacy default stream waits for blocking streams, and they for it.
  CUstream blocking;
  CHECK(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
  Note c{"blocking stream"}, d{"legacy NULL stream, after the blocking stream's work"};
  CHECK(cuLaunchHostFunc(blocking, say, &c));
  CHECK(cuLaunchHostFunc(nullptr, say, &d));
  CHECK(cuCtxSynchronize());
  std::printf("legacy stream ordering: %s\n", d.order == c.order + 1 ? "correct" : "WRONG");

  // Destroying a stream with pending work: the work still runs.
  CUstream temp;
  CHECK(cuStreamCreate(&temp, 0));
  Note e{"work of a stream destroyed before it ran"};
  CHECK(cuLaunchHostFunc(temp, say, &e));
  CHECK(cuStreamDestroy(temp));
  CHECK(cuCtxSynchronize());

  // Stream memory operations: s2 waits on a flag word until s1 writes it,
  // without holding a worker while it waits.
  {
    CUdeviceptr flag;
    CHECK(cuMemAlloc(&flag, sizeof(unsigned)));
    CHECK(cuMemsetD32(flag, 0, 1));
    Note f{"s2 passed its wait on the flag word"}, g{"s1 writes the flag word next"};
    CHECK(cuStreamWaitValue32(s2, flag, 1, CU_STREAM_WAIT_VALUE_EQ));
    CHECK(cuLaunchHostFunc(s2, say, &f));
    CHECK(cuLaunchHostFunc(s1, say, &g));
    CHECK(cuStreamWriteValue32(s1, flag, 1, CU_STREAM_WRITE_VALUE_DEFAULT));
    CHECK(cuStreamSynchronize(s2));
    const bool mem_ok = g.order > 0 && f.order == g.order + 1;
    ok = ok && mem_ok;
    std::printf("wait on a memory word released by another stream's write: %s\n", mem_ok ? "correct" : "WRONG");
    CHECK(cuMemFree(flag));
  }

  // Stream capture: a fork/join pattern becomes a graph, replayed 1000 times.
  {
    CUstream a, b;
    CHECK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CUevent fork, join;
    CHECK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    CHECK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    static std::atomic<int> runs{0};
    auto count = [](void*) { runs++; };
    CHECK(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuMemsetD8Async(buf, 0x01, n / 2, a));
    CHECK(cuEventRecord(fork, a));
    CHECK(cuStreamWaitEvent(b, fork, 0));
    CHECK(cuMemsetD8Async(buf + n / 2, 0x02, n / 2, b));
    CHECK(cuLaunchHostFunc(a, count, nullptr));
    CHECK(cuLaunchHostFunc(b, count, nullptr));
    CHECK(cuEventRecord(join, b));
    CHECK(cuStreamWaitEvent(a, join, 0));
    CHECK(cuMemcpyDtoHAsync(back.data(), buf, n, a));
    CUgraph graph;
    CHECK(cuStreamEndCapture(a, &graph));
    size_t nodes = 0, edges = 0;
    CHECK(cuGraphGetNodes(graph, nullptr, &nodes));
    CHECK(cuGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
    CHECK(cuGraphDebugDotPrint(graph, "streams_demo_graph.dot", 0));
    CUgraphExec exec;
    CHECK(cuGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < 1000; ++i) CHECK(cuGraphLaunch(exec, a));
    CHECK(cuStreamSynchronize(a));
    bool graph_ok = runs == 2000 && back[0] == 0x01 && back[n - 1] == 0x02;
    ok = ok && graph_ok;
    std::printf("captured fork/join graph: %zu nodes, %zu edges, DOT in streams_demo_graph.dot; "
                "1000 launches %s\n", nodes, edges, graph_ok ? "correct" : "WRONG");
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(graph));
    CHECK(cuEventDestroy(fork));
    CHECK(cuEventDestroy(join));
    CHECK(cuStreamDestroy(a));
    CHECK(cuStreamDestroy(b));
  }

  // A batched 3D copy: 4 sub-boxes of a pitched volume, copied in parallel.
  {
    const size_t w = 64, h = 32, d = 8, row = 128;
    CUdeviceptr vol, packed;
    CHECK(cuMemAlloc(&vol, row * h * d));
    CHECK(cuMemAlloc(&packed, w * h * d));
    std::vector<unsigned char> src(row * h * d);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i % 251);
    CHECK(cuMemcpyHtoD(vol, src.data(), src.size()));
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUDA_MEMCPY3D_BATCH_OP ops[4] = {};
    for (size_t q = 0; q < 4; ++q) {
      CUDA_MEMCPY3D_BATCH_OP& op = ops[q];
      op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
      op.src.op.ptr.ptr = vol + q * 2 * row * h;  // two layers each
      op.src.op.ptr.rowLength = row;
      op.src.op.ptr.layerHeight = h;
      op.dst.op.ptr.ptr = packed + q * 2 * w * h;
      op.extent = {w, h, 2};
      op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    }
    CHECK(cuMemcpy3DBatchAsync(4, ops, 0, s));
    std::vector<unsigned char> out(w * h * d);
    CHECK(cuMemcpyDtoHAsync(out.data(), packed, out.size(), s));
    CHECK(cuStreamSynchronize(s));
    bool batch_ok = true;
    for (size_t z = 0; z < d; ++z)
      for (size_t y = 0; y < h; ++y)
        for (size_t x = 0; x < w; ++x) batch_ok = batch_ok && out[(z * h + y) * w + x] == src[(z * h + y) * row + x];
    ok = ok && batch_ok;
    std::printf("batched 3D copy of 4 pitched sub-volumes: %s\n", batch_ok ? "correct" : "WRONG");
    CHECK(cuStreamDestroy(s));
    CHECK(cuMemFree(vol));
    CHECK(cuMemFree(packed));
  }

  CHECK(cuEventDestroy(done_s1));
  CHECK(cuEventDestroy(t0));
  CHECK(cuEventDestroy(t1));
  CHECK(cuStreamDestroy(s1));
  CHECK(cuStreamDestroy(s2));
  CHECK(cuStreamDestroy(blocking));
  CHECK(cuMemFree(buf));
  CHECK(cuCtxDestroy(ctx));
  std::printf("done: %s\n", ok && e.order > 0 ? "all checks passed" : "FAILED");
  return ok ? 0 : 1;
}
