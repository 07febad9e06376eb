#include "core/mem_ops.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/allocation.h"
#include "core/context.h"
#include "core/stream.h"
#include "core/ops.h"
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

// A write, or a wait's test: false when the wait must go on.
bool perform(const MemOpSpec& m) {
  switch (m.kind) {
    case MemOpSpec::Kind::kWrite32:
      __atomic_store_n(reinterpret_cast<uint32_t*>(m.addr), static_cast<uint32_t>(m.value), __ATOMIC_RELEASE);
      return true;
    case MemOpSpec::Kind::kWrite64:
      __atomic_store_n(reinterpret_cast<uint64_t*>(m.addr), m.value, __ATOMIC_RELEASE);
      return true;
    default:
      return condition_holds(m);
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

// The word must lie in one allocation that is not managed memory, aligned
// to its size, and grant what the operation does to it.
CUresult check_word(CUdeviceptr addr, size_t size, bool writes, MemOpSpec* m) {
  if (addr == 0 || addr % size != 0) return CUDA_ERROR_INVALID_VALUE;
  auto a = Registry::instance().find(static_cast<uintptr_t>(addr));
  if (!a || a->kind == MemKind::kManaged) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = check_device_range(addr, size, &m->check, writes)) return r;
  m->addr = static_cast<uintptr_t>(addr);
  return CUDA_SUCCESS;
}

CUresult wait_spec(CUdeviceptr addr, uint64_t value, unsigned flags, bool wide, MemOpSpec* m) {
  if (flags & CU_STREAM_WAIT_VALUE_FLUSH) return CUDA_ERROR_NOT_SUPPORTED;  // CAN_FLUSH_REMOTE_WRITES is 0
  if (flags > CU_STREAM_WAIT_VALUE_NOR) return CUDA_ERROR_INVALID_VALUE;
  m->kind = wide ? MemOpSpec::Kind::kWait64 : MemOpSpec::Kind::kWait32;
  m->condition = flags;
  m->value = value;
  return check_word(addr, wide ? 8 : 4, false, m);
}

CUresult write_spec(CUdeviceptr addr, uint64_t value, unsigned flags, bool wide, MemOpSpec* m) {
  // Driver 580 refuses CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER too.
  if (flags != CU_STREAM_WRITE_VALUE_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
  m->kind = wide ? MemOpSpec::Kind::kWrite64 : MemOpSpec::Kind::kWrite32;
  m->value = value;
  return check_word(addr, wide ? 8 : 4, true, m);
}

}  // namespace

CUresult build_mem_op_specs(const CUstreamBatchMemOpParams* ops, unsigned count, std::vector<MemOpSpec>* out) {
  if (count > 0 && !ops) return CUDA_ERROR_INVALID_VALUE;  // driver 580 crashes here
  out->assign(count, MemOpSpec{});
  for (unsigned i = 0; i < count; ++i) {
    const CUstreamBatchMemOpParams& p = ops[i];
    MemOpSpec* m = &(*out)[i];
    int type;  // any bit pattern may arrive: read it without an enum load
    std::memcpy(&type, &p.operation, sizeof type);
    CUresult r = CUDA_SUCCESS;
    switch (type) {
      case CU_STREAM_MEM_OP_WAIT_VALUE_32:
        r = wait_spec(p.waitValue.address, p.waitValue.value, p.waitValue.flags, false, m);
        break;
      case CU_STREAM_MEM_OP_WAIT_VALUE_64:
        r = wait_spec(p.waitValue.address, p.waitValue.value64, p.waitValue.flags, true, m);
        break;
      case CU_STREAM_MEM_OP_WRITE_VALUE_32:
        r = write_spec(p.writeValue.address, p.writeValue.value, p.writeValue.flags, false, m);
        break;
      case CU_STREAM_MEM_OP_WRITE_VALUE_64:
        r = write_spec(p.writeValue.address, p.writeValue.value64, p.writeValue.flags, true, m);
        break;
      case CU_STREAM_MEM_OP_BARRIER:
        m->kind = MemOpSpec::Kind::kBarrier;
        break;
      case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
        r = CUDA_ERROR_NOT_SUPPORTED;
        break;
      default:
        r = CUDA_ERROR_INVALID_VALUE;
    }
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

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
    bool done = true;  // a wait whose condition does not hold yet is not
    if (!run_on_live_memory(&m.check, 1, [&m, &done] { done = perform(m); })) {
      stream_of(this)->ctx->set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
      next_ = specs_.size();
      return true;
    }
    if (!done) return false;
  }
  return true;
}

}  // namespace cucpu
