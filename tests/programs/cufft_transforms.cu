// cuFFT, unmodified from the toolkit: C2C, R2C and C2R in 1D, 2D and 3D,
// batched, at sizes of every class cuFFT plans differently (powers of two,
// small primes, mixed radices, a large prime), against a host DFT.
#include <cufft.h>

#include <cmath>
#include <complex>
#include <vector>

#include "check.h"

using cd = std::complex<double>;

// The unnormalized forward DFT of a row-major box (dims outermost first).
std::vector<cd> host_dft(const std::vector<cd>& in, const std::vector<int>& dims, int sign) {
  std::vector<cd> cur = in;
  size_t total = cur.size(), inner = total;
  for (int n : dims) {
    inner /= n;
    std::vector<cd> next(total);
    for (size_t outer = 0; outer < total / (inner * n); ++outer)
      for (size_t r = 0; r < inner; ++r)
        for (int k = 0; k < n; ++k) {
          cd s = 0;
          for (int j = 0; j < n; ++j)
            s += cur[(outer * n + j) * inner + r] * std::polar(1.0, sign * 2 * M_PI * double(j) * k / n);
          next[(outer * n + k) * inner + r] = s;
        }
    cur.swap(next);
  }
  return cur;
}

std::vector<cd> signal(size_t n, int salt) {
  std::vector<cd> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = cd(std::sin(0.37 * i + salt), std::cos(0.11 * i * i + salt) * 0.5);
  return v;
}

bool near(const char* what, cufftResult r, const std::vector<cd>& got, const std::vector<cd>& want) {
  double err = 0, scale = 1;
  for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::abs(got[i] - want[i])), scale = std::max(scale, std::abs(want[i]));
  const bool ok = r == CUFFT_SUCCESS && err <= 1e-4 * scale;
  if (!ok) std::printf("%s: result %d, max error %g of %g\n", what, (int)r, err, scale);
  return ok;
}

// A batch of C2C transforms of one shape, forward then inverse.
bool c2c(const char* what, std::vector<int> dims, int batch) {
  size_t per = 1;
  for (int d : dims) per *= d;
  std::vector<cd> in = signal(per * batch, 1);
  std::vector<cufftComplex> h(in.size());
  for (size_t i = 0; i < in.size(); ++i) h[i] = {float(in[i].real()), float(in[i].imag())};
  cufftComplex* d = nullptr;
  cudaMalloc(&d, h.size() * sizeof(cufftComplex));
  cudaMemcpy(d, h.data(), h.size() * sizeof(cufftComplex), cudaMemcpyHostToDevice);
  cufftHandle plan;
  cufftResult r = cufftPlanMany(&plan, int(dims.size()), dims.data(), nullptr, 1, 0, nullptr, 1, 0, CUFFT_C2C, batch);
  if (r == CUFFT_SUCCESS) r = cufftExecC2C(plan, d, d, CUFFT_FORWARD);
  cudaMemcpy(h.data(), d, h.size() * sizeof(cufftComplex), cudaMemcpyDeviceToHost);
  std::vector<cd> got(h.size()), want;
  for (size_t i = 0; i < h.size(); ++i) got[i] = cd(h[i].x, h[i].y);
  for (int b = 0; b < batch; ++b) {
    auto one = host_dft(std::vector<cd>(in.begin() + b * per, in.begin() + (b + 1) * per), dims, -1);
    want.insert(want.end(), one.begin(), one.end());
  }
  bool ok = near(what, r, got, want);
  if (r == CUFFT_SUCCESS) r = cufftExecC2C(plan, d, d, CUFFT_INVERSE);
  cudaMemcpy(h.data(), d, h.size() * sizeof(cufftComplex), cudaMemcpyDeviceToHost);
  for (size_t i = 0; i < h.size(); ++i) got[i] = cd(h[i].x, h[i].y) / double(per);
  ok &= near(what, r, got, in);
  cufftDestroy(plan);
  cudaFree(d);
  return ok;
}

