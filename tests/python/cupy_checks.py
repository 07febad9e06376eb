"""CuPy's main kinds of work, each checked against NumPy: elementwise and
reduction kernels (compiled by NVRTC at run time), CUB-backed scans and sorts,
cuRAND, cuBLAS, cuFFT, cuSOLVER and cuSPARSE. Each line names a check and
says `ok`, `WRONG` with the values, or the exception CuPy raised, so that a
run on NVIDIA's driver and one on cucpu can be compared line by line
(tests/python/run-on-gpu.sh). Without CuPy it says so and exits 0.
"""
import sys

try:
    import cupy as cp
    import numpy as np
except ImportError:
    print("cupy_checks: skipped (CuPy is not installed)")
    sys.exit(0)


def close(got, want):
    return np.allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)


def check(name, fn):
    try:
        got, want = fn()
        if close(got, want):
            print(f"{name}: ok")
        else:
            print(f"{name}: WRONG got {np.asarray(got).ravel()[:6]} want {np.asarray(want).ravel()[:6]}")
    except Exception as e:  # every failure is a line of the report
        first = str(e).splitlines()[0] if str(e) else ""
        print(f"{name}: {type(e).__name__}: {first[:160]}")


rng = np.random.default_rng(7)
a_host = rng.standard_normal(100_003).astype(np.float32)
m_host = rng.standard_normal((96, 96)).astype(np.float64) + 96 * np.eye(96)
a = cp.asarray(a_host)

def raw_kernel_check():
    k = cp.RawKernel(r'''
extern "C" __global__ void scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 3.0f * x[i];
}''', "scale")
    y = cp.empty_like(a)
    n = a.size
    k(((n + 255) // 256,), (256,), (a, y, cp.int32(n)))
    return y.get(), 3 * a_host


def sparse_check():
    import cupyx.scipy.sparse as sp
    dense = np.where(np.abs(m_host) > 1.0, m_host, 0.0)
    got = sp.csr_matrix(cp.asarray(dense)) @ cp.ones(96)
    return got.get(), dense @ np.ones(96)


check("elementwise", lambda: ((a * 2 + 1).get(), a_host * 2 + 1))
check("sum of ones", lambda: (cp.ones(4097, dtype=cp.float32).sum().get(), 4097.0))
check("sum", lambda: (a.sum().get(), a_host.sum(dtype=np.float64)))
check("max", lambda: (a.max().get(), a_host.max()))
check("argmin", lambda: (a.argmin().get(), a_host.argmin()))
check("mean along an axis", lambda: (a[:100_000].reshape(100, 1000).mean(axis=1).get(),
                                     a_host[:100_000].reshape(100, 1000).mean(axis=1)))
check("cumsum", lambda: (cp.cumsum(cp.arange(10_000, dtype=cp.int64)).get(),
                         np.cumsum(np.arange(10_000, dtype=np.int64))))
check("sort", lambda: (cp.sort(a).get(), np.sort(a_host)))
check("argsort", lambda: (a[cp.argsort(a)].get(), np.sort(a_host)))
check("unique", lambda: (cp.unique(cp.asarray([3, 1, 3, 2, 1])).get(), np.array([1, 2, 3])))
check("user ElementwiseKernel", lambda: (
    cp.ElementwiseKernel("float32 x", "float32 y", "y = x * x - 1", "sq_minus_one")(a).get(), a_host * a_host - 1))
check("user RawKernel", lambda: raw_kernel_check())
check("random normal mean", lambda: (abs(float(cp.random.normal(size=1_000_000).mean())) < 0.01, True))
check("matmul", lambda: ((cp.asarray(m_host) @ cp.asarray(m_host)).get(), m_host @ m_host))
check("fft", lambda: (cp.fft.fft(a[:4096]).get(), np.fft.fft(a_host[:4096])))
check("solve", lambda: (cp.linalg.solve(cp.asarray(m_host), cp.ones(96)).get(),
                        np.linalg.solve(m_host, np.ones(96))))
check("sparse matvec", lambda: sparse_check())
