// The concrete ops the API enqueues.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>

#include "base/fault_trap.h"
#include "core/copy_resolve.h"
#include "core/allocation.h"
#include "core/check.h"
#include "core/context.h"
#include "core/runtime.h"
#include "core/stream.h"
#include "exec/schedule.h"
#include <atomic>

#include "exec/op.h"

namespace cucpu {

// Bookkeeping op: an event record or a wait. Completes as soon as it is
// ready; `reached_ns` is when the stream reached it (cuEventElapsedTime).
class MarkerOp final : public Op {
 public:
  const char* trace_literal() const override { return timed_ ? "event record" : "marker"; }
  // `timed`: read the clock when reached (events without DISABLE_TIMING);
  // other markers skip the clock read.
  explicit MarkerOp(bool timed = false) : timed_(timed) {}
  void execute(int) override {
    if (timed_)
      reached_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::steady_clock::now().time_since_epoch())
                                             .count());
    // Release: a reader that sees it sees reached_ns, and everything the
    // work before the marker did (which is done before the marker runs).
    ran_.store(true, std::memory_order_release);
  }
  bool reached() const override { return done() || ran_.load(std::memory_order_acquire); }
  uint64_t reached_at_ns() const override { return reached_ns; }
  bool trivial() const override { return true; }
  uint64_t reached_ns = 0;  // written before the op is marked done

 private:
  bool timed_;
  std::atomic<bool> ran_{false};
};

// cuLaunchHostFunc / cuStreamAddCallback. The function runs on a worker with
// no runtime lock held and the thread marked "inside a host function".
class HostFuncOp final : public Op {
 public:
  const char* trace_literal() const override { return "host function"; }
  HostFuncOp(CUhostFn fn, void* data) : fn_(fn), data_(data) {}
  HostFuncOp(CUstreamCallback cb, CUstream handle, void* data) : cb_(cb), handle_(handle), data_(data) {}
  bool runs_program_code() const override { return true; }
  void execute(int status) override {
    if (check::on()) [[unlikely]] check::host_function_begins(this);
    const bool serial = schedule::serial_host_functions();
    if (serial) [[unlikely]] schedule::lock_host_functions();
    set_in_host_function(true);
    if (fn_) fn_(data_);
    else cb_(handle_, static_cast<CUresult>(status), data_);
    set_in_host_function(false);
    if (serial) [[unlikely]] schedule::unlock_host_functions();
  }

 private:
  CUhostFn fn_ = nullptr;
  CUstreamCallback cb_ = nullptr;
  CUstream handle_ = nullptr;
  void* data_;
};

// Copies (copy/copy_plan.cpp) and sets re-check, when they run, that device memory they touch is
// still allocated; if not, the context gets a sticky CUDA_ERROR_ILLEGAL_ADDRESS
// (what a device fault gives on the real driver) and the op does nothing.
inline bool memory_still_valid(const MemCheck* checks, int n) {
  const Registry& reg = Registry::instance();
  const uint64_t now = reg.removals();
  for (int i = 0; i < n; ++i)
    if (checks[i].alloc_id && checks[i].removals != now &&
        !reg.still_valid(checks[i].alloc_id, checks[i].p, checks[i].n))
      return false;
  return true;
}

// Runs access() over device memory that the checks name, if it is still
// allocated, with a fault trap armed: memory another thread frees out of
// stream order while the access runs makes it fault, and the fault is the
// op's, not the process's. False when the memory is gone either way; the
// caller gives its context the sticky CUDA_ERROR_ILLEGAL_ADDRESS.
template <class Access>
bool run_on_live_memory(const MemCheck* checks, int n, Access&& access) {
  return memory_still_valid(checks, n) && run_trapped(access);
}

class MemsetOp final : public Op {
 public:
  const char* trace_literal() const override { return "memset"; }
  MemsetOp(const Memset2D& m, const MemCheck& check) : set_(m), check_(check) {}
  void accesses(std::vector<MemAccess>& out) const override { out.push_back(check::memset_access(set_)); }
  void execute(int status) override {
    if (status != CUDA_SUCCESS) return;
    if (!run_on_live_memory(&check_, 1, [this] { run_memset(set_); }))
      stream_of(this)->ctx->set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
  }

 private:
  Memset2D set_;
  MemCheck check_;
};

// A registry update that must happen in stream order (cuStreamAttachMemAsync).
class FunctionOp final : public Op {
 public:
  const char* trace_literal() const override { return name_; }
  explicit FunctionOp(std::function<void()> f) : f_(std::move(f)) {}
  // A function that frees memory: to `cucpu check`, a write of all of it.
  FunctionOp(std::function<void()> f, const char* name, MemAccess frees) : f_(std::move(f)), name_(name), frees_(frees) {}
  void accesses(std::vector<MemAccess>& out) const override {
    if (frees_.hi > frees_.lo) out.push_back(frees_);
  }
  void execute(int) override { f_(); }
  bool trivial() const override { return true; }

 private:
  std::function<void()> f_;
  const char* name_ = "runtime work";
  MemAccess frees_;
};

}  // namespace cucpu
