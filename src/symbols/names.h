// Names for the reports and traces a user reads: a kernel's name as its
// source spells it. A leaf beside the symbolizer (LLVM's demangler).
#pragma once

#include <string>

namespace cucpu::symbols {

// An Itanium-mangled name ("_Z8grid_sumPKiPiS1_i") demangled
// ("grid_sum(int const*, int*, int*, int)"); any other name (an extern "C"
// kernel's) as it is. Any thread may call it; it allocates, so callers are
// reports and traces, never fast paths.
std::string readable_name(const std::string& name);

}  // namespace cucpu::symbols
