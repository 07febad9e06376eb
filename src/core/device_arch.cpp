#include "core/device_arch.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace cucpu {
namespace {

constexpr DeviceArch kArchs[] = {
#define X(sm, major, minor, threads, blocks, shared, optin, cluster) {sm, major, minor, threads, blocks, shared, optin, cluster},
#include "core/device_archs.inc"
#undef X
};
// The libraries of CUDA 13.0 ship their PTX for compute_120 and
// compute_121 (cuBLAS 120; cuRAND and cuSOLVER 121 only), and choose
// kernels by the device's capability: an sm_121 device can load all of it.
constexpr int kDefaultSm = 121;

const DeviceArch* find(int sm) {
  for (const DeviceArch& a : kArchs)
    if (a.sm == sm) return &a;
  return nullptr;
}

const DeviceArch& choose() {
  const char* s = std::getenv("CUCPU_ARCH");
  if (!s || !*s) return *find(kDefaultSm);
  const char* digits = std::strncmp(s, "sm_", 3) == 0 ? s + 3 : s;
  char* end = nullptr;
  const long sm = std::strtol(digits, &end, 10);
  if (end != digits && *end == 0)
    if (const DeviceArch* a = find(static_cast<int>(sm))) return *a;
  std::string known;
  for (const DeviceArch& a : kArchs) known += (known.empty() ? "sm_" : ", sm_") + std::to_string(a.sm);
  std::fprintf(stderr, "cucpu: CUCPU_ARCH=%s is not an architecture cucpu presents (%s): using sm_%d\n", s,
               known.c_str(), kDefaultSm);
  return *find(kDefaultSm);
}

}  // namespace

const DeviceArch& device_arch() {
  static const DeviceArch& arch = choose();
  return arch;
}

}  // namespace cucpu
