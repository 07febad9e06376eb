#include "base/kernel_timeout.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <algorithm>

namespace cucpu {

int64_t kernel_timeout_ns() {
  static const int64_t ns = [] () -> int64_t {
    const char* v = std::getenv("CUCPU_KERNEL_TIMEOUT");
    if (!v || !*v) return 0;
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (end == v || *end || !std::isfinite(s) || s < 0 || s > 1e9) {
      std::fprintf(stderr, "cucpu: CUCPU_KERNEL_TIMEOUT=%s is not a number of seconds; kernels run without a time limit\n", v);
      return 0;
    }
    if (s == 0) return 0;
    return std::max<int64_t>(1, static_cast<int64_t>(s * 1e9));
  }();
  return ns;
}

}  // namespace cucpu
