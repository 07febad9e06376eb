// The background compiler: one thread that recompiles kernels at the full
// tier (jit.h) while their quick code runs. Thread-safe. Fork-safe: a fork
// waits for the running job, and a forked child runs no jobs (its kernels
// keep their quick code).
#pragma once

#include <functional>
#include <memory>

namespace cucpu::ptx {

// A recompilation. `cancelled` answers true once nobody needs the result:
// its interest has expired, or the process is exiting. The job polls it
// (compile_object does) and gives up early.
using TierUpJob = std::function<void(const std::function<bool()>& cancelled)>;

// Queues `job` behind those already queued (in a forked child, drops it).
// Jobs run one at a time. A job
// still queued when the process exits never runs; one running then is
// cancelled and waited for (up to two seconds), so that no compile is in
// LLVM while static destructors run.
void request_tier_up(std::weak_ptr<const void> interest, TierUpJob job);

}  // namespace cucpu::ptx
