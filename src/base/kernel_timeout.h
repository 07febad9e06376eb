// The opt-in limit on how long one kernel launch may run:
// CUCPU_KERNEL_TIMEOUT, in seconds (a decimal number greater than zero).
// Unset, empty or "0": no limit, and kernels are compiled without the polls
// that let a launch be stopped (ptx: back-edge polls; exec/watchdog.h).
#pragma once

#include <cstdint>

namespace cucpu {

// The limit in nanoseconds; 0 when there is none. Read once per process; a
// value that does not parse is reported on stderr once and means none.
int64_t kernel_timeout_ns();

}  // namespace cucpu
