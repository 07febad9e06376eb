// What a device reports for each CUdevice_attribute: one table of an sm_90
// part's figures (device_attributes.inc), with the values that follow the
// architecture presented (core/device_arch.h: capability, per-SM limits)
// and the machine (the multiprocessor count: the engine's workers) filled
// in. static_attribute reads the table alone (limits no architecture moves).
// cuDeviceGetAttribute and the device runtime's cudaDeviceGetAttribute
// (dynamic parallelism) both answer from here.
#pragma once

namespace cucpu {

// The table's value of attribute `a`, 0 for one out of range.
int static_attribute(int a);
// Attribute `a` of device `dev` (a valid ordinal): false when `a` is not an attribute.
bool device_attribute(int a, int dev, int* out);

}  // namespace cucpu
