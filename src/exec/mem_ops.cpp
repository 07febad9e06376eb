#include "exec/mem_ops.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/context.h"
#include "core/stream.h"
#include "exec/ops.h"
#include "exec/scheduler.h"

namespace cucpu {
namespace {

bool condition_holds(const MemOpSpec& m) {
  if (m.kind == MemOpSpec::Kind::kWait32) {
    const uint32_t v = __atomic_load_n(reinterpret_cast<const uint32_t*>(m.addr), __ATOMIC_ACQUIRE);
    const auto want = static_cast<uint32_t>(m.value);
    switch (m.condition) {
      case CU_STREAM_WAIT_VALUE_GEQ: return static_cast<int32_t>(v - want) >= 0;
      case CU_STREAM_WAIT_VALUE_EQ: return v == want;
      case CU_STREAM_WAIT_VALUE_AND: return (v & want) != 0;
      default: return ~(v | want) != 0;  // NOR
    }
  }
  const uint64_t v = __atomic_load_n(reinterpret_cast<const uint64_t*>(m.addr), __ATOMIC_ACQUIRE);
  switch (m.condition) {
    case CU_STREAM_WAIT_VALUE_GEQ: return static_cast<int64_t>(v - m.value) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return v == m.value;
    case CU_STREAM_WAIT_VALUE_AND: return (v & m.value) != 0;
    default: return ~(v | m.value) != 0;
  }
}

// The one thread that polls parked waits. Leaked on purpose, like the
// scheduler: parked ops may outlive static destruction.
class ValueWatcher {
 public:
  static ValueWatcher& instance() {
    static ValueWatcher* w = new ValueWatcher();
    return *w;
  }
  void watch(MemOpsOp* op) {
    {
      std::lock_guard<std::mutex> g(mu_);
      incoming_.push_back(op);
    }
    cv_.notify_one();
  }

 private:
  ValueWatcher() { std::thread([this] { run(); }).detach(); }

  void run() {
    std::vector<MemOpsOp*> parked;  // owned by this thread
    int idle_polls = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        if (parked.empty()) cv_.wait(lk, [&] { return !incoming_.empty(); });
        parked.insert(parked.end(), incoming_.begin(), incoming_.end());
        incoming_.clear();
      }
      bool progressed = false;
      for (size_t i = 0; i < parked.size();) {
        if (!parked[i]->resume()) {
          ++i;
          continue;
        }
        MemOpsOp* done = parked[i];
        parked[i] = parked.back();
        parked.pop_back();
        Scheduler::instance().complete(done);
        progressed = true;
      }
      if (parked.empty() || progressed) {
        idle_polls = 0;
        continue;
      }
      // Back off: yield for a while, then sleep in growing steps.
      if (++idle_polls < 256) {
        std::this_thread::yield();
      } else {
        const int us = std::min(100, (idle_polls - 256) / 8 + 1);
        std::this_thread::sleep_for(std::chrono::microseconds(us));
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<MemOpsOp*> incoming_;  // guarded by mu_
};

}  // namespace

void MemOpsOp::execute(int status) {
  if (status != CUDA_SUCCESS) {
    next_ = specs_.size();  // a faulted context runs no more memory operations
    return;
  }
  if (!resume()) defer();
}

void MemOpsOp::park() { ValueWatcher::instance().watch(this); }

bool MemOpsOp::resume() {
  for (; next_ < specs_.size(); ++next_) {
    const MemOpSpec& m = specs_[next_];
    if (m.kind == MemOpSpec::Kind::kBarrier) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      continue;
    }
    if (!memory_still_valid(&m.check, 1)) {
      stream->ctx->set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
      next_ = specs_.size();
      return true;
    }
    switch (m.kind) {
      case MemOpSpec::Kind::kWrite32:
        __atomic_store_n(reinterpret_cast<uint32_t*>(m.addr), static_cast<uint32_t>(m.value), __ATOMIC_RELEASE);
        break;
      case MemOpSpec::Kind::kWrite64:
        __atomic_store_n(reinterpret_cast<uint64_t*>(m.addr), m.value, __ATOMIC_RELEASE);
        break;
      default:
        if (!condition_holds(m)) return false;
    }
  }
  return true;
}

}  // namespace cucpu
