#include "symbols/names.h"

#include <llvm/Demangle/Demangle.h>

namespace cucpu::symbols {

std::string readable_name(const std::string& name) { return llvm::demangle(name); }

}  // namespace cucpu::symbols
