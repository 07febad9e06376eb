#include "copy/copy3d.h"

#include <cstring>


namespace cucpu {

void run_copy(const Copy3D& c) {
  if (c.width == 0 || c.height == 0 || c.depth == 0) return;
  const bool rows_contiguous = c.src_pitch == c.width && c.dst_pitch == c.width;
  for (size_t z = 0; z < c.depth; ++z) {
    const unsigned char* s = c.src + z * c.src_slice;
    unsigned char* d = c.dst + z * c.dst_slice;
    if (rows_contiguous) {
      std::memmove(d, s, c.width * c.height);
      continue;
    }
    for (size_t y = 0; y < c.height; ++y) std::memmove(d + y * c.dst_pitch, s + y * c.src_pitch, c.width);
  }
}

void run_memset(const Memset2D& m) {
  for (size_t y = 0; y < m.height; ++y) {
    unsigned char* row = m.dst + y * m.pitch;
    switch (m.elem) {
      case 1:
        std::memset(row, static_cast<int>(m.value & 0xff), m.width);
        break;
      case 2: {
        uint16_t v = static_cast<uint16_t>(m.value);
        for (size_t x = 0; x < m.width; ++x) std::memcpy(row + 2 * x, &v, 2);
        break;
      }
      default:
        for (size_t x = 0; x < m.width; ++x) std::memcpy(row + 4 * x, &m.value, 4);
    }
  }
}

}  // namespace cucpu
