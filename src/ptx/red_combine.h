// Combined global reductions (the table itself: devrt/red_table.h): a worker's `red.global` operations (atomic
// updates whose old value no thread reads) of a kernel where nothing else
// can read or write their targets are added into a small table per worker
// thread and applied to memory when the worker's run of blocks ends, or
// before the worker's next other atomic. Many blocks reducing into one
// address then cost one atomic per run of blocks instead of one per block:
// on a CPU a contended atomic costs about 100 ns, on a GPU a few cycles.
//
// Why this is the GPU's semantics (the conditions are combining_kernel's):
// - no thread reads or writes a target plainly after updating it: after a
//   reduction (in the thread, or after a barrier in its block) the kernel
//   reads global memory only through atomics and `.nc` loads (whose data
//   the program promises is not written while the kernel runs) and writes
//   it only through atomics, and every other atomic of the worker first
//   applies the table. Plain accesses before a reduction, or in blocks
//   that run later on the worker, are unordered with it on the GPU too;
// - a worker's updates become visible when its run of blocks ends (a
//   bounded time: its blocks only ever wait on atomics, which apply the
//   table first), before the kernel completes;
// - the order in which updates reach a location is unspecified on the GPU.
//   Integer operations give the same value in every order; floating-point
//   sums are associated differently (the partial sums of a worker are
//   added first), within the rounding any order shows.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "devrt/red_table.h"
#include "ptx/ast.h"

namespace cucpu::ptx {

// The table code of `in` when it is a reduction the table combines: `red`
// or `atom` on global memory, relaxed (or without a semantics) at GPU or
// CTA scope, an add (integers, f32, f64) or a min, max, and, or, xor of
// integers. An `atom` combines only when its old value is unused
// (result_unused: nvcc 13 writes a register it never reads).
std::optional<uint32_t> combined_code(const Instr& in);
// Whether `in` (an atom) writes a result no instruction of `f` reads;
// `mentions`: per register of `f`, how many instructions name it.
bool result_unused(const Function& f, const Instr& in, const std::vector<int>& mentions);

// Whether the kernel `order[0]` (calling the functions `order[1..]`)
// combines its global reductions: it has some, under the conditions above.
bool combining_kernel(const Module& m, const std::vector<int>& order);

}  // namespace cucpu::ptx
