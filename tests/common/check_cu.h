// check(): for the small standalone programs the tests run (driver API
// only): a failed call prints its name and code and ends the program with 2.
#pragma once

#include <cuda.h>

#include <cstdio>
#include <cstdlib>

namespace test_support {

inline void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, static_cast<int>(r));
    std::exit(2);
  }
}

}  // namespace test_support
