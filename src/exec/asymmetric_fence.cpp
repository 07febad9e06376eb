#include "exec/asymmetric_fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <system_error>
#include <thread>

namespace cucpu {
namespace {

bool register_process() {
  // CUCPU_NO_MEMBARRIER=1 keeps every stream on the fenced path (for
  // comparisons, and for kernels where the call misbehaves).
  if (const char* off = std::getenv("CUCPU_NO_MEMBARRIER"); off && *off == '1') return false;
  const long supported = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (supported < 0 || !(supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

// Registration waits for the kernel to quiesce every CPU (milliseconds on
// some machines), so it runs on a thread of its own; until it is done,
// callers take the fenced paths.
enum State : int { kNotStarted, kRegistering, kAvailable, kUnavailable };
std::atomic<int> g_state{kNotStarted};

void start_registration() {
  int expected = kNotStarted;
  if (!g_state.compare_exchange_strong(expected, kRegistering, std::memory_order_acq_rel)) return;
  try {
    std::thread([] {
      g_state.store(register_process() ? kAvailable : kUnavailable, std::memory_order_release);
      g_state.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    g_state.store(kUnavailable, std::memory_order_release);
    g_state.notify_all();
  }
}

}  // namespace

bool heavy_fence_available() {
  const int state = g_state.load(std::memory_order_acquire);
  if (state == kNotStarted) start_registration();
  return state == kAvailable;
}

bool wait_for_heavy_fence() {
  start_registration();
  for (int state = g_state.load(std::memory_order_acquire);; state = g_state.load(std::memory_order_acquire)) {
    if (state == kAvailable || state == kUnavailable) return state == kAvailable;
    g_state.wait(state, std::memory_order_acquire);
  }
}

void heavy_fence() {
  // Registered: every caller saw heavy_fence_available() true first.
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) std::abort();
}

}  // namespace cucpu
