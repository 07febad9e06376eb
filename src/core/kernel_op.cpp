#include "core/kernel_op.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/allocation.h"
#include "core/device_arch.h"
#include "core/check.h"
#include "core/context.h"
#include "core/device_launch.h"
#include "core/runtime.h"
#include "core/stream.h"
#include "devrt/block_runner.h"
#include "exec/scheduler.h"
#include "exec/trace.h"
#include "exec/watchdog.h"
#include "symbols/names.h"

namespace cucpu {

namespace {

// How long a part runs before it hands the rest of its launch to a fresh
// part at the back of the scheduler's queue (set_kernel_slice). Relaxed: a
// part reads it once, and any value read is a valid slice.
std::atomic<int64_t> g_slice_ns{2'000'000};

const char* fault_name(devrt::FaultKind k) {
  switch (k) {
    case devrt::FaultKind::kIllegalAddress: return "illegal address";
    case devrt::FaultKind::kMisalignedAddress: return "misaligned address";
    case devrt::FaultKind::kTrap: return "trap";
    case devrt::FaultKind::kAssert: return "assertion failed";
    case devrt::FaultKind::kIllegalInstruction: return "illegal instruction";
    case devrt::FaultKind::kBarrierDeadlock: return "barrier deadlock";
    case devrt::FaultKind::kOutOfMemory: return "out of memory for the block";
    case devrt::FaultKind::kTimedOut: return "launch timed out";
    default: return "fault";
  }
}

}  // namespace

CUresult fault_result(devrt::FaultKind k) {
  switch (k) {
    case devrt::FaultKind::kNone: return CUDA_SUCCESS;
    case devrt::FaultKind::kIllegalAddress: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case devrt::FaultKind::kMisalignedAddress: return CUDA_ERROR_MISALIGNED_ADDRESS;
    case devrt::FaultKind::kTrap: return CUDA_ERROR_LAUNCH_FAILED;
    case devrt::FaultKind::kAssert: return CUDA_ERROR_ASSERT;
    case devrt::FaultKind::kIllegalInstruction: return CUDA_ERROR_ILLEGAL_INSTRUCTION;
    case devrt::FaultKind::kBarrierDeadlock: return CUDA_ERROR_LAUNCH_FAILED;
    case devrt::FaultKind::kOutOfMemory: return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    case devrt::FaultKind::kTimedOut: return CUDA_ERROR_LAUNCH_TIMEOUT;
  }
  return CUDA_ERROR_LAUNCH_FAILED;
}

void report_fault(const Function& f, const devrt::LaunchConfig& cfg, const devrt::Fault& fault) {
  f.module->ctx->set_device_fault(fault_result(fault.kind));
  if (fault.kind == devrt::FaultKind::kTimedOut) {
    // Asked for by the user (CUCPU_KERNEL_TIMEOUT): said whether or not logging is on.
    char line[48] = "";
    if (fault.address) std::snprintf(line, sizeof line, " at PTX line %llu", static_cast<unsigned long long>(fault.address));
    std::fprintf(stderr,
                 "cucpu: kernel %s ran longer than CUCPU_KERNEL_TIMEOUT (%.3g s) and was stopped%s in block (%u,%u,%u) "
                 "thread (%u,%u,%u) of grid (%u,%u,%u) x (%u,%u,%u); its context fails with CUDA_ERROR_LAUNCH_TIMEOUT\n",
                 f.name().c_str(), static_cast<double>(kernel_timeout_ns()) / 1e9, line, fault.block.x, fault.block.y,
                 fault.block.z, fault.thread.x, fault.thread.y, fault.thread.z, cfg.grid.x, cfg.grid.y, cfg.grid.z,
                 cfg.block.x, cfg.block.y, cfg.block.z);
    return;
  }
  // A failed device assertion has printed its message (devrt/runtime.cpp).
  if (!log_enabled()) return;
  char where[256] = "";
  if (fault.kind == devrt::FaultKind::kMisalignedAddress && !fault.address)
    std::snprintf(where, sizeof where, "; `cucpu check` names the access and its PTX line");
  if (fault.address) {
    auto a = Registry::instance().nearest(static_cast<uintptr_t>(fault.address));
    const uintptr_t p = static_cast<uintptr_t>(fault.address);
    if (!a) {
      std::snprintf(where, sizeof where, "; no allocation is registered");
    } else if (a->contains(p, 1)) {
      std::snprintf(where, sizeof where, "; inside %s [0x%zx, +%zu) at offset %zu", memory_kind_name(a->kind),
                    static_cast<size_t>(a->base), a->size, static_cast<size_t>(p - a->base));
    } else if (p < a->base) {
      std::snprintf(where, sizeof where, "; %zu bytes before %s [0x%zx, +%zu)", static_cast<size_t>(a->base - p),
                    memory_kind_name(a->kind), static_cast<size_t>(a->base), a->size);
    } else {
      std::snprintf(where, sizeof where, "; %zu bytes past the end of %s [0x%zx, +%zu)",
                    static_cast<size_t>(p - a->base - a->size), memory_kind_name(a->kind), static_cast<size_t>(a->base),
                    a->size);
    }
  }
  log_line("kernel %s: %s in block (%u,%u,%u) thread (%u,%u,%u) of grid (%u,%u,%u) x (%u,%u,%u), address 0x%llx%s%s%s",
           f.name().c_str(), fault_name(fault.kind), fault.block.x, fault.block.y, fault.block.z, fault.thread.x,
           fault.thread.y, fault.thread.z, cfg.grid.x, cfg.grid.y, cfg.grid.z, cfg.block.x, cfg.block.y, cfg.block.z,
           static_cast<unsigned long long>(fault.address), where, fault.message.empty() ? "" : ": ",
           fault.message.c_str());
}

CUresult check_launch_shape(const Function& f, const ptx::Kernel& k, const LaunchShape& s) {
  using namespace limits;
  const devrt::Dim3& g = s.grid;
  const devrt::Dim3& b = s.block;
  if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z) return CUDA_ERROR_INVALID_VALUE;
  if (g.x > kMaxGridX || g.y > kMaxGridY || g.z > kMaxGridZ) return CUDA_ERROR_INVALID_VALUE;
  if (b.x > kMaxBlockX || b.y > kMaxBlockY || b.z > kMaxBlockZ) return CUDA_ERROR_INVALID_VALUE;
  const ptx::KernelInfo& info = k.info();
  const uint64_t tpb = s.threads_per_block();
  if (tpb > kMaxThreadsPerBlock || tpb > static_cast<uint64_t>(std::max(info.max_threads_per_block, 0)))
    return CUDA_ERROR_INVALID_VALUE;
  const uint32_t* req = k.entry().reqntid;
  if (req[0] && (b.x != req[0] || b.y != std::max(req[1], 1u) || b.z != std::max(req[2], 1u)))
    return CUDA_ERROR_INVALID_VALUE;
  int max_dyn = f.max_dyn_shared.load(std::memory_order_relaxed);
  if (max_dyn < 0) max_dyn = std::max(0, kDefaultSharedPerBlock - static_cast<int>(info.static_shared_bytes));
  if (s.shared > static_cast<uint32_t>(max_dyn) ||
      uint64_t{s.shared} + info.static_shared_bytes > static_cast<uint64_t>(device_arch().optin_shared_per_block))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult param_source(const ptx::EntryDesc& e, void** kp, void** extra, ParamSource* out) {
  if (kp && extra) return CUDA_ERROR_INVALID_VALUE;
  if (extra) {
    const void* buf = nullptr;
    const size_t* size = nullptr;
    bool have_size = false;
    // A list longer than this is not a list (a missing terminator).
    for (size_t i = 0;; i += 2) {
      if (i >= 64) return CUDA_ERROR_INVALID_VALUE;
      void* key = extra[i];
      if (key == CU_LAUNCH_PARAM_END) break;
      if (key == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        buf = extra[i + 1];
      } else if (key == CU_LAUNCH_PARAM_BUFFER_SIZE) {
        size = static_cast<const size_t*>(extra[i + 1]);
        if (!size) return CUDA_ERROR_INVALID_VALUE;
        have_size = true;
      } else {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    if (have_size && *size != 0 && !buf) return CUDA_ERROR_INVALID_VALUE;
    if (!have_size) buf = nullptr;  // a pointer without a size has no effect
    // Too small: driver 580 accepts it and the kernel reads past the buffer;
    // cucpu refuses it. Too large: driver 580 says LAUNCH_OUT_OF_RESOURCES.
    if (e.param_bytes > 0 && (!buf || *size < e.param_bytes)) return CUDA_ERROR_INVALID_VALUE;
    if (have_size && *size > e.param_bytes) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    out->buffer = buf;
    out->args = nullptr;
    return CUDA_SUCCESS;
  }
  if (!e.params.empty()) {
    if (!kp) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < e.params.size(); ++i)
      if (!kp[i]) return CUDA_ERROR_INVALID_VALUE;
  }
  out->args = kp;
  out->buffer = nullptr;
  return CUDA_SUCCESS;
}

void pack_params(const ptx::EntryDesc& e, const ParamSource& src, void* dst) {
  if (e.param_bytes == 0) return;
  if (src.buffer) {
    std::memcpy(dst, src.buffer, e.param_bytes);
    return;
  }
  auto* out = static_cast<unsigned char*>(dst);
  for (size_t i = 0; i < e.params.size(); ++i) std::memcpy(out + e.params[i].offset, src.args[i], e.params[i].size);
}

// With one worker too: the parts' time slices keep a long kernel from
// holding the worker.
bool launch_in_parallel(const LaunchShape& s) {
  const uint64_t blocks = s.blocks();
  return blocks > 1 && blocks * s.threads_per_block() > kSingleOpThreads;
}

bool run_kernel_inline(const Function& f, const devrt::LaunchConfig& cfg) {
  if (f.kernel()->info().device_runtime && !cfg.device_runtime) [[unlikely]] {
    // A grid that may launch grids: they run once its last block has.
    DeviceLaunches children(&f, 1);
    devrt::LaunchConfig with = cfg;
    with.device_runtime = &children;
    if (!run_kernel_inline(f, with)) return false;
    children.run_pending();
    return true;
  }
  const uint64_t total = uint64_t{cfg.grid.x} * cfg.grid.y * cfg.grid.z;
  devrt::Fault fault;
  if (!watchdog::on()) [[likely]] {
    fault = f.kernel()->run_blocks(cfg, 0, total);
  } else {
    uint32_t stop = 0;
    devrt::LaunchConfig watched = cfg;
    watched.stop = &stop;
    watchdog::Scope scope(&stop, watchdog::now_ns() + kernel_timeout_ns());
    fault = f.kernel()->run_blocks(watched, 0, total);
  }
  if (!fault) return true;
  report_fault(f, cfg, fault);
  return false;
}

namespace {

devrt::LaunchConfig config_of(const Function& f, const LaunchShape& s) {
  devrt::LaunchConfig cfg;
  cfg.grid = s.grid;
  cfg.block = s.block;
  cfg.dynamic_shared_bytes = s.shared;
  cfg.globals = f.globals();
  return cfg;
}

// A launch that runs every block in one op. Laid out so that a launch with
// up to 16 bytes of parameters writes only the first two cache lines of
// its OpPool block (blocks come back from the workers' cores: each line
// the producer writes is a transfer); larger parameters fill the rest of
// "name <<<(grid), (block)>>>" for the trace.
std::string shape_text(const devrt::Dim3& g, const devrt::Dim3& b) {
  char text[96];
  std::snprintf(text, sizeof text, " <<<(%u,%u,%u), (%u,%u,%u)>>>", g.x, g.y, g.z, b.x, b.y, b.z);
  return text;
}
// The trace's key of a kernel op's name (trace::name_key): its kind, function and shape.
uint64_t shape_key(uint64_t kind, const Function* f, const devrt::Dim3& g, const devrt::Dim3& b) {
  return trace::name_key({kind, reinterpret_cast<uintptr_t>(f), g.x, g.y, g.z, b.x, b.y, b.z});
}

// the block, and beyond that live on the heap.
class KernelOp final : public Op {
 public:
  KernelOp(Function* f, const LaunchShape& s) : f_(f), grid_(s.grid), block_(s.block), shared_(s.shared) {
    run_on_sms();
  }
  ~KernelOp() override {
    if (param_bytes_ > kInline) ::operator delete[](heap(), std::align_val_t{16});
  }
  void* params(uint32_t n) {
    param_bytes_ = n;
    if (n <= kInline) return params_;
    void* p = ::operator new[](n, std::align_val_t{16});
    std::memcpy(params_, &p, sizeof p);  // the inline room holds the pointer instead
    return p;
  }
  const char* trace_literal() const override { return nullptr; }
  std::string trace_name() const override { return symbols::readable_name(f_->name()) + shape_text(grid_, block_); }
  uint64_t trace_name_key() const override { return shape_key(1, f_, grid_, block_); }
  bool accesses_when_run() const override { return true; }
  void execute(int status) override {
    check::KernelRun checked(this, f_->name(), true);
    if (status != CUDA_SUCCESS) return;
    devrt::LaunchConfig cfg;
    cfg.grid = grid_;
    cfg.block = block_;
    cfg.dynamic_shared_bytes = shared_;
    cfg.params = param_bytes_ > kInline ? heap() : static_cast<const void*>(params_);
    cfg.globals = f_->globals();
    run_kernel_inline(*f_, cfg);
  }

 private:
  static constexpr uint32_t kInline = 128;
  void* heap() const {
    void* p;
    std::memcpy(&p, params_, sizeof p);
    return p;
  }
  Function* f_;
  devrt::Dim3 grid_, block_;
  uint32_t shared_;
  uint32_t param_bytes_ = 0;
  alignas(16) unsigned char params_[kInline];
};
static_assert(sizeof(KernelOp) <= OpPool::kBlockSize);

// The end of a parallel launch, and the state its parts share.
class KernelJoinOp final : public Op {
 public:
  // `workers`: the pool's, which runs the launch.
  KernelJoinOp(Function* f, const devrt::LaunchConfig& cfg, size_t workers) : f(f), cfg(cfg) {
    total_ = uint64_t{cfg.grid.x} * cfg.grid.y * cfg.grid.z;
    const size_t parts = std::min<uint64_t>(workers, total_);
    chunk_ = std::clamp<uint64_t>(total_ / (parts * 16), 1, 1024);
    this->cfg.stop = &timeout_stop_;
    this->cfg.leave_parked = true;  // a part resumes its parked blocks once no block is left to claim
    if (f->kernel()->info().device_runtime) [[unlikely]] {
      device_ = std::make_unique<DeviceLaunches>(f, 1);
      this->cfg.device_runtime = device_.get();
    }
  }
  // What `keep` holds (a graph's plan) is let go once every part is done;
  // then the grids the launch's threads launched run (device_launch.h).
  void execute(int status) override {
    keep_.reset();
    if (device_ && status == CUDA_SUCCESS && !faulted_.load(std::memory_order_relaxed)) [[unlikely]]
      device_->run_pending();
    if (check::on()) [[unlikely]] check::ran(this, {}, true);
  }
  bool accesses_when_run() const override { return true; }
  bool trivial() const override { return !device_; }

  void* own_params(size_t n) {
    void* p = store_.reserve(n);
    cfg.params = p;
    return p;
  }
  void keep(std::shared_ptr<const void> k) { keep_ = std::move(k); }
  uint64_t total() const { return total_; }

  // Claims the next chunk [*first, *last); false when none is left or the
  // launch stopped. Relaxed: the counter only hands out disjoint ranges;
  // the parts' results reach later work through the join's dependency count.
  bool claim(uint64_t* first, uint64_t* last) {
    if (stop_.load(std::memory_order_relaxed)) return false;
    const uint64_t b = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (b >= total_) return false;
    *first = b;
    *last = std::min(b + chunk_, total_);
    return true;
  }
  bool more() const {
    return !stop_.load(std::memory_order_relaxed) && next_.load(std::memory_order_relaxed) < total_;
  }
  void stop() { stop_.store(true, std::memory_order_relaxed); }
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }
  // The watchdog's word for the launch, and its deadline: the limit from
  // when its first part began (relaxed: any part's start is as good).
  uint32_t* timeout_stop() { return &timeout_stop_; }
  int64_t deadline() {
    int64_t d = deadline_.load(std::memory_order_relaxed);
    if (d) return d;
    const int64_t mine = watchdog::now_ns() + kernel_timeout_ns();
    return deadline_.compare_exchange_strong(d, mine, std::memory_order_relaxed) ? mine : d;
  }
  void fault(const devrt::Fault& ft) {
    stop();
    if (!faulted_.exchange(true, std::memory_order_relaxed)) report_fault(*f, cfg, ft);
  }

  Function* const f;
  devrt::LaunchConfig cfg;

 private:
  std::atomic<uint64_t> next_{0};
  uint64_t total_ = 0;
  uint64_t chunk_ = 1;
  std::atomic<bool> stop_{false};
  std::atomic<bool> faulted_{false};
  uint32_t timeout_stop_ = 0;  // watchdog::Watch::stop
  std::atomic<int64_t> deadline_{0};
  std::shared_ptr<const void> keep_;
  ParamStorage<32> store_;
  std::unique_ptr<DeviceLaunches> device_;  // when the kernel's program calls the device runtime
};

// One worker's share of a parallel launch. The join outlives it: each part
// is one of the join's dependencies until it finishes.
class KernelPartOp final : public Op {
 public:
  explicit KernelPartOp(KernelJoinOp* join) : join_(join) { run_on_sms(); }
  const char* trace_literal() const override { return nullptr; }
  std::string trace_name() const override {
    return symbols::readable_name(join_->f->name()) + shape_text(join_->cfg.grid, join_->cfg.block) + " part";
  }
  uint64_t trace_name_key() const override { return shape_key(2, join_->f, join_->cfg.grid, join_->cfg.block); }
  void execute(int status) override {
    if (status != CUDA_SUCCESS) {
      join_->stop();
      return;
    }
    const ptx::Kernel* k = join_->f->kernel();
    check::KernelRun checked(join_, join_->f->name(), false);
    std::optional<watchdog::Scope> watched;
    if (watchdog::on()) [[unlikely]] watched.emplace(join_->timeout_stop(), join_->deadline());
    const auto start = std::chrono::steady_clock::now();
    const std::chrono::nanoseconds slice(g_slice_ns.load(std::memory_order_relaxed));
    // Blocks first; then rounds of the blocks that parked here waiting for
    // others (which stay with this thread, so the part ends only without them).
    for (;;) {
      uint64_t first = 0, last = 0;
      if (!join_->claim(&first, &last)) {
        if (!devrt::parked_blocks()) return;
        if (join_->stopped()) return devrt::drop_parked_blocks();
      }
      devrt::Fault ft = k->run_blocks(join_->cfg, first, last);
      if (ft) {
        join_->fault(ft);
        return;
      }
      if (std::chrono::steady_clock::now() - start > slice && join_->more() && !devrt::parked_blocks()) {
        continue_later();
        return;
      }
    }
  }

 private:
  // Queues a fresh part for the rest. It becomes a dependency of the join
  // while this part still is one, so the join cannot complete in between.
  void continue_later() {
    auto* next = new KernelPartOp(join_);
    next->timeline = timeline;
    next->priority = priority;
    next->add_successor(join_);
    if (next->release_dependency()) Scheduler::instance().submit(next);
  }
  KernelJoinOp* join_;
};

}  // namespace

std::chrono::nanoseconds set_kernel_slice(std::chrono::nanoseconds slice) {
  return std::chrono::nanoseconds(g_slice_ns.exchange(slice.count(), std::memory_order_relaxed));
}

KernelGroup make_kernel_group(Function* f, const devrt::LaunchConfig& cfg, std::shared_ptr<const void> keep) {
  auto* join = new KernelJoinOp(f, cfg, Scheduler::instance().worker_count());
  join->keep(std::move(keep));
  KernelGroup g;
  g.join = join;
  const size_t n = std::min<uint64_t>(Scheduler::instance().worker_count(), join->total());
  g.parts.reserve(n);
  for (size_t i = 0; i < n; ++i) g.parts.push_back(new KernelPartOp(join));
  return g;
}

namespace {

// A cooperative launch: every block resident at once, as a grid-wide
// barrier needs, each on a thread of its own (this worker runs block 0),
// all joined before the op completes. The zeroed workspace is the grid
// barrier's (nvcc's grid.sync()). If a block faults, the others may wait
// at that barrier forever: the joining thread then flips the barrier's
// phase bit until every block has stopped (the context is failed anyway).
class CooperativeKernelOp final : public Op {
 public:
  CooperativeKernelOp(Function* f, const devrt::LaunchConfig& cfg) : f_(f), cfg_(cfg) { run_on_sms(); }
  const char* trace_literal() const override { return nullptr; }
  std::string trace_name() const override {
    return symbols::readable_name(f_->name()) + shape_text(cfg_.grid, cfg_.block) + " cooperative";
  }
  uint64_t trace_name_key() const override { return shape_key(3, f_, cfg_.grid, cfg_.block); }
  bool accesses_when_run() const override { return true; }
  void* own_params(size_t n) {
    params_.assign((n + 7) / 8, 0);
    cfg_.params = params_.data();
    return params_.data();
  }
  void execute(int status) override {
    if (status != CUDA_SUCCESS) return;
    std::vector<uint64_t> workspace(8, 0);
    cfg_.grid_workspace = workspace.data();
    std::optional<DeviceLaunches> children;
    if (f_->kernel()->info().device_runtime) [[unlikely]] cfg_.device_runtime = &children.emplace(f_, 1);
    cfg_.stop = &timeout_stop_;
    watchdog::Scope watched(&timeout_stop_, watchdog::now_ns() + kernel_timeout_ns());
    const ptx::Kernel* k = f_->kernel();
    const uint64_t total = uint64_t{cfg_.grid.x} * cfg_.grid.y * cfg_.grid.z;
    std::atomic<bool> faulted{false};
    std::atomic<uint64_t> running{total};
    std::mutex mu;
    devrt::Fault first;
    auto run = [&](uint64_t b) {
      check::KernelRun checked(this, f_->name(), false);
      devrt::Fault ft = k->run_blocks(cfg_, b, b + 1);
      if (ft && !faulted.exchange(true)) {
        std::lock_guard<std::mutex> g(mu);
        first = ft;
      }
      running.fetch_sub(1, std::memory_order_release);
    };
    std::vector<std::thread> threads;
    threads.reserve(total - 1);
    for (uint64_t b = 1; b < total; ++b) threads.emplace_back(run, b);
    run(0);
    while (running.load(std::memory_order_acquire)) {
      if (faulted.load()) {
        auto* phase = reinterpret_cast<std::atomic<uint32_t>*>(reinterpret_cast<uint32_t*>(workspace.data()) + 1);
        phase->fetch_add(0x80000000u);
      }
      std::this_thread::yield();
    }
    for (std::thread& t : threads) t.join();
    if (check::on()) [[unlikely]] check::ran(this, {}, true);
    if (faulted.load()) report_fault(*f_, cfg_, first);
    else if (children) children->run_pending();
  }

