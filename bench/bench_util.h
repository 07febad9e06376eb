// Shared by the benchmark files: abort on a failed call, and one current
// context (the device's primary) for every benchmark.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace bench {

inline void check(CUresult r) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "CUDA call failed: %d\n", r);
    std::abort();
  }
}

// Initializes once per process; every benchmark thread makes the context current.
inline void use_primary_context() {
  static CUcontext ctx = [] {
    check(cuInit(0));
    CUcontext c;
    check(cuDevicePrimaryCtxRetain(&c, 0));
    return c;
  }();
  check(cuCtxSetCurrent(ctx));
}

// Holds a stream with a host function spinning on a flag until release():
// ops enqueued meanwhile only queue up, so a benchmark times the enqueuing
// thread's own work, apart from what the stream's runner does at the same
// time on another core.
class StreamHold {
 public:
  explicit StreamHold(CUstream s) { check(cuLaunchHostFunc(s, spin, &open_)); }
  void release() { open_.store(true, std::memory_order_release); }

 private:
  static void CUDA_CB spin(void* p) {
    while (!static_cast<std::atomic<bool>*>(p)->load(std::memory_order_acquire)) {
    }
  }
  std::atomic<bool> open_{false};
};

// Times enqueue() with the stream held (StreamHold): every 1024 calls the
// hold is released and the stream drained, outside the timing.
template <class State, class Enqueue>
void run_held(State& st, CUstream s, Enqueue&& enqueue) {
  int n = 0;
  auto* hold = new StreamHold(s);
  for (auto _ : st) {
    enqueue();
    if (++n % 1024 == 0) {
      st.PauseTiming();
      hold->release();
      check(cuStreamSynchronize(s));
      delete hold;
      hold = new StreamHold(s);
      st.ResumeTiming();
    }
  }
  hold->release();
  check(cuStreamSynchronize(s));
  delete hold;
}

}  // namespace bench
