// cuDNN, unmodified from the toolkit: activation, softmax, pooling, and
// convolution forward (every algorithm the library offers for the shape)
// and backward (data and filter), against host answers. Every algorithm
// that reports success must be right; the implicit-GEMM forward algorithms
// and at least one backward algorithm of each kind must succeed. (cuDNN
// ships some algorithms' kernels as SASS alone: cucpu refuses those, and
// the library reports an error: README.md.)
#include <cudnn.h>

#include <cmath>
#include <vector>

#include "check.h"

#define CHECK_DNN(call)                                                              \
  do {                                                                               \
    cudnnStatus_t st_ = (call);                                                      \
    if (st_ != CUDNN_STATUS_SUCCESS) {                                               \
      std::printf("%s:%d: %s gave %s\n", __FILE__, __LINE__, #call, cudnnGetErrorString(st_)); \
      ++g_failures;                                                                  \
    }                                                                                \
  } while (0)

namespace {
constexpr int N = 2, C = 3, H = 8, W = 8, K = 4, R = 3, S = 3;

bool near(float a, float b) { return std::fabs(a - b) <= 1e-3f * (1 + std::fabs(b)); }

int count_wrong(const std::vector<float>& got, const std::vector<float>& want) {
  int wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) wrong += !near(got[i], want[i]);
  return wrong;
}

float* device_copy(const std::vector<float>& v) {
  float* p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, v.size() * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  return p;
}

std::vector<float> host_copy(const float* p, size_t n) {
  std::vector<float> v(n);
  CHECK_CUDA(cudaMemcpy(v.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
  return v;
}

size_t xi(int n, int c, int i, int j) { return ((size_t(n) * C + c) * H + i) * W + j; }
size_t yi(int n, int k, int i, int j) { return ((size_t(n) * K + k) * H + i) * W + j; }
size_t wi(int k, int c, int r, int s) { return ((size_t(k) * C + c) * R + r) * S + s; }

// Cross-correlation, 3x3, padding 1, stride 1: out[n][k][i][j].
template <class F>
void each_tap(F f) {
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      for (int i = 0; i < H; ++i)
        for (int j = 0; j < W; ++j)
          for (int c = 0; c < C; ++c)
            for (int r = 0; r < R; ++r)
              for (int s = 0; s < S; ++s) {
                const int y = i + r - 1, x = j + s - 1;
                if (y >= 0 && y < H && x >= 0 && x < W) f(n, k, i, j, c, r, s, y, x);
              }
}
}  // namespace

int main() {
  cudnnHandle_t h;
  CHECK_DNN(cudnnCreate(&h));
  std::printf("cuDNN %zu\n", cudnnGetVersion());
  std::vector<float> x(N * C * H * W), w(K * C * R * S), dy(N * K * H * W);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 37) % 17) / 8.0f - 1.0f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = float((i * 11) % 7) / 4.0f - 0.75f;
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = float((i * 5) % 13) / 6.0f - 1.0f;
  float* dx = device_copy(x);
  float* dw = device_copy(w);
  float* ddy = device_copy(dy);
  float* out = device_copy(std::vector<float>(N * K * H * W));
  cudnnTensorDescriptor_t xd, yd;
  CHECK_DNN(cudnnCreateTensorDescriptor(&xd));
  CHECK_DNN(cudnnCreateTensorDescriptor(&yd));
  CHECK_DNN(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
  const float one = 1, zero = 0;

  cudnnActivationDescriptor_t ad;
  CHECK_DNN(cudnnCreateActivationDescriptor(&ad));
  CHECK_DNN(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
  CHECK_DNN(cudnnActivationForward(h, ad, &one, xd, dx, &zero, xd, out));
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] > 0 ? x[i] : 0;
  CHECK(count_wrong(host_copy(out, x.size()), want) == 0);

  // Softmax across channels, at each pixel.
  CHECK_DNN(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, xd, dx, &zero, xd, out));
  for (int n = 0; n < N; ++n)
    for (int i = 0; i < H; ++i)
      for (int j = 0; j < W; ++j) {
        float m = -1e30f, sum = 0;
        for (int c = 0; c < C; ++c) m = std::fmax(m, x[xi(n, c, i, j)]);
        for (int c = 0; c < C; ++c) sum += std::exp(x[xi(n, c, i, j)] - m);
        for (int c = 0; c < C; ++c) want[xi(n, c, i, j)] = std::exp(x[xi(n, c, i, j)] - m) / sum;
      }
  CHECK(count_wrong(host_copy(out, x.size()), want) == 0);

  // Max pooling, 2x2 windows, stride 2.
  cudnnPoolingDescriptor_t pd;
  CHECK_DNN(cudnnCreatePoolingDescriptor(&pd));
  CHECK_DNN(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2));
  CHECK_DNN(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H / 2, W / 2));
  CHECK_DNN(cudnnPoolingForward(h, pd, &one, xd, dx, &zero, yd, out));
  std::vector<float> pooled(N * C * H * W / 4);
  for (int nc = 0; nc < N * C; ++nc)
    for (int i = 0; i < H / 2; ++i)
      for (int j = 0; j < W / 2; ++j) {
        float m = -1e30f;
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b) m = std::fmax(m, x[(size_t(nc) * H + 2 * i + a) * W + 2 * j + b]);
        pooled[(size_t(nc) * H / 2 + i) * W / 2 + j] = m;
      }
  CHECK(count_wrong(host_copy(out, pooled.size()), pooled) == 0);

  // Convolution, 3x3, padding 1.
  cudnnFilterDescriptor_t fd;
  CHECK_DNN(cudnnCreateFilterDescriptor(&fd));
  CHECK_DNN(cudnnSetFilter4dDescriptor(fd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S));
  cudnnConvolutionDescriptor_t cd;
  CHECK_DNN(cudnnCreateConvolutionDescriptor(&cd));
  CHECK_DNN(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  int on = 0, oc = 0, oh = 0, ow = 0;
  CHECK_DNN(cudnnGetConvolution2dForwardOutputDim(cd, xd, fd, &on, &oc, &oh, &ow));
  CHECK(on == N && oc == K && oh == H && ow == W);
  CHECK_DNN(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, H, W));
  std::vector<float> conv(N * K * H * W, 0.0f), dgrad(x.size(), 0.0f), wgrad(w.size(), 0.0f);
  each_tap([&](int n, int k, int i, int j, int c, int r, int s, int y, int xx) {
    conv[yi(n, k, i, j)] += x[xi(n, c, y, xx)] * w[wi(k, c, r, s)];
    dgrad[xi(n, c, y, xx)] += dy[yi(n, k, i, j)] * w[wi(k, c, r, s)];
    wgrad[wi(k, c, r, s)] += dy[yi(n, k, i, j)] * x[xi(n, c, y, xx)];
  });
  int found = 0;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  CHECK_DNN(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, fd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf));
  int implicit_gemm_ok = 0;
  for (int a = 0; a < found; ++a) {
    if (perf[a].status != CUDNN_STATUS_SUCCESS) continue;
    const cudnnConvolutionFwdAlgo_t algo = perf[a].algo;
    size_t ws = 0;
    CHECK_DNN(cudnnGetConvolutionForwardWorkspaceSize(h, xd, fd, cd, yd, algo, &ws));
    void* work = nullptr;
    if (ws) CHECK_CUDA(cudaMalloc(&work, ws));
    CHECK_CUDA(cudaMemset(out, 0, conv.size() * sizeof(float)));
    const cudnnStatus_t st = cudnnConvolutionForward(h, &one, xd, dx, fd, dw, cd, algo, work, ws, &zero, yd, out);
    const int wrong = count_wrong(host_copy(out, conv.size()), conv);
    std::printf("forward algorithm %d: %s, %d wrong\n", int(algo), cudnnGetErrorString(st), wrong);
    if (st == CUDNN_STATUS_SUCCESS) CHECK(wrong == 0);
    if (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
      implicit_gemm_ok += st == CUDNN_STATUS_SUCCESS && wrong == 0;
    if (work) CHECK_CUDA(cudaFree(work));
  }
  CHECK(implicit_gemm_ok == 2);

  // Backward: every algorithm the library offers that it can run must be
  // right, and at least one of each must run.
  cudnnConvolutionBwdDataAlgoPerf_t data_perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  CHECK_DNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, fd, yd, cd, xd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                        &found, data_perf));
  int data_ok = 0;
  for (int a = 0; a < found; ++a) {
    if (data_perf[a].status != CUDNN_STATUS_SUCCESS) continue;
    const cudnnConvolutionBwdDataAlgo_t algo = data_perf[a].algo;
    size_t ws = 0;
    CHECK_DNN(cudnnGetConvolutionBackwardDataWorkspaceSize(h, fd, yd, cd, xd, algo, &ws));
    void* work = nullptr;
    if (ws) CHECK_CUDA(cudaMalloc(&work, ws));
    const cudnnStatus_t st =
        cudnnConvolutionBackwardData(h, &one, fd, dw, yd, ddy, cd, algo, work, ws, &zero, xd, out);
    const int wrong = count_wrong(host_copy(out, dgrad.size()), dgrad);
    std::printf("backward data algorithm %d: %s, %d wrong\n", int(algo), cudnnGetErrorString(st), wrong);
    if (st == CUDNN_STATUS_SUCCESS) CHECK(wrong == 0);
    data_ok += st == CUDNN_STATUS_SUCCESS && wrong == 0;
    if (work) CHECK_CUDA(cudaFree(work));
  }
  CHECK(data_ok > 0);
  cudnnConvolutionBwdFilterAlgoPerf_t filter_perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  CHECK_DNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, xd, yd, cd, fd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                          &found, filter_perf));
  int filter_ok = 0;
  for (int a = 0; a < found; ++a) {
    if (filter_perf[a].status != CUDNN_STATUS_SUCCESS) continue;
    const cudnnConvolutionBwdFilterAlgo_t algo = filter_perf[a].algo;
    size_t ws = 0;
    CHECK_DNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xd, yd, cd, fd, algo, &ws));
    void* work = nullptr;
    if (ws) CHECK_CUDA(cudaMalloc(&work, ws));
    const cudnnStatus_t st =
        cudnnConvolutionBackwardFilter(h, &one, xd, dx, yd, ddy, cd, algo, work, ws, &zero, fd, out);
    const int wrong = count_wrong(host_copy(out, wgrad.size()), wgrad);
    std::printf("backward filter algorithm %d: %s, %d wrong\n", int(algo), cudnnGetErrorString(st), wrong);
    if (st == CUDNN_STATUS_SUCCESS) CHECK(wrong == 0);
    filter_ok += st == CUDNN_STATUS_SUCCESS && wrong == 0;
    if (work) CHECK_CUDA(cudaFree(work));
  }
  CHECK(filter_ok > 0);

  CHECK_DNN(cudnnDestroyConvolutionDescriptor(cd));
  CHECK_DNN(cudnnDestroyFilterDescriptor(fd));
  CHECK_DNN(cudnnDestroyPoolingDescriptor(pd));
  CHECK_DNN(cudnnDestroyActivationDescriptor(ad));
  CHECK_DNN(cudnnDestroyTensorDescriptor(xd));
  CHECK_DNN(cudnnDestroyTensorDescriptor(yd));
  CHECK_DNN(cudnnDestroy(h));
  for (float* p : {dx, dw, ddy, out}) CHECK_CUDA(cudaFree(p));
  return finish("cudnn_ops");
}
