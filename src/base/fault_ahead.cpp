#include "base/fault_ahead.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

namespace cucpu {

// The one pager thread and the mappings it serves.
struct FaultAheadPager {
  // Faulted in at a time, the lock not held: a few hundred microseconds.
  static constexpr size_t kStep = size_t{1} << 20;

  std::mutex mu;  // guards everything below and each mapping's asked_ (writes) and faulted_
  std::condition_variable work;  // a mapping asked for more
  std::condition_variable left;  // the pager left the mapping it was faulting in
  std::vector<FaultAheadMapping*> maps;
  FaultAheadMapping* busy = nullptr;  // the mapping being faulted in, the lock released
  bool started = false;
  bool unsupported = false;  // madvise lacks MADV_POPULATE_WRITE: writers fault for themselves

  static FaultAheadPager& get() {
    static FaultAheadPager* p = new FaultAheadPager();  // the detached thread outlives static destructors
    return *p;
  }

  // The mapping whose faulted-in part is least ahead of its writer, among
  // those with something asked for; null if none.
  FaultAheadMapping* neediest_locked() {
    FaultAheadMapping* best = nullptr;
    size_t best_margin = SIZE_MAX;
    for (FaultAheadMapping* m : maps) {
      const size_t asked = m->asked_.load(std::memory_order_relaxed);
      if (m->faulted_ >= asked) continue;
      const size_t writer = asked > FaultAheadMapping::kLead ? asked - FaultAheadMapping::kLead : 0;
      const size_t margin = m->faulted_ > writer ? m->faulted_ - writer : 0;
      if (margin < best_margin) best = m, best_margin = margin;
    }
    return best;
  }

  void run() {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      FaultAheadMapping* m = neediest_locked();
      if (!m) {
        work.wait(lk);
        continue;
      }
      const size_t from = m->faulted_;
      const size_t to = std::min(m->asked_.load(std::memory_order_relaxed), from + kStep);
      busy = m;
      lk.unlock();
      const int r = madvise(static_cast<char*>(m->base_) + from, to - from, MADV_POPULATE_WRITE);
      const int err = errno;
      lk.lock();
      busy = nullptr;
      left.notify_all();
      if (r != 0 && (err == EINVAL || err == ENOSYS)) {
        unsupported = true;  // every mapping's writer faults for itself from now on
        for (FaultAheadMapping* x : maps) {
          x->asked_.store(x->bytes_, std::memory_order_relaxed);
          x->faulted_ = x->bytes_;
        }
        continue;
      }
      // Other failures (no memory for now): the writer takes the faults, and gets the error if any.
      m->faulted_ = to;
    }
  }
};

FaultAheadMapping::FaultAheadMapping(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  bytes = (bytes + page - 1) / page * page;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;
  base_ = p;
  bytes_ = bytes;
  FaultAheadPager& pager = FaultAheadPager::get();
  {
    std::lock_guard<std::mutex> g(pager.mu);
    pager.maps.push_back(this);
  }
  ask(kLead);
}

FaultAheadMapping::~FaultAheadMapping() {
  if (!base_) return;
  FaultAheadPager& pager = FaultAheadPager::get();
  {
    std::unique_lock<std::mutex> lk(pager.mu);
    std::erase(pager.maps, this);
    pager.left.wait(lk, [&] { return pager.busy != this; });
  }
  munmap(base_, bytes_);
}

void FaultAheadMapping::ask(size_t end) {
  FaultAheadPager& pager = FaultAheadPager::get();
  std::lock_guard<std::mutex> g(pager.mu);
  end = pager.unsupported ? bytes_ : std::min(end, bytes_);  // unsupported: reached() need not call again
  if (end <= asked_.load(std::memory_order_relaxed)) return;
  asked_.store(end, std::memory_order_relaxed);
  if (pager.unsupported) return;
  if (!pager.started) {
    pager.started = true;
    try {
      std::thread([&pager] {
        pthread_setname_np(pthread_self(), "cucpu-pager");
        pager.run();
      }).detach();
    } catch (const std::system_error&) {  // no thread: writers fault for themselves
      pager.unsupported = true;
      return;
    }
  }
  pager.work.notify_one();
}

}  // namespace cucpu
