// Runs a compiled kernel's blocks on the calling thread: the thread loops
// of each block, its cuts (barriers, warp collectives), and device faults.
#pragma once

#include <string>
#include <vector>

#include "devrt/abi.h"
#include "devrt/launch.h"

namespace cucpu::devrt {

// What the runner needs of a compiled kernel.
struct CompiledCode {
  RangeFn range = nullptr;
  const std::vector<CutSite>* sites = nullptr;
  uint32_t frame_bytes = 0;     // 0: no cuts (each thread runs in one step)
  uint32_t frame_units = 0;     // the frames' rows (abi.h)
  uint32_t local_stride = 0;    // .local bytes per thread in the frames' local area
  uint32_t static_shared = 0;
  const char* name = "";
};

Fault run_blocks(const CompiledCode& code, const LaunchConfig& cfg, uint64_t first, uint64_t last);

// Ends the running block with a fault (called by the runtime services on
// the thread that runs a block; unwinds to run_blocks).
[[noreturn]] void raise_fault(FaultKind kind, uint64_t address, std::string message);

// The blocks parked on the calling thread (LaunchConfig::leave_parked), and
// forgetting them (a launch that stopped).
size_t parked_blocks();
void drop_parked_blocks();

// Ends the running block with a kTimedOut fault once the launch's stop
// word is set (called on the thread that runs a block).
void poll_stop(const BlockEnv& env);

// The indices of the thread being run (for assert messages).
void current_indices(const BlockEnv* env, Dim3* block, Dim3* thread);

}  // namespace cucpu::devrt
