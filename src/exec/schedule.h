// Schedule fuzzing (`cucpu fuzz`, CUCPU_SCHEDULE). Legal schedules a real
// GPU may also produce, chosen to expose ordering bugs that pass by luck:
//  - random:SEED  each op, before it runs, is held back or not, for 1, 2 or 3
//    units of CUCPU_SCHEDULE_HOLD_MS (5 ms unless set),
//    by a decision that depends only on SEED, its timeline's id and its
//    position there (so a seed repeats its decisions). Held-back ops let
//    independent work on other streams run first, change which host
//    functions overlap, and make asynchronous work finish late; nothing
//    ordered before an op can run after it.
//  - serial-host-functions  host functions run one at a time across the
//    process (NVIDIA's driver runs a context's host functions on one
//    thread), so programs that need two of them at once show it.
// Both may be given, comma-separated. Unset, each hook is one branch on a
// flag read with a relaxed load.
#pragma once

#include <atomic>
#include <cstdint>

namespace cucpu {

class Op;

namespace schedule {

extern std::atomic<bool> g_random;
extern std::atomic<bool> g_serial_host_functions;
inline bool random_on() { return g_random.load(std::memory_order_relaxed); }
inline bool serial_host_functions() { return g_serial_host_functions.load(std::memory_order_relaxed); }

// Called by the engine before `op` (of the timeline with id `timeline_id`) executes.
void before_execute(const Op* op, uint64_t timeline_id);

// Held while a host function runs when serial_host_functions(): a lock of
// its own, taken only around host functions (a host function that waits
// for another deadlocks, as on the driver).
void lock_host_functions();
void unlock_host_functions();

}  // namespace schedule
}  // namespace cucpu
