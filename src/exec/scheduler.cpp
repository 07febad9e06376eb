#include "exec/scheduler.h"

#include <cstdlib>
#include <string>

#include "exec/spin_lock.h"

namespace cucpu {
namespace {
thread_local bool t_is_worker = false;

int level_of(int priority) {
  int level = -priority;  // 0 (lowest) .. 7 (highest)
  if (level < 0) level = 0;
  if (level >= Scheduler::kPriorityLevels) level = Scheduler::kPriorityLevels - 1;
  return Scheduler::kPriorityLevels - 1 - level;  // queue 0 is served first
}

size_t configured_workers() {
  if (const char* s = std::getenv("CUCPU_WORKERS")) {
    long n = std::strtol(s, nullptr, 10);
    if (n >= 1 && n <= 256) return static_cast<size_t>(n);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw < 2 ? 2 : hw;
}
}  // namespace

Scheduler& Scheduler::instance() {
  // Leaked on purpose: workers may still be finishing ops while static
  // destructors of other translation units run.
  static Scheduler* s = new Scheduler();
  return *s;
}

bool Scheduler::on_worker_thread() { return t_is_worker; }

Scheduler::Scheduler() {
  size_t n = configured_workers();
  workers_.reserve(n);
  for (size_t i = 0; i < n; ++i) workers_.emplace_back([this] { worker_main(); });
  for (auto& w : workers_) w.detach();
}

Scheduler::~Scheduler() {
  std::lock_guard<std::mutex> g(mu_);
  stopping_ = true;
  cv_.notify_all();
}

void Scheduler::push(Op* op) {
  bool wake;
  {
    std::lock_guard<std::mutex> g(mu_);
    ready_[level_of(op->priority)].push_back(op);
    ready_count_.fetch_add(1, std::memory_order_release);
    wake = should_wake_locked();
  }
  if (wake) cv_.notify_one();
}

// Wakes at most one sleeper at a time, and only when no worker spins: a
// worker that pops an op while more are queued wakes the next one (see
// worker_main), so a burst of pushes costs the pushing thread one wake-up
// and parallelism ramps up on the workers' side.
bool Scheduler::should_wake_locked() {
  if (sleepers_ == 0 || waking_ > 0 || spinners_.load(std::memory_order_acquire) > 0) return false;
  ++waking_;
  return true;
}

void Scheduler::submit(Op* op) {
  if (op->trivial()) {
    run_chain(op);
    return;
  }
  push(op);
}

Op* Scheduler::pop_locked() {
  for (auto& q : ready_) {
    if (!q.empty()) {
      Op* op = q.front();
      q.pop_front();
      ready_count_.fetch_sub(1, std::memory_order_relaxed);
      return op;
    }
  }
  return nullptr;
}

void Scheduler::run_chain(Op* op) {
  // Only workers take non-trivial successors inline: trivial ops finishing
  // on an API thread must not run user code there.
  const bool allow_inline = t_is_worker;
  std::vector<Op*> more;  // further ops to run here; allocated only when needed
  while (op) {
    op->execute(op_status_before_execute(op));
    finish(op, allow_inline, more);
    if (more.empty()) {
      op = nullptr;
    } else {
      op = more.back();
      more.pop_back();
    }
  }
}

void Scheduler::finish(Op* op, bool allow_inline, std::vector<Op*>& run_here) {
  // The stream's completed sequence must advance before the op is marked
  // done: once done, a later op of the stream may be linked without a
  // dependency, run and publish its own (higher) sequence number.
  op_after_finish(op);
  bool took_inline = false;
  op->mark_done([&](Op* s) {
    if (!s->release_dependency()) {
      s->release();  // the link's reference; others still hold theirs
      return;
    }
    // The link's reference becomes the reference of whoever runs it.
    if (s->trivial()) {
      run_here.push_back(s);
    } else if (allow_inline && !took_inline) {
      run_here.push_back(s);
      took_inline = true;
    } else {
      push(s);
    }
  });
  op->release();  // the runner's reference
}

void Scheduler::worker_main() {
  t_is_worker = true;
  for (;;) {
    Op* op = nullptr;
    bool wake = false;
    if (ready_count_.load(std::memory_order_acquire) > 0) {
      std::lock_guard<std::mutex> g(mu_);
      op = pop_locked();
      wake = op && ready_count_.load(std::memory_order_relaxed) > 0 && should_wake_locked();
    }
    if (wake) cv_.notify_one();
    if (op) {
      run_chain(op);
      continue;
    }
    // Spin briefly, one worker at a time, yielding so that on a small
    // machine the thread we wait for keeps its core.
    if (spinners_.fetch_add(1, std::memory_order_acq_rel) == 0) {
      for (int i = 0; i < 2000 && ready_count_.load(std::memory_order_acquire) == 0; ++i) {
        if (i % 16 == 15) std::this_thread::yield();
        else cpu_relax();
      }
    }
    spinners_.fetch_sub(1, std::memory_order_acq_rel);
    std::unique_lock<std::mutex> lk(mu_);
    while (!stopping_ && (op = pop_locked()) == nullptr) {
      ++sleepers_;
      cv_.wait(lk);
      --sleepers_;
      if (waking_ > 0) --waking_;  // this may be the wake-up that was sent
    }
    if (!op) return;
    wake = ready_count_.load(std::memory_order_relaxed) > 0 && should_wake_locked();
    lk.unlock();
    if (wake) cv_.notify_one();
    run_chain(op);
  }
}

}  // namespace cucpu
