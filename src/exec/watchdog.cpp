#include "exec/watchdog.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace cucpu::watchdog {

namespace {

constexpr int64_t kFired = std::numeric_limits<int64_t>::max();

// Made on first use and never destroyed: its thread may still wait on it
// while the process exits.
struct State {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Watch*> watched;  // guarded by mu; a fired one's deadline is kFired
  bool started = false;         // guarded by mu

  void loop() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      int64_t next = kFired;
      for (Watch* w : watched) next = std::min(next, w->deadline_ns);
      if (next == kFired) {
        cv.wait(lock);
        continue;
      }
      const int64_t now = now_ns();
      if (now < next) {
        cv.wait_for(lock, std::chrono::nanoseconds(next - now));
        continue;
      }
      for (Watch* w : watched)
        if (w->deadline_ns <= now) {
          __atomic_store_n(w->stop, 1u, __ATOMIC_RELAXED);
          w->deadline_ns = kFired;
        }
    }
  }
};

State& state() {
  static State* s = new State;
  return *s;
}

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void watch(Watch* w) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.started) {
    s.started = true;
    std::thread([&s] { s.loop(); }).detach();
  }
  s.watched.push_back(w);
  s.cv.notify_one();
}

void unwatch(Watch* w) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = std::find(s.watched.begin(), s.watched.end(), w);
  if (it != s.watched.end()) {
    *it = s.watched.back();
    s.watched.pop_back();
  }
}

}  // namespace cucpu::watchdog
