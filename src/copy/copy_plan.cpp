#include "copy/copy_plan.h"

#include <cstring>

#include <algorithm>

#include "core/checked_math.h"
#include "core/context.h"
#include "core/stream.h"
#include "exec/ops.h"
#include "exec/scheduler.h"

namespace cucpu {
namespace {

constexpr size_t kParallelThreshold = size_t{1} << 20;  // below this, one op
constexpr size_t kMinPart = size_t{256} << 10;          // no part smaller than this

bool contiguous(const Copy3D& c) {
  return c.src_pitch == c.width && c.dst_pitch == c.width &&
         (c.depth == 1 || (c.src_slice == c.width * c.height && c.dst_slice == c.width * c.height));
}

// The bytes a copy moves. Its span was checked (resolve_copy3d), but the
// layers of a box one row high may overlap (its pitch may be under its
// width), so the product can exceed the span: it saturates rather than
// wraps, and only steers planning.
size_t bytes_of(const Copy3D& c) {
  size_t n;
  return checked_product(&n, c.width, c.height, c.depth) ? n : SIZE_MAX;
}

// Runs a list of pieces; shares ownership of the tasks (and their staging).
class CopyPartOp final : public Op {
 public:
  CopyPartOp(std::shared_ptr<const std::vector<CopyTask>> tasks, std::vector<CopyPiece> pieces)
      : tasks_(std::move(tasks)), pieces_(std::move(pieces)) {}
  void execute(int status) override {
    if (status != CUDA_SUCCESS) return;  // a faulted context runs no more device work
    for (const CopyPiece& p : pieces_) {
      if (!memory_still_valid((*tasks_)[p.task].checks, 2)) {
        stream->ctx->set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
        return;
      }
      run_copy(p.copy);
    }
  }

 private:
  std::shared_ptr<const std::vector<CopyTask>> tasks_;
  std::vector<CopyPiece> pieces_;
};

// One small copy, carried inline (enqueue_copy).
class SingleCopyOp final : public Op {
 public:
  explicit SingleCopyOp(CopyTask task) : task_(std::move(task)) {}
  void execute(int status) override {
    if (status != CUDA_SUCCESS) return;
    if (!memory_still_valid(task_.checks, 2)) {
      stream->ctx->set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
      return;
    }
    run_copy(task_.copy);
  }

 private:
  CopyTask task_;
};

// One small contiguous copy (enqueue_linear_copy): fits with its checks in
// two cache lines beside the op's header.
class LinearCopyOp final : public Op {
 public:
  LinearCopyOp(unsigned char* dst, const unsigned char* src, size_t n, const MemCheck checks[2])
      : dst_(dst), src_(src), n_(n), checks_{checks[0], checks[1]} {}
  void execute(int status) override {
    if (status != CUDA_SUCCESS) return;
    if (!memory_still_valid(checks_, 2)) {
      stream->ctx->set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
      return;
    }
    std::memmove(dst_, src_, n_);  // a copy within one allocation may overlap (undefined on the driver)
  }

