#include "core/device_attributes.h"

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
  if (a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) v = static_cast<int>(Scheduler::instance().worker_count());
  if (a == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) v = dev;
  *out = v;
  return true;
}

}  // namespace cucpu
