// shfl.sync's lane arithmetic, shared by the runner and the compiled code
// that resolves whole-warp shuffles itself.
#pragma once

#include <cstdint>

#include "devrt/abi.h"

namespace cucpu::devrt {

// The lane that lane `lane` reads with shuffle `mode` (kShflUp...) and
// operands b, c; itself when the source is out of range (then *in_range is
// false).
inline uint32_t shfl_source(uint8_t mode, uint32_t lane, uint32_t b, uint32_t c, bool* in_range) {
  const uint32_t bval = b & 31, cval = c & 31, seg = (c >> 8) & 31;
  const int32_t l = static_cast<int32_t>(lane);
  const int32_t max_lane = static_cast<int32_t>((lane & seg) | (cval & ~seg)), min_lane = static_cast<int32_t>(lane & seg);
  int32_t j;
  bool p;
  switch (mode) {
    case kShflUp: j = l - static_cast<int32_t>(bval); p = j >= max_lane; break;
    case kShflDown: j = l + static_cast<int32_t>(bval); p = j <= max_lane; break;
    case kShflBfly: j = l ^ static_cast<int32_t>(bval); p = j <= max_lane; break;
    default: j = min_lane | static_cast<int32_t>(bval & ~seg); p = j <= max_lane; break;
  }
  *in_range = p;
  return p ? static_cast<uint32_t>(j) : lane;
}

}  // namespace cucpu::devrt