 private:
  Function* f_;
  devrt::LaunchConfig cfg_;
  uint32_t timeout_stop_ = 0;  // watchdog::Watch::stop
  std::vector<uint64_t> params_;
};
static_assert(sizeof(CooperativeKernelOp) <= OpPool::kBlockSize);

}  // namespace

bool cooperative_fits(const Function& f, const ptx::Kernel& k, const LaunchShape& shape) {
  const int per_sm = blocks_per_sm(k.info(), f.settings(), static_cast<int>(shape.threads_per_block()), shape.shared);
  return shape.blocks() <= uint64_t(per_sm) * Scheduler::instance().worker_count();
}

Op* make_cooperative_op(Function* f, const devrt::LaunchConfig& cfg) {
  auto* op = new CooperativeKernelOp(f, cfg);
  const size_t n = f->entry().param_bytes;
  std::memcpy(op->own_params(n), cfg.params, n);
  return op;
}

void enqueue_cooperative_kernel(Stream* s, Function* f, const LaunchShape& shape, const ParamSource& src) {
  auto* op = new CooperativeKernelOp(f, config_of(*f, shape));
  pack_params(f->entry(), src, op->own_params(f->entry().param_bytes));
  s->enqueue(op);
}

void enqueue_kernel(Stream* s, Function* f, const LaunchShape& shape, const ParamSource& src) {
  const ptx::EntryDesc& e = f->entry();
  if (!launch_in_parallel(shape)) {
    auto* op = new KernelOp(f, shape);
    pack_params(e, src, op->params(e.param_bytes));
    s->enqueue(op);
    return;
  }
  auto* join = new KernelJoinOp(f, config_of(*f, shape), s->pool->worker_count());
  pack_params(e, src, join->own_params(e.param_bytes));
  // One part per worker of the pool the launch runs on (a green context's
  // partition, or the shared pool).
  const size_t n = std::min<uint64_t>(s->pool->worker_count(), join->total());
  Op* parts[64];
  std::vector<Op*> many;
  Op** list = parts;
  if (n > 64) {
    many.resize(n);
    list = many.data();
  }
  for (size_t i = 0; i < n; ++i) list[i] = new KernelPartOp(join);
  s->enqueue_group(list, n, join);
}

}  // namespace cucpu
