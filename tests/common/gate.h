// Gate: how the tests hold work back without sleeping. Work that must wait
// (a host function, an engine op's body) calls hold(), which returns once
// the test has called release(). Header-only and free of the project's
// headers, so the standalone conformance suite shares it.
#pragma once

#include <atomic>
#include <thread>

namespace test_support {

struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> entered{false};  // some hold() has started waiting

  void release() { open.store(true, std::memory_order_release); }
  // Waits until the gate is released. Usable as a host function (CUhostFn).
  static void hold(void* gate) {
    auto* g = static_cast<Gate*>(gate);
    g->entered.store(true, std::memory_order_release);
    while (!g->open.load(std::memory_order_acquire)) std::this_thread::yield();
  }
  // Releases the gate. Usable as a host function, so that one stream's work
  // opens what another's waits on.
  static void release_fn(void* gate) { static_cast<Gate*>(gate)->release(); }
  // Waits until some hold() has started.
  void await_entered() const {
    while (!entered.load(std::memory_order_acquire)) std::this_thread::yield();
  }
};

}  // namespace test_support
