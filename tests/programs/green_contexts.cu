// Green contexts from a runtime-API program, as PyTorch and CUTLASS use
// them: the driver API makes a green context of part of the SMs, and the
// runtime API runs kernels, copies, events and a captured graph in its
// stream, then in its default stream with its converted context current.
#include <cuda.h>

#include <vector>

#include "check.h"

#define CHECK_CU(call)                                                            \
  do {                                                                            \
    CUresult r_ = (call);                                                         \
    if (r_ != CUDA_SUCCESS) {                                                     \
      const char* n_ = nullptr;                                                   \
      cuGetErrorName(r_, &n_);                                                    \
      std::printf("%s:%d: %s gave %s\n", __FILE__, __LINE__, #call, n_ ? n_ : "?"); \
      ++g_failures;                                                               \
    }                                                                             \
  } while (0)

__global__ void scale(float* out, const float* in, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * k;
}

int main() {
  const int n = 1 << 16;
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaFree(nullptr));  // the primary context, current
  CUdevResource dev{};
  CHECK_CU(cuDeviceGetDevResource(0, &dev, CU_DEV_RESOURCE_TYPE_SM));
  unsigned groups = 0;
  CHECK_CU(cuDevSmResourceSplitByCount(nullptr, &groups, &dev, nullptr, 0, dev.sm.minSmPartitionSize));
  std::vector<CUdevResource> parts(groups ? groups : 1);
  CHECK_CU(cuDevSmResourceSplitByCount(parts.data(), &groups, &dev, nullptr, 0, dev.sm.minSmPartitionSize));
  CUdevResourceDesc desc = nullptr;
  CHECK_CU(cuDevResourceGenerateDesc(&desc, &parts[0], 1));
  CUgreenCtx green = nullptr;
  CHECK_CU(cuGreenCtxCreate(&green, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
  CUstream gs = nullptr;
  CHECK_CU(cuGreenCtxStreamCreate(&gs, green, CU_STREAM_NON_BLOCKING, 0));
  cudaStream_t s = reinterpret_cast<cudaStream_t>(gs);

  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  float *in = nullptr, *out = nullptr;
  CHECK_CUDA(cudaMalloc(&in, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&out, n * sizeof(float)));
  CHECK_CUDA(cudaMemcpyAsync(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));
  scale<<<(n + 255) / 256, 256, 0, s>>>(out, in, 2.0f, n);
  CHECK_CUDA(cudaGetLastError());
  std::vector<float> back(n);
  CHECK_CUDA(cudaMemcpyAsync(back.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK(back[0] == 0.0f && back[12345] == 24690.0f && back[n - 1] == 2.0f * (n - 1));

  // An event recorded in the green stream orders the primary context's default stream.
  cudaEvent_t done;
  CHECK_CUDA(cudaEventCreate(&done));
  scale<<<(n + 255) / 256, 256, 0, s>>>(out, in, 3.0f, n);
  CHECK_CUDA(cudaEventRecord(done, s));
  CHECK_CUDA(cudaStreamWaitEvent(cudaStreamLegacy, done, 0));
  CHECK_CUDA(cudaMemcpy(back.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(back[7] == 21.0f);

  // A graph captured in the green stream and replayed there.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  scale<<<(n + 255) / 256, 256, 0, s>>>(out, in, 4.0f, n);
  scale<<<(n + 255) / 256, 256, 0, s>>>(in, out, 0.5f, n);
  CHECK_CUDA(cudaStreamEndCapture(s, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) CHECK_CUDA(cudaGraphLaunch(exec, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK_CUDA(cudaMemcpy(back.data(), in, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(back[100] == 800.0f);  // doubled three times

  // The converted context current: the runtime's default stream is the green context's.
  CUcontext converted = nullptr;
  CHECK_CU(cuCtxFromGreenCtx(&converted, green));
  CHECK_CU(cuCtxSetCurrent(converted));
  scale<<<(n + 255) / 256, 256>>>(out, in, 0.25f, n);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(back.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(back[100] == 200.0f);
  CUgreenCtx seen = nullptr;
  CHECK_CU(cuStreamGetGreenCtx(nullptr, &seen));
  CHECK(seen == green);
  CHECK_CU(cuCtxSetCurrent(nullptr));
  CHECK_CUDA(cudaSetDevice(0));

  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaEventDestroy(done));
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(out));
  CHECK_CU(cuStreamDestroy(gs));
  CHECK_CU(cuGreenCtxDestroy(green));
  return finish("green_contexts");
}
