// Shared by the white-box engine tests: a gate op, and a stream in a
// context of its own.
#pragma once

#include <atomic>
#include <thread>

#include "core/context.h"
#include "core/runtime.h"
#include "core/stream.h"
#include "exec/op.h"

namespace cucpu::test {

// An op that runs on a worker and holds it until opened; `started`, when
// given, is set as it begins to wait.
class GateOp final : public Op {
 public:
  explicit GateOp(std::atomic<bool>* open, std::atomic<bool>* started = nullptr) : open_(open), started_(started) {}
  void execute(int) override {
    if (started_) started_->store(true, std::memory_order_release);
    while (!open_->load(std::memory_order_acquire)) std::this_thread::yield();
  }

 private:
  std::atomic<bool>* open_;
  std::atomic<bool>* started_;
};

// A context and one regular stream in it, both destroyed at scope exit
// (the stream's handle only if `stream` is still set: a test that drops it
// itself clears it).
struct StreamInOwnContext {
  explicit StreamInOwnContext(unsigned flags) {
    ctx = rt().contexts.create(&rt().devices.at(0), 0u, false);
    stream = rt().streams.create(ctx, StreamKind::kRegular, flags, 0);
    ctx->link_stream(stream);
  }
  ~StreamInOwnContext() {
    if (stream) {
      rt().streams.kill(stream);
      stream->drop_handle();
    }
    rt().contexts.kill(ctx);
    rt().contexts.release(ctx);  // waits until its streams are released
  }
  StreamInOwnContext(const StreamInOwnContext&) = delete;
  StreamInOwnContext& operator=(const StreamInOwnContext&) = delete;

  Context* ctx = nullptr;
  Stream* stream = nullptr;
};

}  // namespace cucpu::test
