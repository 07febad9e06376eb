// Asymmetric fences: for a race between a hot path and a rare one, each of
// which stores one flag and then loads the other's (the store-buffering
// pattern, which plain release/acquire does not order).
//
// The hot side calls light_fence(), a compiler barrier: it costs nothing,
// and its store may still sit in the store buffer when its load runs. The
// rare side calls heavy_fence(), which makes every running thread of the
// process execute a full memory barrier (membarrier(2),
// MEMBARRIER_CMD_PRIVATE_EXPEDITED) before it returns; afterwards either the
// rare side's load sees the hot side's store, or the hot side's load, not
// yet executed, sees the rare side's store.
//
// heavy_fence() costs a few microseconds. Where the kernel lacks the
// command (older than 4.14, or filtered), heavy_fence_available() is false
// and callers must use full fences on both sides instead. It is also false
// until the process is registered for the command, which the first call
// starts in the background (registration can take milliseconds); once
// true it stays true.
#pragma once

#include <atomic>

namespace cucpu {

bool heavy_fence_available();
// Waits until registration has settled; then heavy_fence_available().
bool wait_for_heavy_fence();
void heavy_fence();
inline void light_fence() { std::atomic_signal_fence(std::memory_order_seq_cst); }

}  // namespace cucpu
