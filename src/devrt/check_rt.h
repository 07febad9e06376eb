// Access instrumentation for `cucpu check` (CUCPU_CHECK set): compiled code
// calls cucpu_rt_check_access before each global (and generic) load, store
// and atomic, and the runtime's hook validates the access against live
// allocations and records the range for the race checker. The compiler
// knows nothing of allocations or streams: what a check means is the hook's.
#pragma once

#include <cstdint>

#include "devrt/abi.h"

namespace cucpu::devrt {

enum : uint32_t { kAccessWrite = 1, kAccessAtomic = 2, kAccessGeneric = 4 };

// True when CUCPU_CHECK is set (read once, here, for the whole library):
// kernels are then compiled instrumented, under cache keys of their own, and
// the race checker (core/check.h) is on.
bool instrument_accesses();

// Validates one access of `bytes` at `addr` by thread `tid` (linear, in its
// block) at PTX line `line`; false when the access must not happen (the
// hook has reported it; the kernel then faults with an illegal address).
using AccessHook = bool (*)(const BlockEnv* env, uint64_t addr, uint32_t bytes, uint32_t flags, uint32_t line,
                            uint32_t tid);
// Installed by the runtime before any kernel runs instrumented.
void set_access_hook(AccessHook hook);

// Racecheck: shared-memory accesses are checked here, within a block. Two
// accesses of one word by threads of different warps, at least one a
// write (and not both atomic), with no block barrier between them, are a
// race. Warps are exempt among their own lanes (warp-synchronous code is
// ordered by the warp's collectives). The hook reports one.
struct SharedAccess {
  uint32_t tid, line;
  bool write;
};
using SharedRaceHook = void (*)(const BlockEnv* env, uint32_t offset, const SharedAccess& first, const SharedAccess& second);
void set_shared_race_hook(SharedRaceHook hook);
// Synccheck: an aligned barrier (bar.sync, __syncthreads) released while
// its threads wait at different instructions (divergent code). The hook
// reports one.
using DivergentBarrierHook = void (*)(const BlockEnv* env, const SharedAccess& one, const SharedAccess& other);
void set_divergent_barrier_hook(DivergentBarrierHook hook);
void report_divergent_barrier(const BlockEnv* env, uint32_t tid_a, uint32_t line_a, uint32_t tid_b, uint32_t line_b);
// The block runner's marks: a block starts (shared memory is fresh), a
// block-wide barrier released the threads waiting at it.
void check_block_begins();
void check_barrier_passed();

}  // namespace cucpu::devrt

extern "C" void cucpu_rt_check_shared(cucpu::devrt::BlockEnv* env, void* addr, uint32_t bytes, uint32_t flags, uint32_t line,
                                      uint32_t tid);
extern "C" void cucpu_rt_check_access(cucpu::devrt::BlockEnv* env, void* addr, uint32_t bytes, uint32_t flags, uint32_t line,
                                      uint32_t tid);
