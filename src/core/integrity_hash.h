// The answer to cudart's integrity check (slot 1 of the driver's integrity
// table): HMAC-MD2 under a fixed key, over what identifies this driver to
// this process at this moment. cudart computes the same value from what the
// driver tells it (tables, device identities) and refuses to start unless
// they agree, so every input must be what cucpu reports elsewhere.
// Pure functions: no runtime state.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace cucpu {

// The message, in the order and widths hashed (48 bytes, no padding).
struct IntegrityInputs {
  uint32_t driver_version;   // cuDriverGetVersion
  uint32_t version;          // the caller's argument
  uint32_t process;          // getpid()
  uint32_t thread;           // low 32 bits of pthread_self()
  uint64_t cudart_table;     // address of the CUDART_INTERFACE table handed out
  uint64_t integrity_table;  // address of the integrity table handed out
  uint64_t function;         // address of the checking function (its slot's value)
  uint64_t unix_seconds;     // the caller's argument
};
static_assert(sizeof(IntegrityInputs) == 48);

// Appended once per device, in ordinal order (28 bytes each).
struct DeviceIdentity {
  uint8_t uuid[16];  // cuDeviceGetUuid
  int32_t pci_domain, pci_bus, pci_device;
};
static_assert(sizeof(DeviceIdentity) == 28);

// The 16-byte answer as two words, as written to the caller's buffer. For a
// version whose last decimal digit is 0 or 1 the answer is a constant.
std::array<uint64_t, 2> integrity_answer(const IntegrityInputs& in, const DeviceIdentity* devices,
                                         size_t device_count);

// MD2 (RFC 1319), exposed for its test vectors.
std::array<uint8_t, 16> md2(const void* data, size_t size);

}  // namespace cucpu