 private:
  unsigned char* dst_;
  const unsigned char* src_;
  size_t n_;
  MemCheck checks_[2];
};

}  // namespace

CUresult stage_source(CopyTask& t) {
  Copy3D& c = t.copy;
  size_t n;
  if (!checked_product(&n, c.width, c.height, c.depth)) return CUDA_ERROR_OUT_OF_MEMORY;
  t.staging = std::shared_ptr<unsigned char[]>(new unsigned char[n ? n : 1]);
  Copy3D snap = c;
  snap.dst = t.staging.get();
  snap.dst_pitch = c.width;
  snap.dst_slice = c.width * c.height;
  run_copy(snap);
  c.src = t.staging.get();
  c.src_pitch = c.width;
  c.src_slice = c.width * c.height;
  t.checks[0] = MemCheck{};  // the snapshot is ours
  return CUDA_SUCCESS;
}

std::vector<std::vector<CopyPiece>> plan_copies(const std::vector<CopyTask>& tasks, size_t parts) {
  size_t total = 0;
  for (const auto& t : tasks) total = saturating_add(total, bytes_of(t.copy));
  parts = std::max<size_t>(1, std::min(parts, total / kMinPart));
  const size_t target = std::max<size_t>(1, total / parts + (total % parts != 0));  // rounded up, no wrap

  std::vector<std::vector<CopyPiece>> out(1);
  size_t room = target;
  auto need_room = [&] {
    if (room == 0) {
      out.emplace_back();
      room = target;
    }
  };
  for (size_t i = 0; i < tasks.size(); ++i) {
    Copy3D c = tasks[i].copy;
    if (bytes_of(c) == 0) continue;
    if (contiguous(c)) {  // one long row
      c.width = bytes_of(c);
      c.height = c.depth = 1;
    }
    for (size_t z = 0; z < c.depth; ++z) {
      size_t y = 0;
      while (y < c.height) {
        need_room();
        Copy3D piece = c;
        piece.src = c.src + z * c.src_slice + y * c.src_pitch;
        piece.dst = c.dst + z * c.dst_slice + y * c.dst_pitch;
        piece.depth = 1;
        size_t rows = room / c.width;
        if (rows > 0) {  // whole rows
          piece.height = std::min(rows, c.height - y);
          out.back().push_back({piece, i});
          room -= piece.height * c.width;
          y += piece.height;
          continue;
        }
        piece.height = 1;  // a row larger than the room left: cut it
        for (size_t x = 0; x < c.width;) {
          need_room();
          Copy3D cut = piece;
          cut.src = piece.src + x;
          cut.dst = piece.dst + x;
          cut.width = std::min(room, c.width - x);
          out.back().push_back({cut, i});
          room -= cut.width;
          x += cut.width;
        }
        ++y;
      }
    }
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

std::vector<std::pair<size_t, size_t>> find_dependent_copies(const std::vector<CopyTask>& tasks) {
  struct Span {
    uintptr_t lo, hi;
    size_t task;
    bool write;
  };
  // resolve_copy3d checked that these spans do not wrap; were one to, it
  // would reach the top of memory and so be judged dependent (run in order).
  auto span = [](const unsigned char* base, size_t pitch, size_t slice, const Copy3D& c) {
    auto lo = reinterpret_cast<uintptr_t>(base);
    uintptr_t hi;
    if (!checked_pitched_span(lo, c.width, c.height, c.depth, pitch, slice, &hi)) hi = UINTPTR_MAX;
    return std::make_pair(lo, hi);
  };
  // Sources and destinations are each usually in address order already (a
  // batch walks its buffers): each list is sorted only when it is not, and
  // the two are merged.
  std::vector<Span> reads, writes;
  reads.reserve(tasks.size());
  writes.reserve(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Copy3D& c = tasks[i].copy;
    if (bytes_of(c) == 0) continue;
    auto [slo, shi] = span(c.src, c.src_pitch, c.src_slice, c);
    auto [dlo, dhi] = span(c.dst, c.dst_pitch, c.dst_slice, c);
    reads.push_back({slo, shi, i, false});
    writes.push_back({dlo, dhi, i, true});
  }
  auto by_start = [](const Span& a, const Span& b) { return a.lo < b.lo; };
  if (!std::is_sorted(reads.begin(), reads.end(), by_start)) std::sort(reads.begin(), reads.end(), by_start);
  if (!std::is_sorted(writes.begin(), writes.end(), by_start)) std::sort(writes.begin(), writes.end(), by_start);
  std::vector<Span> spans(reads.size() + writes.size());
  std::merge(reads.begin(), reads.end(), writes.begin(), writes.end(), spans.begin(), by_start);
  std::vector<std::pair<size_t, size_t>> out;
  // Sweep: every span still open when another starts overlaps it.
  std::vector<const Span*> open;
  for (const Span& s : spans) {
    open.erase(std::remove_if(open.begin(), open.end(), [&](const Span* o) { return o->hi <= s.lo; }), open.end());
    for (const Span* o : open)
      if (o->task != s.task && (o->write || s.write))
        out.emplace_back(std::min(o->task, s.task), std::max(o->task, s.task));
    open.push_back(&s);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
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
  std::vector<std::vector<CopyPiece>> plan = plan_copies(*shared, workers);
  std::vector<Op*> parts;
  parts.reserve(plan.size());
  for (auto& p : plan) parts.push_back(new CopyPartOp(shared, std::move(p)));
  Op* join = new MarkerOp();
  OpRef keep = OpRef::share(join);
  s->enqueue_group(parts.data(), parts.size(), join);
  return keep;
}

}  // namespace cucpu
