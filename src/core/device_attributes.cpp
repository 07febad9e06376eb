#include "core/device_attributes.h"

#include "core/device_arch.h"
#include "cuda.h"
#include "exec/scheduler.h"

namespace cucpu {

namespace {
constexpr int kAttributes[] = {
    0,  // 0: not an attribute
#include "core/device_attributes.inc"
};
constexpr int kCount = static_cast<int>(sizeof(kAttributes) / sizeof(kAttributes[0]));
}  // namespace

int static_attribute(int a) { return a > 0 && a < kCount ? kAttributes[a] : 0; }

bool device_attribute(int a, int dev, int* out) {
  if (a <= 0 || a >= kCount) return false;
  int v = kAttributes[a];
  const DeviceArch& arch = device_arch();
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = arch.major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = arch.minor; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = arch.threads_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: v = arch.blocks_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: v = arch.shared_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: v = arch.optin_shared_per_block; break;
    default: break;
  }
  if (a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) v = static_cast<int>(Scheduler::instance().worker_count());
  if (a == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) v = dev;
  *out = v;
  return true;
}

}  // namespace cucpu
