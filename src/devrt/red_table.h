// The table of combined global reductions: one per worker thread, which
// compiled code adds `red.global` operands to and the runner applies to
// memory. Which kernels may use it, and why that keeps the GPU's
// semantics: ptx/red_combine.h.
#pragma once

#include <cstdint>

#include "devrt/abi.h"

namespace cucpu::devrt {

// An operation and type the table can combine: op in the low byte, type above.
enum CombineOp : uint32_t { kCombineAdd, kCombineMin, kCombineMax, kCombineAnd, kCombineOr, kCombineXor };
enum CombineType : uint32_t { kCombineF32, kCombineF64, kCombineU32, kCombineS32, kCombineU64, kCombineS64 };
constexpr uint32_t red_code(CombineOp op, CombineType type) { return op | (type << 8); }

// Applies this thread's table to memory and empties it. The runner calls it
// when a run of blocks ends (faulted or not), with the fault handler armed.
void apply_reductions();

}  // namespace cucpu::devrt

extern "C" {
// Compiled code: adds `bits` (the operand, zero-extended) under `code`
// (red_code) to the table's entry for `address`, which is aligned.
void cucpu_rt_red(cucpu::devrt::BlockEnv* env, void* address, uint64_t bits, uint32_t code);
// Compiled code, before any other atomic of a combining kernel.
void cucpu_rt_red_apply(cucpu::devrt::BlockEnv* env);
}
