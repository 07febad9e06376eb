#include "core/copy_ops.h"

#include <algorithm>
#include <cstring>

#include "base/checked_math.h"
#include "core/check.h"
#include "core/context.h"
#include "core/ops.h"
#include "core/stream.h"
#include "exec/scheduler.h"
#include "exec/trace.h"

namespace cucpu {
namespace {

constexpr size_t kParallelThreshold = size_t{1} << 20;  // below this, one op

// Runs a list of pieces; shares ownership of the tasks (and their staging).
class CopyPartOp final : public Op {
 public:
  const char* trace_literal() const override { return nullptr; }
  std::string trace_name() const override { return "copy (" + std::to_string(pieces_.size()) + " pieces)"; }
  uint64_t trace_name_key() const override { return trace::name_key({11, pieces_.size()}); }
  CopyPartOp(std::shared_ptr<const std::vector<CopyTask>> tasks, std::vector<CopyPiece> pieces)
      : tasks_(std::move(tasks)), pieces_(std::move(pieces)) {}
  void accesses(std::vector<MemAccess>& out) const override {
    for (const CopyPiece& p : pieces_) {
      const size_t from = out.size();
      check::copy_accesses(p.copy, out);
      if (tasks_->size() > 1)  // a batch: its copies run in no set order
        for (size_t i = from; i < out.size(); ++i) out[i].part = static_cast<uint32_t>(p.task) + 1;
    }
  }
  void execute(int status) override {
    if (status != CUDA_SUCCESS) return;  // a faulted context runs no more device work
    for (const CopyPiece& p : pieces_) {
      if (!run_on_live_memory((*tasks_)[p.task].checks, 2, [&p] { run_copy(p.copy); })) {
        stream_of(this)->ctx->set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
        return;
      }
    }
  }

 private:
  std::shared_ptr<const std::vector<CopyTask>> tasks_;
  std::vector<CopyPiece> pieces_;
};

// One small copy, carried inline (enqueue_copy).
class SingleCopyOp final : public Op {
 public:
  const char* trace_literal() const override { return nullptr; }
  std::string trace_name() const override { return "copy " + std::to_string(bytes_of(task_.copy)) + " B"; }
  uint64_t trace_name_key() const override { return trace::name_key({10, bytes_of(task_.copy)}); }
  explicit SingleCopyOp(CopyTask task) : task_(std::move(task)) {}
  void accesses(std::vector<MemAccess>& out) const override { check::copy_accesses(task_.copy, out); }
  void execute(int status) override {
    if (status != CUDA_SUCCESS) return;
    if (!run_on_live_memory(task_.checks, 2, [this] { run_copy(task_.copy); }))
      stream_of(this)->ctx->set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
  }

 private:
  CopyTask task_;
};

// One small contiguous copy (enqueue_linear_copy). Two cache lines with
// the op's header: of the checks it keeps what the ranges do not already
// say, and the older of their removals() counts (check_device_ranges gives
// both one; the older is never wrong: a count still current means nothing
// was freed since either check).
class LinearCopyOp final : public Op {
 public:
  const char* trace_literal() const override { return nullptr; }
  std::string trace_name() const override { return "copy " + std::to_string(n_) + " B"; }
  uint64_t trace_name_key() const override { return trace::name_key({10, n_}); }
  LinearCopyOp(unsigned char* dst, const unsigned char* src, size_t n, const MemCheck checks[2])
      : dst_(dst), src_(src), n_(n), src_id_(checks[0].alloc_id), dst_id_(checks[1].alloc_id),
        removals_(std::min(checks[0].removals, checks[1].removals)) {}
  void accesses(std::vector<MemAccess>& out) const override {
    const auto s = reinterpret_cast<uintptr_t>(src_), d = reinterpret_cast<uintptr_t>(dst_);
    out.push_back({s, s + n_, false, false});
    out.push_back({d, d + n_, true, false});
  }
  void execute(int status) override {
    if (status != CUDA_SUCCESS) return;
    const MemCheck checks[2] = {{reinterpret_cast<uintptr_t>(src_), n_, src_id_, removals_},
                                {reinterpret_cast<uintptr_t>(dst_), n_, dst_id_, removals_}};
    // A copy within one allocation may overlap (undefined on the driver).
    if (!run_on_live_memory(checks, 2, [this] { std::memmove(dst_, src_, n_); }))
      stream_of(this)->ctx->set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
  }

