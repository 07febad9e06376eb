// Reading enum fields that come from caller memory or through the C ABI.
// Such a field may hold any bit pattern; loading it as the enum type is
// undefined behaviour when the value lies outside the enumeration, so
// validation reads (and copies) the integer instead.
#pragma once

#include <cstring>

namespace cucpu {

// The integer an enum field holds, read without an enum load.
template <class E>
int raw_enum(const E& field) {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

// Copies an enum field bit for bit (a plain assignment loads it).
template <class E>
void copy_enum(E& to, const E& from) {
  static_assert(sizeof(E) == sizeof(int));
  std::memcpy(&to, &from, sizeof to);
}

}  // namespace cucpu
