// One worker thread, started on the first request; a fork handler keeps a
// child from inheriting a compile in progress (see at_fork_prepare).
// A forked child starts no worker, and its kernels keep their quick code:
// NVIDIA's driver does not support CUDA in the child of a process that used
// it, and ThreadSanitizer cannot follow threads started after a fork.
#include "ptx/tier_up.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace cucpu::ptx {

namespace {

struct Queued {
  std::weak_ptr<const void> interest;
  TierUpJob job;
};

struct Queue {
  std::mutex mu;
  std::condition_variable work_cv;  // a job was queued
  std::condition_variable idle_cv;  // the running job finished
  std::deque<Queued> jobs;          // guarded by mu
  bool started = false;             // the worker exists; guarded by mu
  bool forked = false;              // this is a forked child: no worker; guarded by mu
  bool busy = false;                // the worker is running a job; guarded by mu
  bool handlers_installed = false;  // guarded by mu
  // Set once, at exit. Relaxed: it only asks a job to stop early; the
  // exit handler's wait on `busy` (under mu) is the synchronization.
  std::atomic<bool> exiting{false};
};

Queue& queue() {
  static Queue* q = new Queue;  // never destroyed: the worker may outlive static destruction
  return *q;
}

void work() {
  Queue& q = queue();
  std::unique_lock<std::mutex> lk(q.mu);
  for (;;) {
    q.work_cv.wait(lk, [&] { return !q.jobs.empty() && !q.exiting.load(std::memory_order_relaxed); });
    Queued next = std::move(q.jobs.front());
    q.jobs.pop_front();
    q.busy = true;
    lk.unlock();
    const std::function<bool()> cancelled = [&] {
      return q.exiting.load(std::memory_order_relaxed) || next.interest.expired();
    };
    try {
      next.job(cancelled);
    } catch (...) {
      // A failed recompile leaves the quick code in place.
    }
    next = Queued{};  // the job's captures go before the next wait
    lk.lock();
    q.busy = false;
    q.idle_cv.notify_all();
  }
}

void at_exit() {
  Queue& q = queue();
  q.exiting.store(true, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lk(q.mu);
  std::deque<Queued> dropped;
  dropped.swap(q.jobs);
  q.idle_cv.wait_for(lk, std::chrono::seconds(2), [&] { return !q.busy; });
}

// fork(): the prepare handler takes the queue's lock once no job runs, so
// that no compile holds LLVM's or the JIT's locks in the child; the child
// starts without a worker (the parent's is not copied) and makes its own.
void at_fork_prepare() {
  Queue& q = queue();
  std::unique_lock<std::mutex> lk(q.mu);
  q.idle_cv.wait(lk, [&] { return !q.busy; });
  lk.release();  // unlocked by the parent and child handlers
}
void at_fork_parent() { queue().mu.unlock(); }
void at_fork_child() {
  Queue& q = queue();
  q.forked = true;
  q.jobs.clear();
  q.mu.unlock();
}

}  // namespace

void request_tier_up(std::weak_ptr<const void> interest, TierUpJob job) {
  Queue& q = queue();
  bool install = false;
  {
    std::lock_guard<std::mutex> g(q.mu);
    if (q.exiting.load(std::memory_order_relaxed) || q.forked) return;
    q.jobs.push_back({std::move(interest), std::move(job)});
    if (!q.started) {
      q.started = true;
      std::thread(work).detach();
    }
    install = !q.handlers_installed;
    q.handlers_installed = true;
  }
  if (install) {
    std::atexit(at_exit);
    pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
  }
  q.work_cv.notify_one();
}

}  // namespace cucpu::ptx
