// The architecture the virtual device presents: its compute capability and
// the per-capability limits that follow from it. Chosen once per process
// by CUCPU_ARCH (sm_90, sm_100, sm_120, sm_121; default sm_121), read by
// the attribute table, the launch checks, the occupancy calculator and the
// loader (which refuses PTX for a newer target).
#pragma once

namespace cucpu {

struct DeviceArch {
  int sm;  // 121 for sm_121
  int major, minor;
  int threads_per_sm, blocks_per_sm;
  int shared_per_sm, optin_shared_per_block;
  int max_non_portable_cluster;
};

// The process's architecture: fixed at the first call (thread-safe); an
// unknown CUCPU_ARCH is said on stderr once and the default used.
const DeviceArch& device_arch();

}  // namespace cucpu
