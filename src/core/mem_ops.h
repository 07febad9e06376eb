// Stream memory operations (cuStreamWaitValue*, cuStreamWriteValue*,
// cuStreamBatchMemOp): one op runs a batch of waits and writes in order.
//
// A wait whose condition does not hold yet must not block a worker, so the
// op defers (Op::defer) and is parked with the value watcher: one thread
// that polls the parked waits, and only while there are any (spinning
// briefly, then sleeping in growing steps up to 100 µs; it sleeps on a
// condition variable when nothing is parked). When a parked op's last wait
// holds, the watcher runs the rest of its batch and completes it
// (Scheduler::complete).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/copy_resolve.h"
#include "exec/op.h"

namespace cucpu {

struct MemOpSpec {
  enum class Kind : uint8_t { kWait32, kWait64, kWrite32, kWrite64, kBarrier };
  Kind kind = Kind::kBarrier;
  unsigned condition = 0;  // waits: CU_STREAM_WAIT_VALUE_GEQ/EQ/AND/NOR
  uintptr_t addr = 0;
  uint64_t value = 0;
  MemCheck check;          // the word's allocation, re-checked before each access
};

// Validates `count` operations (the rules and error codes of driver 580,
// docs/conformance.md) and translates them for MemOpsOp. `ops` may be null
// when count is 0.
CUresult build_mem_op_specs(const CUstreamBatchMemOpParams* ops, unsigned count, std::vector<MemOpSpec>* out);

class MemOpsOp final : public Op {
 public:
  const char* trace_literal() const override { return "stream memory operations"; }
  // `keep`: memory the specs name that must stay mapped while the op lives
  // (an interprocess event's words), if any.
  explicit MemOpsOp(std::vector<MemOpSpec> specs, std::shared_ptr<const void> keep = nullptr)
      : specs_(std::move(specs)), keep_(std::move(keep)) {}
  // Waits read their word, writes write it, both as atomics.
  void accesses(std::vector<MemAccess>& out) const override {
    for (const MemOpSpec& m : specs_) {
      if (m.kind == MemOpSpec::Kind::kBarrier) continue;
      const bool write = m.kind == MemOpSpec::Kind::kWrite32 || m.kind == MemOpSpec::Kind::kWrite64;
      const bool wide = m.kind == MemOpSpec::Kind::kWait64 || m.kind == MemOpSpec::Kind::kWrite64;
      out.push_back({m.addr, m.addr + (wide ? 8u : 4u), write, true});
    }
  }
  void execute(int status) override;
  void park() override;
  // Runs the batch from where it stopped. True when it is through (or gave
  // up on freed memory); false while a wait's condition does not hold.
  // Called by the thread that owns the op: its runner, then the watcher.
  bool resume();

 private:
  std::vector<MemOpSpec> specs_;
  std::shared_ptr<const void> keep_;
  size_t next_ = 0;  // the first spec not yet done
};

}  // namespace cucpu
