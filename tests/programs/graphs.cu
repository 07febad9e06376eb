// Graphs through stream capture and through the graph API, relaunched and
// updated.
#include "check.h"

__global__ void axpb(float* x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}
static void CUDART_CB host_inc(void* p) { ++*static_cast<int*>(p); }

int main() {
  const int n = 4096;
  float* d;
  CHECK_CUDA(cudaMalloc(&d, n * sizeof(float)));
  CHECK_CUDA(cudaMemset(d, 0, n * sizeof(float)));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int host_runs = 0;

  cudaGraph_t g;
  CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus st;
  CHECK_CUDA(cudaStreamIsCapturing(s, &st));
  CHECK(st == cudaStreamCaptureStatusActive);
  axpb<<<n / 256, 256, 0, s>>>(d, 1.0f, 1.0f, n);
  axpb<<<n / 256, 256, 0, s>>>(d, 2.0f, 0.0f, n);
  CHECK_CUDA(cudaLaunchHostFunc(s, host_inc, &host_runs));
  CHECK_CUDA(cudaStreamEndCapture(s, &g));
  size_t nodes = 0;
  CHECK_CUDA(cudaGraphGetNodes(g, nullptr, &nodes));
  CHECK(nodes == 3);
  cudaGraphExec_t ge;
  CHECK_CUDA(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < 3; ++i) CHECK_CUDA(cudaGraphLaunch(ge, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK(host_runs == 3);
  float h = 0;
  CHECK_CUDA(cudaMemcpy(&h, d + 7, sizeof h, cudaMemcpyDeviceToHost));
  CHECK(h == 14.0f);  // ((0+1)*2 +1)*2 = 6, (6+1)*2 = 14

  // The graph API: a kernel node and a memset node, then an exec update of
  // the kernel's parameters.
  cudaGraph_t g2;
  CHECK_CUDA(cudaGraphCreate(&g2, 0));
  cudaMemsetParams ms{};
  ms.dst = d;
  ms.value = 0;
  ms.elementSize = 4;
  ms.width = n;
  ms.height = 1;
  cudaGraphNode_t mset, kn;
  CHECK_CUDA(cudaGraphAddMemsetNode(&mset, g2, nullptr, 0, &ms));
  float a = 3.0f, b = 5.0f;
  int nn = n;
  void* args[] = {&d, &a, &b, &nn};
  cudaKernelNodeParams kp{};
  kp.func = (void*)axpb;
  kp.gridDim = dim3(n / 256);
  kp.blockDim = dim3(256);
  kp.kernelParams = args;
  CHECK_CUDA(cudaGraphAddKernelNode(&kn, g2, &mset, 1, &kp));
  cudaGraphExec_t ge2;
  CHECK_CUDA(cudaGraphInstantiate(&ge2, g2, 0));
  CHECK_CUDA(cudaGraphLaunch(ge2, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK_CUDA(cudaMemcpy(&h, d + 9, sizeof h, cudaMemcpyDeviceToHost));
  CHECK(h == 5.0f);
  b = 8.0f;
  CHECK_CUDA(cudaGraphExecKernelNodeSetParams(ge2, kn, &kp));
  CHECK_CUDA(cudaGraphLaunch(ge2, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK_CUDA(cudaMemcpy(&h, d + 9, sizeof h, cudaMemcpyDeviceToHost));
  CHECK(h == 8.0f);
  cudaKernelNodeParams back{};
  CHECK_CUDA(cudaGraphKernelNodeGetParams(kn, &back));
  CHECK(back.func == (void*)axpb && back.blockDim.x == 256);

  CHECK_CUDA(cudaGraphExecDestroy(ge));
  CHECK_CUDA(cudaGraphExecDestroy(ge2));
  CHECK_CUDA(cudaGraphDestroy(g));
  CHECK_CUDA(cudaGraphDestroy(g2));
  CHECK_CUDA(cudaStreamDestroy(s));
  cudaFree(d);
  return finish("graphs");
}
