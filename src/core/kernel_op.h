// Kernel launches as stream work.
//
// A launch of a few threads in all is one op that runs every block on the
// worker that picks it up. A larger one is a group (Stream::enqueue_group):
// one part per worker to start with, which claim chunks of blocks from a
// counter in the join op, and a join that completes the launch. A part
// runs for at most a time slice; if blocks are left then, it hands a fresh
// part (its continuation) to the scheduler's queue and finishes, so host
// functions and other streams' work queued meanwhile run between the
// slices of a long kernel.
//
// Faults: the first block that faults stops the launch (no part claims
// further chunks), sets its context's sticky error and, when CUCPU_LOG is
// set, logs the kernel, block, thread, address and nearest allocation. An
// op that starts with a sticky error already set runs nothing.
//
// Lifetime: the ops of a launch hold no reference to the function's module
// (a reference count written by the caller and by a worker for every launch
// would cost a cache-line transfer each). Instead an unloaded module lives
// until the work its context's streams held at the unload is done
// (Module::unload), which includes every launch of its functions on them;
// launches in graphs hold references through their nodes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "cuda.h"
#include "core/module.h"
#include "exec/op.h"
#include "ptx/program.h"

namespace cucpu {

class Stream;
class Context;

struct LaunchShape {
  devrt::Dim3 grid, block;
  uint32_t shared = 0;  // dynamic shared bytes
  uint64_t blocks() const { return uint64_t{grid.x} * grid.y * grid.z; }
  uint64_t threads_per_block() const { return uint64_t{block.x} * block.y * block.z; }
};

// Checks a launch shape against the device's limits and the kernel's (as
// the driver does before it enqueues): CUDA_ERROR_INVALID_VALUE when out of
// range.
CUresult check_launch_shape(const Function& f, const ptx::Kernel& k, const LaunchShape& s);

// Where a launch's parameters come from: an array of pointers, one per
// parameter (kernelParams), or one packed buffer (`extra`).
struct ParamSource {
  void* const* args = nullptr;
  const void* buffer = nullptr;
};
// Validates kernelParams / extra for `e` (INVALID_VALUE when both are given,
// when a kernel with parameters gets neither, or when `extra` is malformed
// or its buffer too small).
CUresult param_source(const ptx::EntryDesc& e, void** kernel_params, void** extra, ParamSource* out);
// Writes e.param_bytes bytes of packed parameters to `dst`.
void pack_params(const ptx::EntryDesc& e, const ParamSource& src, void* dst);

// The CUresult a device fault gives its context.
CUresult fault_result(devrt::FaultKind k);
// Sets the sticky error of `f`'s context for `fault`, and logs it when CUCPU_LOG is set.
void report_fault(const Function& f, const devrt::LaunchConfig& cfg, const devrt::Fault& fault);

// Launches below this many threads in all run as one op.
constexpr uint64_t kSingleOpThreads = 1024;
// Whether a launch of `s` runs as a group (in parallel, and in time slices).
bool launch_in_parallel(const LaunchShape& s);

// How long a part of a launch runs its blocks before it queues the rest
// behind the work that became ready meanwhile (default 2 ms). For tests,
// which make it 0 to have a part hand over after every chunk of blocks.
// Returns the slice it replaces.
std::chrono::nanoseconds set_kernel_slice(std::chrono::nanoseconds slice);

// Enqueues a validated launch of `f` (loaded) on `s`.
void enqueue_kernel(Stream* s, Function* f, const LaunchShape& shape, const ParamSource& src);
// Whether every block of a launch of `shape` can be resident at once (a
// cooperative launch's condition, for streams and graph nodes alike).
bool cooperative_fits(const Function& f, const ptx::Kernel& k, const LaunchShape& shape);
// A cooperative launch (grid-wide barriers): every block on a thread of its own.
void enqueue_cooperative_kernel(Stream* s, Function* f, const LaunchShape& shape, const ParamSource& src);

// A cooperative run of `cfg` (graph kernel nodes with the cooperative
// attribute), its parameters copied from cfg.params; the op carries its
// build reference.
Op* make_cooperative_op(Function* f, const devrt::LaunchConfig& cfg);

// Runs every block of `cfg` on the calling thread (graph segments). False
// after a fault (reported).
bool run_kernel_inline(const Function& f, const devrt::LaunchConfig& cfg);

// The ops of one parallel run of `cfg`'s blocks, whose parameters are
// borrowed from memory `keep` keeps alive: the parts (they need what comes
// before the launch) and the join (what comes after it needs that). The
// ops carry their build reference; the caller links and releases them as
// Stream::enqueue_group does.
struct KernelGroup {
  std::vector<Op*> parts;
  Op* join = nullptr;
};
KernelGroup make_kernel_group(Function* f, const devrt::LaunchConfig& cfg, std::shared_ptr<const void> keep);

// Parameter storage with room inside the op for the common case.
template <size_t N>
class ParamStorage {
 public:
  ParamStorage() = default;
  ParamStorage(const ParamStorage&) = delete;
  ParamStorage& operator=(const ParamStorage&) = delete;
  ~ParamStorage() { ::operator delete[](heap_, std::align_val_t{16}); }
  void* reserve(size_t n) {
    if (n <= N) return inline_;
    heap_ = static_cast<unsigned char*>(::operator new[](n, std::align_val_t{16}));
    return heap_;
  }

 private:
  unsigned char* heap_ = nullptr;
  alignas(16) unsigned char inline_[N];
};

}  // namespace cucpu
