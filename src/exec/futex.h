// Futex wait and wake on a 32-bit word (Linux), for the engine's few
// blocking waits. The kernel checks the word and queues the waiter in one
// step, so a waker that changes the word and then wakes cannot slip in
// between a waiter's check and its sleep.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace cucpu {

// Sleeps while `word` holds `expected` (returns at once if it does not;
// may return spuriously: callers re-check in a loop).
inline void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

// Wakes every thread sleeping in futex_wait on `word`.
inline void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace cucpu
