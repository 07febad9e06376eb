// The JIT: optimizes a lowered module for this CPU and makes it callable.
// One process-wide ORC LLJIT; safe to call from many threads at once.
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cucpu::ptx {

// Optimizes `mod` (which lives in `ctx`; both are consumed) and returns the
// addresses of `names`. False with *error on failure.
bool jit_compile(std::unique_ptr<llvm::Module> mod, std::unique_ptr<llvm::LLVMContext> ctx,
                 const std::vector<std::string>& names, std::vector<uint64_t>* addrs, std::string* error);

}  // namespace cucpu::ptx
