// Dynamic parallelism: the device runtime of a running grid
// (devrt::DeviceRuntime), which its threads call to launch child grids and
// to queue copies and sets, as CUDA's device runtime API does.
//
// Order. The grid's threads queue their work in the order they make it.
// Once every block of the grid has run, whoever ran it calls run_pending(),
// which runs the queue on the calling thread, one item after another: each
// child grid, then at once that child's own queue (depth first), and the
// tail launches last. This is one order CUDA 12 and later allow: a parent
// never waits for its children (device-side synchronization is gone), work
// in one device stream runs in order, a grid is complete only once its
// children are, and a tail launch runs after its parent grid and all of the
// parent's other work. Device-side streams and events are tokens: in one
// total order every dependency they express already holds.
//
// A child grid that faults sets its context's sticky error, as a host
// launch's does; what is still queued then does not run.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/kernel_op.h"
#include "ptx/program.h"

namespace cucpu {

class Function;

class DeviceLaunches final : public devrt::DeviceRuntime {
 public:
  // For a grid of `parent` at nesting depth `depth` (1: launched by the host).
  DeviceLaunches(const Function* parent, unsigned depth);
  ~DeviceLaunches() override;
  DeviceLaunches(const DeviceLaunches&) = delete;
  DeviceLaunches& operator=(const DeviceLaunches&) = delete;

  // Runs inside kernel code, whose fault trap unwinds the block on a wild
  // access: what the call writes through the kernel's pointers it writes
  // with no lock held.
  void call(devrt::DeviceCall call, const devrt::Dim3& block, const devrt::Dim3& thread, const void* const* args,
            void* result) override;
  // Runs what the grid queued. Call once, after its last block, with no lock held.
  void run_pending();

  // CUDA's limit on nesting (a grid at this depth launches nothing).
  static constexpr unsigned kMaxDepth = 24;

 private:
  struct Buffer;
  struct Item;
  int32_t launch(Function* f, const LaunchShape& shape, const void* params, uint64_t stream);
  int32_t queue_copy(uint64_t dst, uint64_t src, uint64_t bytes, uint64_t stream);
  int32_t queue_set(uint64_t dst, uint64_t pitch, int value, uint64_t width, uint64_t height, uint64_t stream);
  int32_t queue_copy_3d(uint64_t params, uint64_t stream);
  int32_t queue_set_3d(const void* pitched, int value, const void* extent, uint64_t stream);
  int32_t queue(Item item, uint64_t stream);
  Function* function_at(uint64_t address) const;
  void* parameter_buffer(Function* f, const LaunchShape& shape, size_t bytes, size_t align);
  bool stream_known(uint64_t stream) const;
  // A device stream's or event's handle: made and written to `out`, or dropped.
  int32_t new_token(std::unordered_set<uint64_t>& set, uint64_t out);
  int32_t drop_token(std::unordered_set<uint64_t>& set, uint64_t token);
  void run_item(Item& item);
  // Runs every block of a child grid; false after a fault (reported).
  static bool run_child_grid(const Function& f, const LaunchShape& shape, const devrt::LaunchConfig& cfg);
  void set_error(const devrt::Dim3& block, const devrt::Dim3& thread, int32_t e);
  int32_t take_error(const devrt::Dim3& block, const devrt::Dim3& thread, bool clear);

  const Function* const parent_;
  const unsigned depth_;
  mutable std::mutex mu_;
  // Handed out, by their bytes' address (what a launch names them by); guarded by mu_.
  std::unordered_map<const void*, std::unique_ptr<Buffer>> buffers_;
  std::vector<Item> items_;                             // guarded by mu_
  std::vector<Item> tails_;                             // guarded by mu_
  std::unordered_set<uint64_t> streams_, events_;       // guarded by mu_
  std::unordered_map<uint64_t, int32_t> last_errors_;   // by thread; guarded by mu_
  uint64_t next_token_ = 0x1000;                        // guarded by mu_
};

}  // namespace cucpu
