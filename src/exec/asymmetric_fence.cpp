#include "exec/asymmetric_fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

namespace cucpu {
namespace {

bool register_process() {
  // CUCPU_NO_MEMBARRIER=1 keeps every stream on the fenced path (for
  // comparisons, and for kernels where the call misbehaves).
  if (const char* off = std::getenv("CUCPU_NO_MEMBARRIER"); off && *off == '1') return false;
  const long supported = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (supported < 0 || !(supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

}  // namespace

bool heavy_fence_available() {
  static const bool available = register_process();
  return available;
}

void heavy_fence() {
  // Registered by heavy_fence_available(), which every caller checked first.
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) std::abort();
}

}  // namespace cucpu
