// The bundled demo: an image pipeline whose kernels run on the device.
// A plain CUDA driver-API program (it runs unchanged on NVIDIA's driver or
// on cucpu): it loads the PTX of samples/kernels/image_pipeline.cu, runs
// blur -> edges -> {histogram, energy} on three streams ordered by events,
// then captures the same pipeline into a graph and replays it, printing
// what it computed and how long each stage took.
#include <cuda.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern const char kImagePipelinePtx[];

#define CHECK(call)                                                    \
  do {                                                                 \
    CUresult r_ = (call);                                              \
    if (r_ != CUDA_SUCCESS) {                                          \
      const char* n_ = nullptr;                                        \
      cuGetErrorName(r_, &n_);                                         \
      std::fprintf(stderr, "%s failed: %s\n", #call, n_ ? n_ : "?");   \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)

namespace {

constexpr int kW = 1024, kH = 768, kTile = 16;

struct Pipeline {
  CUfunction blur, sobel, histogram, energy;
  CUdeviceptr image, blurred, edges, bins, total;
  CUstream s1, s2, s3;
  CUevent edges_done, hist_done, energy_done;
};

// One frame: blur and Sobel on s1; the histogram (s2) and the energy (s3)
// both wait for the edges; s1 waits for both before the frame ends.
void enqueue_frame(Pipeline& p, CUevent* marks) {
  int w = kW, h = kH, n = kW * kH;
  float scale = 64.0f / 4.0f;
  void* blur_args[] = {&p.image, &p.blurred, &w, &h};
  void* sobel_args[] = {&p.blurred, &p.edges, &w, &h};
  void* hist_args[] = {&p.edges, &p.bins, &n, &scale};
  void* energy_args[] = {&p.edges, &p.total, &n};
  const unsigned gx = (kW + kTile - 1) / kTile, gy = (kH + kTile - 1) / kTile;
  if (marks) CHECK(cuEventRecord(marks[0], p.s1));
  CHECK(cuMemsetD32Async(p.bins, 0, 64, p.s1));
  CHECK(cuMemsetD32Async(p.total, 0, 2, p.s1));
  CHECK(cuLaunchKernel(p.blur, gx, gy, 1, kTile, kTile, 1, 0, p.s1, blur_args, nullptr));
  if (marks) CHECK(cuEventRecord(marks[1], p.s1));
  CHECK(cuLaunchKernel(p.sobel, gx, gy, 1, kTile, kTile, 1, 0, p.s1, sobel_args, nullptr));
  CHECK(cuEventRecord(p.edges_done, p.s1));
  if (marks) CHECK(cuEventRecord(marks[2], p.s1));
  CHECK(cuStreamWaitEvent(p.s2, p.edges_done, 0));
  CHECK(cuStreamWaitEvent(p.s3, p.edges_done, 0));
  CHECK(cuLaunchKernel(p.histogram, 64, 1, 1, 256, 1, 1, 0, p.s2, hist_args, nullptr));
  CHECK(cuLaunchKernel(p.energy, 64, 1, 1, 256, 1, 1, 0, p.s3, energy_args, nullptr));
  if (marks) CHECK(cuEventRecord(marks[3], p.s2));
  if (marks) CHECK(cuEventRecord(marks[4], p.s3));
  CHECK(cuEventRecord(p.hist_done, p.s2));
  CHECK(cuEventRecord(p.energy_done, p.s3));
  CHECK(cuStreamWaitEvent(p.s1, p.hist_done, 0));
  CHECK(cuStreamWaitEvent(p.s1, p.energy_done, 0));
}

float ms_between(CUevent a, CUevent b) {
  float ms = 0;
  CHECK(cuEventElapsedTime(&ms, a, b));
  return ms;
}

}  // namespace

int main() {
  using clock = std::chrono::steady_clock;
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  char name[128];
  CHECK(cuDeviceGetName(name, sizeof name, dev));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  std::printf("device: %s\n", name);

  Pipeline p;
  auto t0 = clock::now();
  CUmodule mod;
  CHECK(cuModuleLoadData(&mod, kImagePipelinePtx));
  CHECK(cuModuleGetFunction(&p.blur, mod, "blur"));
  CHECK(cuModuleGetFunction(&p.sobel, mod, "sobel"));
  CHECK(cuModuleGetFunction(&p.histogram, mod, "histogram"));
  CHECK(cuModuleGetFunction(&p.energy, mod, "energy"));
  auto t1 = clock::now();
  std::printf("module loaded and 4 kernels ready (compiled, or found in the cache) in %.1f ms\n", std::chrono::duration<double, std::milli>(t1 - t0).count());

  // The blur's weights live in __constant__ memory.
  CUdeviceptr weights;
  size_t wbytes = 0;
  CHECK(cuModuleGetGlobal(&weights, &wbytes, mod, "c_weights"));
  const float w[5] = {1 / 16.f, 4 / 16.f, 6 / 16.f, 4 / 16.f, 1 / 16.f};
  CHECK(cuMemcpyHtoD(weights, w, sizeof w));

  // A synthetic picture: a gradient with three discs.
  std::vector<float> img(kW * kH);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      float v = 0.25f * x / kW;
      const int cx[3] = {256, 600, 850}, cy[3] = {300, 500, 200}, r[3] = {120, 180, 90};
      for (int k = 0; k < 3; ++k)
        if ((x - cx[k]) * (x - cx[k]) + (y - cy[k]) * (y - cy[k]) < r[k] * r[k]) v += 0.25f * (k + 1);
      img[y * kW + x] = v;
    }
  const size_t bytes = img.size() * sizeof(float);
  CHECK(cuMemAlloc(&p.image, bytes));
  CHECK(cuMemAlloc(&p.blurred, bytes));
  CHECK(cuMemAlloc(&p.edges, bytes));
  CHECK(cuMemAlloc(&p.bins, 64 * sizeof(unsigned)));
  CHECK(cuMemAlloc(&p.total, sizeof(double)));
  CHECK(cuMemcpyHtoD(p.image, img.data(), bytes));
  CHECK(cuStreamCreate(&p.s1, CU_STREAM_NON_BLOCKING));
  CHECK(cuStreamCreate(&p.s2, CU_STREAM_NON_BLOCKING));
  CHECK(cuStreamCreate(&p.s3, CU_STREAM_NON_BLOCKING));
  CHECK(cuEventCreate(&p.edges_done, CU_EVENT_DISABLE_TIMING));
  CHECK(cuEventCreate(&p.hist_done, CU_EVENT_DISABLE_TIMING));
  CHECK(cuEventCreate(&p.energy_done, CU_EVENT_DISABLE_TIMING));
  CUevent marks[5];
  for (CUevent& e : marks) CHECK(cuEventCreate(&e, CU_EVENT_DEFAULT));

  // 1. One frame on streams, timed by events. A first frame pays one-time
  // costs (worker threads waking, first launches): it is timed apart.
  auto t_first = clock::now();
  enqueue_frame(p, nullptr);
  CHECK(cuStreamSynchronize(p.s1));
  std::printf("first frame, with one-time start-up costs: %.2f ms wall\n",
              std::chrono::duration<double, std::milli>(clock::now() - t_first).count());
  auto t2 = clock::now();
  enqueue_frame(p, marks);
  CHECK(cuStreamSynchronize(p.s1));
  auto t3 = clock::now();
  std::vector<unsigned> bins(64);
  double total = 0;
  CHECK(cuMemcpyDtoH(bins.data(), p.bins, 64 * sizeof(unsigned)));
  CHECK(cuMemcpyDtoH(&total, p.total, sizeof total));
  unsigned counted = 0, edge_pixels = 0;
  for (int i = 0; i < 64; ++i) {
    counted += bins[i];
    if (i > 0) edge_pixels += bins[i];
  }
  std::printf("frame on 3 streams (%dx%d): %.2f ms wall\n", kW, kH,
              std::chrono::duration<double, std::milli>(t3 - t2).count());
  std::printf("  blur %.2f ms, edges %.2f ms, histogram %.2f ms, energy %.2f ms (events)\n", ms_between(marks[0], marks[1]),
              ms_between(marks[1], marks[2]), ms_between(marks[2], marks[3]), ms_between(marks[2], marks[4]));
  std::printf("  histogram: %u pixels counted, %u on edges; edge energy %.1f\n", counted, edge_pixels, total);
  std::printf("  edge histogram (bins 1-15):");
  for (int i = 1; i < 16; ++i) std::printf(" %u", bins[i]);
  std::printf("\n");

  // 2. The same frame captured into a graph and replayed.
  CUgraph graph;
  CUgraphExec exec;
  CHECK(cuStreamBeginCapture(p.s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  enqueue_frame(p, nullptr);
  CHECK(cuStreamEndCapture(p.s1, &graph));
  size_t nodes = 0;
  CHECK(cuGraphGetNodes(graph, nullptr, &nodes));
  CHECK(cuGraphInstantiate(&exec, graph, 0));
  const int frames = 20;
  auto t4 = clock::now();
  for (int i = 0; i < frames; ++i) CHECK(cuGraphLaunch(exec, p.s1));
  CHECK(cuStreamSynchronize(p.s1));
  auto t5 = clock::now();
  double total2 = 0;
  CHECK(cuMemcpyDtoH(&total2, p.total, sizeof total2));
  std::printf("graph of %zu nodes replayed %d times: %.2f ms per frame; energy %.1f (%s)\n", nodes, frames,
              std::chrono::duration<double, std::milli>(t5 - t4).count() / frames, total2,
              std::fabs(total2 - total) <= 1e-6 * std::fabs(total) ? "matches the stream run" : "DIFFERS");

  CHECK(cuGraphExecDestroy(exec));
  CHECK(cuGraphDestroy(graph));
  CHECK(cuModuleUnload(mod));
  CHECK(cuDevicePrimaryCtxRelease(dev));
  return std::fabs(total2 - total) <= 1e-6 * std::fabs(total) && counted == unsigned(kW * kH) ? 0 : 1;
}
