// Fault traps: code that touches memory which may vanish under it (a
// kernel's computed addresses; device memory that another thread frees out
// of stream order while a copy runs) runs with the thread's trap armed. A
// SIGSEGV or SIGBUS raised while it is armed unwinds, by siglongjmp, to the
// frame that armed it; any other fault goes to the handler installed before
// ours, or kills the process as it would have.
//
// What runs under a trap must hold no lock and own nothing whose destructor
// matters: the unwind runs no destructors.
#pragma once

#include <setjmp.h>

#include <atomic>
#include <cstdint>

namespace cucpu {

struct FaultTrap {
  sigjmp_buf jump;
  uintptr_t address = 0;  // the faulting address, once it has fired
  int signal = 0;         // SIGSEGV or SIGBUS, once it has fired
};

// The thread's armed trap, or null. Initial-exec TLS: the signal handler
// reads it, and must not reach the dynamic TLS allocator. constinit: an
// access calls no TLS init function.
extern __attribute__((tls_model("initial-exec"))) constinit thread_local FaultTrap* t_fault_trap;

// Installs the process's SIGSEGV and SIGBUS handler once; after that, one
// load (acquire: a thread that sees it set sees the handler installed).
extern std::atomic<bool> g_fault_handler_installed;
void install_fault_handler_once();
inline void install_fault_handler() {
  if (!g_fault_handler_installed.load(std::memory_order_acquire)) [[unlikely]] install_fault_handler_once();
}
// After a trap fired: SIGSEGV and SIGBUS unblocked again. The handler runs
// with SA_NODEFER, but a handler interposed in front of ours (ThreadSanitizer's)
// may call it with them blocked, and siglongjmp(…, 0) leaves the mask as is:
// the thread's next fault would then kill the process.
void fault_trap_fired();

// Runs access() with a trap armed. False (with the address) when it
// faulted; the trap that was armed before is armed again either way, so
// traps nest. Not inlined, so that sigsetjmp's frame is this one, not the
// caller's, whose locals then keep their values across a fault.
template <class Access>
[[gnu::noinline]] bool run_trapped(Access&& access, uintptr_t* fault_address = nullptr) {
  install_fault_handler();
  FaultTrap trap;
  FaultTrap* const outer = t_fault_trap;
  if (sigsetjmp(trap.jump, 0)) {
    fault_trap_fired();
    t_fault_trap = outer;
    if (fault_address) *fault_address = trap.address;
    return false;
  }
  t_fault_trap = &trap;
  // The handler reads the pointer: arming and disarming stay on their side
  // of the access, even where the access is inlined plain code.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  access();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_fault_trap = outer;
  return true;
}

}  // namespace cucpu
