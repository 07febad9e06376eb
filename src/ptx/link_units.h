// Joins separately compiled PTX units (nvcc -rdc: one per translation unit)
// into one text that parses as a single program: each unit's header
// (.version, .target, .address_size) gives way to one for all, and a unit's
// internal module-scope names (no .visible, .extern or .weak: printf's
// $str, static functions) that another unit also names are renamed. Its
// .extern declarations then meet the definitions in the other units.
#pragma once
#include <string>
#include <vector>

namespace cucpu::ptx {

// Throws ParseError for a unit the lexer refuses (line and column are the
// unit's own).
std::string join_units(const std::vector<std::string>& units);

}  // namespace cucpu::ptx
