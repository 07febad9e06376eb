// C entry to cucpu's integrity computation for the darktrace shim.
#include <cstring>

#include "core/integrity_hash.h"

extern "C" void dt_integrity_answer(const void* inputs, const void* devices, size_t count, uint64_t out[2]) {
  cucpu::IntegrityInputs in;
  std::memcpy(&in, inputs, sizeof in);
  const auto answer = cucpu::integrity_answer(in, static_cast<const cucpu::DeviceIdentity*>(devices), count);
  out[0] = answer[0];
  out[1] = answer[1];
}
