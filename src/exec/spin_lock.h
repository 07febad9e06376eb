// A test-and-test-and-set lock for critical sections of a few instructions
// (linking an op's successors). Never held across a call that can block.
#pragma once

#include <atomic>
#include <thread>

namespace cucpu {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class SpinLock {
 public:
  void lock() {
    for (int spins = 0;; ++spins) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins > 64) std::this_thread::yield();
        else cpu_relax();
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

struct SpinLockGuard {
  explicit SpinLockGuard(SpinLock& l) : l_(l) { l_.lock(); }
  ~SpinLockGuard() { l_.unlock(); }
  SpinLock& l_;
};

}  // namespace cucpu
