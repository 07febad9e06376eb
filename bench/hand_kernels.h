// The benchmarks' kernels written by hand in C++ (hand_kernels.cpp, built
// with -O3 -march=native), run with one thread per core.
#pragma once

#include <cstddef>

namespace bench {

unsigned hand_threads();
void hand_saxpy(int n, float a, const float* x, float* y);
float hand_block_reduce(const float* in, int n);
void hand_sgemm(const float* A, const float* B, float* C, int n);

}  // namespace bench
