// Shared by the white-box engine tests: a gate op, and a stream in a
// context of its own.
#pragma once

#include <atomic>
#include <thread>

#include "core/context.h"
#include "core/runtime.h"
#include "core/stream.h"
#include "exec/op.h"
#include "../common/gate.h"

namespace cucpu::test {

// An op that runs on a worker and holds it until its gate is released.
class GateOp final : public Op {
 public:
  explicit GateOp(test_support::Gate* gate) : gate_(gate) {}
  void execute(int) override { test_support::Gate::hold(gate_); }

 private:
  test_support::Gate* gate_;
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
