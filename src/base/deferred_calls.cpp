#include "base/deferred_calls.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace cucpu {
namespace {

struct Queue {
  std::mutex mu;
  std::condition_variable ready;
  std::deque<std::pair<void (*)(void*), void*>> calls;  // guarded by mu
  bool started = false;                                 // guarded by mu

  void run() {
    std::unique_lock lock(mu);
    for (;;) {
      ready.wait(lock, [&] { return !calls.empty(); });
      auto [fn, arg] = calls.front();
      calls.pop_front();
      lock.unlock();
      fn(arg);
      lock.lock();
    }
  }
};

Queue& queue() {
  static Queue* q = new Queue();  // outlives static destruction, as its thread does
  return *q;
}

}  // namespace

void defer_call(void (*fn)(void*), void* arg) {
  Queue& q = queue();
  std::lock_guard lock(q.mu);
  q.calls.emplace_back(fn, arg);
  if (!q.started) {
    q.started = true;
    std::thread([&q] { q.run(); }).detach();
  }
  q.ready.notify_one();
}

}  // namespace cucpu