 private:
  unsigned char* dst_;
  const unsigned char* src_;
  size_t n_;
  uint64_t src_id_, dst_id_;
  uint64_t removals_;
};
static_assert(sizeof(LinearCopyOp) <= 128, "two cache lines");

}  // namespace

CUresult stage_source(CopyTask& t) {
  Copy3D& c = t.copy;
  size_t n;
  if (!checked_product(&n, c.width, c.height, c.depth)) return CUDA_ERROR_OUT_OF_MEMORY;
  t.staging = std::shared_ptr<unsigned char[]>(new unsigned char[n ? n : 1]);
  unsigned char* const out = t.staging.get();
  // Read during the call: memory another thread frees meanwhile is gone.
  if (!run_on_live_memory(t.checks, 1, [&c, out] { pack_source(c, out); })) return CUDA_ERROR_INVALID_VALUE;
  t.checks[0] = MemCheck{};  // the snapshot is ours
  return CUDA_SUCCESS;
}

OpRef enqueue_copy(Stream* s, CopyTask task, bool want_done) {
  if (bytes_of(task.copy) >= kParallelThreshold && Scheduler::instance().worker_count() > 1) {
    std::vector<CopyTask> one;
    one.push_back(std::move(task));
    return enqueue_copies(s, std::move(one));
  }
  Op* op = new SingleCopyOp(std::move(task));
  OpRef done = want_done ? OpRef::share(op) : OpRef();
  s->enqueue(op);
  return done;
}

void enqueue_linear_copy(Stream* s, unsigned char* dst, const unsigned char* src, size_t n, const MemCheck checks[2]) {
  if (n >= kParallelThreshold && Scheduler::instance().worker_count() > 1) {
    CopyTask t;
    t.copy.src = src;
    t.copy.dst = dst;
    t.copy.src_pitch = t.copy.dst_pitch = t.copy.src_slice = t.copy.dst_slice = n;
    t.copy.width = n;
    t.checks[0] = checks[0];
    t.checks[1] = checks[1];
    enqueue_copy(s, std::move(t), false);
    return;
  }
  s->enqueue(new LinearCopyOp(dst, src, n, checks));
}

OpRef enqueue_copies(Stream* s, std::vector<CopyTask> tasks, bool in_order) {
  size_t total = 0;
  for (const auto& t : tasks) total = saturating_add(total, bytes_of(t.copy));
  const size_t workers = Scheduler::instance().worker_count();
  auto shared = std::make_shared<const std::vector<CopyTask>>(std::move(tasks));
  if (in_order || total < kParallelThreshold || workers == 1) {
    std::vector<CopyPiece> all;
    all.reserve(shared->size());
    for (size_t i = 0; i < shared->size(); ++i) all.push_back({(*shared)[i].copy, i});
    Op* op = new CopyPartOp(shared, std::move(all));
    OpRef keep = OpRef::share(op);
    s->enqueue(op);
    return keep;
  }
  std::vector<std::vector<CopyPiece>> plan = plan_copies(copy_list(*shared), workers);
  std::vector<Op*> parts;
  parts.reserve(plan.size());
  for (auto& p : plan) parts.push_back(new CopyPartOp(shared, std::move(p)));
  Op* join = new MarkerOp();
  OpRef keep = OpRef::share(join);
  s->enqueue_group(parts.data(), parts.size(), join);
  return keep;
}

}  // namespace cucpu
