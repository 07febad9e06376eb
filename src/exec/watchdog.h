// The kernel watchdog (CUCPU_KERNEL_TIMEOUT, base/kernel_timeout.h): a thread
// of its own that sets a launch's stop word once the launch has run past its
// deadline. Compiled kernels poll that word at every loop's back edge, and
// the block runner between blocks and cuts (devrt/abi.h, BlockEnv::stop); a
// launch that sees it set ends with a timeout fault.
#pragma once

#include <cstdint>

#include "base/kernel_timeout.h"

namespace cucpu::watchdog {

inline bool on() { return kernel_timeout_ns() > 0; }
int64_t now_ns();  // the steady clock the deadlines are in

// A piece of a launch that runs blocks. The thread that runs it registers it
// before and unregisters it after; while it is registered the watchdog may
// store 1 to *stop once now_ns() passes deadline_ns. The store is relaxed:
// the word only asks the kernel to end, it publishes nothing. `stop`
// outlives the registration; unwatch returns only once the watchdog no
// longer touches it.
struct Watch {
  uint32_t* stop = nullptr;
  int64_t deadline_ns = 0;
};
void watch(Watch* w);
void unwatch(Watch* w);

// Registers for the life of the scope, when the watchdog is on.
class Scope {
 public:
  Scope(uint32_t* stop, int64_t deadline_ns) {
    if (!on()) return;
    w_.stop = stop;
    w_.deadline_ns = deadline_ns;
    watch(&w_);
  }
  ~Scope() {
    if (w_.stop) unwatch(&w_);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Watch w_;
};

}  // namespace cucpu::watchdog
