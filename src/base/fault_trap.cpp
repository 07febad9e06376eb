#include "base/fault_trap.h"

#include <signal.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace cucpu {

__attribute__((tls_model("initial-exec"))) constinit thread_local FaultTrap* t_fault_trap = nullptr;

namespace {

struct sigaction g_prev_segv, g_prev_bus;

void on_fault_signal(int sig, siginfo_t* info, void* uctx) {
  if (FaultTrap* trap = t_fault_trap) {
    trap->address = reinterpret_cast<uintptr_t>(info->si_addr);
    trap->signal = sig;
    t_fault_trap = nullptr;  // a fault while unwinding is not caught twice
    siglongjmp(trap->jump, 1);
  }
  // Not ours: what was installed before decides.
  const struct sigaction& prev = sig == SIGSEGV ? g_prev_segv : g_prev_bus;
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) return prev.sa_sigaction(sig, info, uctx);
  } else if (prev.sa_handler != SIG_IGN && prev.sa_handler != SIG_DFL && prev.sa_handler) {
    return prev.sa_handler(sig);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void fault_trap_fired() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGSEGV);
  sigaddset(&s, SIGBUS);
  pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
}

// Release/acquire: a thread that sees it set also sees the previous
// handlers saved.
std::atomic<bool> g_fault_handler_installed{false};

void install_fault_handler_once() {
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  if (g_fault_handler_installed.load(std::memory_order_relaxed)) return;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault_signal;
  // NODEFER: the handler leaves by siglongjmp without restoring the mask.
  // ONSTACK: on a thread with an alternate stack (the kernel runner gives
  // its threads one), a stack overflow can be caught too.
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_prev_segv);
  sigaction(SIGBUS, &sa, &g_prev_bus);
  g_fault_handler_installed.store(true, std::memory_order_release);
}

}  // namespace cucpu