// R2C then C2R of one 1D or 2D shape (double precision: D2Z, Z2D).
bool real_pair(const char* what, std::vector<int> dims) {
  size_t per = 1;
  for (int d : dims) per *= d;
  const size_t half = per / dims.back() * (dims.back() / 2 + 1);
  std::vector<cd> in = signal(per, 2);
  std::vector<double> h(per);
  for (size_t i = 0; i < per; ++i) h[i] = in[i].real(), in[i] = in[i].real();
  double* dr = nullptr;
  cufftDoubleComplex* dc = nullptr;
  cudaMalloc(&dr, per * sizeof(double));
  cudaMalloc(&dc, half * sizeof(cufftDoubleComplex));
  cudaMemcpy(dr, h.data(), per * sizeof(double), cudaMemcpyHostToDevice);
  cufftHandle fwd, inv;
  cufftResult r = cufftPlanMany(&fwd, int(dims.size()), dims.data(), nullptr, 1, 0, nullptr, 1, 0, CUFFT_D2Z, 1);
  if (r == CUFFT_SUCCESS) r = cufftPlanMany(&inv, int(dims.size()), dims.data(), nullptr, 1, 0, nullptr, 1, 0, CUFFT_Z2D, 1);
  if (r == CUFFT_SUCCESS) r = cufftExecD2Z(fwd, dr, dc);
  std::vector<cufftDoubleComplex> hc(half);
  cudaMemcpy(hc.data(), dc, half * sizeof(cufftDoubleComplex), cudaMemcpyDeviceToHost);
  const auto full = host_dft(in, dims, -1);
  std::vector<cd> got(half), want(half);
  const int last = dims.back(), kept = last / 2 + 1;
  for (size_t row = 0; row < per / last; ++row)
    for (int k = 0; k < kept; ++k) {
      got[row * kept + k] = cd(hc[row * kept + k].x, hc[row * kept + k].y);
      want[row * kept + k] = full[row * last + k];
    }
  bool ok = near(what, r, got, want);
  if (r == CUFFT_SUCCESS) r = cufftExecZ2D(inv, dc, dr);
  cudaMemcpy(h.data(), dr, per * sizeof(double), cudaMemcpyDeviceToHost);
  std::vector<cd> back(per);
  for (size_t i = 0; i < per; ++i) back[i] = h[i] / double(per);
  ok &= near(what, r, back, in);
  cufftDestroy(fwd);
  cufftDestroy(inv);
  cudaFree(dr);
  cudaFree(dc);
  return ok;
}

// Single precision R2C then C2R of a 1D signal, several in a batch.
bool real_pair_f32(const char* what, int n, int batch) {
  const int kept = n / 2 + 1;
  std::vector<cd> in = signal(size_t(n) * batch, 3);
  std::vector<float> h(size_t(n) * batch);
  for (size_t i = 0; i < h.size(); ++i) h[i] = float(in[i].real()), in[i] = h[i];
  float* dr = nullptr;
  cufftComplex* dc = nullptr;
  cudaMalloc(&dr, h.size() * sizeof(float));
  cudaMalloc(&dc, size_t(kept) * batch * sizeof(cufftComplex));
  cudaMemcpy(dr, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
  cufftHandle fwd, inv;
  cufftResult r = cufftPlan1d(&fwd, n, CUFFT_R2C, batch);
  if (r == CUFFT_SUCCESS) r = cufftPlan1d(&inv, n, CUFFT_C2R, batch);
  if (r == CUFFT_SUCCESS) r = cufftExecR2C(fwd, dr, dc);
  std::vector<cufftComplex> hc(size_t(kept) * batch);
  cudaMemcpy(hc.data(), dc, hc.size() * sizeof(cufftComplex), cudaMemcpyDeviceToHost);
  std::vector<cd> got(hc.size()), want(hc.size());
  for (int b = 0; b < batch; ++b) {
    const auto full = host_dft(std::vector<cd>(in.begin() + size_t(b) * n, in.begin() + size_t(b + 1) * n), {n}, -1);
    for (int k = 0; k < kept; ++k) {
      got[size_t(b) * kept + k] = cd(hc[size_t(b) * kept + k].x, hc[size_t(b) * kept + k].y);
      want[size_t(b) * kept + k] = full[k];
    }
  }
  bool ok = near(what, r, got, want);
  if (r == CUFFT_SUCCESS) r = cufftExecC2R(inv, dc, dr);
  cudaMemcpy(h.data(), dr, h.size() * sizeof(float), cudaMemcpyDeviceToHost);
  std::vector<cd> back(h.size());
  for (size_t i = 0; i < h.size(); ++i) back[i] = h[i] / double(n);
  ok &= near(what, r, back, in);
  cufftDestroy(fwd);
  cufftDestroy(inv);
  cudaFree(dr);
  cudaFree(dc);
  return ok;
}

int main() {
  CHECK(c2c("c2c 256", {256}, 1));
  CHECK(c2c("c2c 4096 x3", {4096}, 3));
  CHECK(c2c("c2c 210 (2*3*5*7)", {210}, 2));
  CHECK(c2c("c2c 17 (small prime)", {17}, 4));
  CHECK(c2c("c2c 1009 (large prime)", {1009}, 1));
  CHECK(c2c("c2c 2d 32x48", {32, 48}, 1));
  CHECK(c2c("c2c 3d 8x12x16", {8, 12, 16}, 2));
  CHECK(real_pair("d2z/z2d 128", {128}));
  CHECK(real_pair("d2z/z2d 2d 24x30", {24, 30}));
  CHECK(real_pair_f32("r2c/c2r 1000 x3", 1000, 3));
  return finish("cufft_transforms");
}
