// The benchmarks' kernels written by hand in C++ (hand_kernels.cpp, built
// with -O3 -march=native), run with one thread per core.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bench {

unsigned hand_threads();
void hand_saxpy(int n, float a, const float* x, float* y);
float hand_block_reduce(const float* in, int n);
void hand_sgemm(const float* A, const float* B, float* C, int n);
// The interior points of the w x h grid out; the border is left alone.
void hand_stencil5(const float* in, float* out, int w, int h, float c0, float c1);
// Adds the counts of the bytes of data[0, words) to bins[256], as `blocks`
// blocks of 256 threads of a grid-stride loop would.
void hand_histogram256(const uint32_t* data, int words, uint32_t* bins, int blocks);

}  // namespace bench
