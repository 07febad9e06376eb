#include "core/device_launch.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "base/fault_trap.h"
#include "core/context.h"
#include "core/device_attributes.h"
#include "core/module.h"
#include "core/runtime.h"
#include "devrt/block_runner.h"
#include "exec/scheduler.h"
#include "exec/watchdog.h"

namespace cucpu {

namespace {

// cudaError_t values the device runtime answers.
constexpr int32_t kSuccess = 0;
constexpr int32_t kInvalidValue = 1;
constexpr int32_t kInvalidConfiguration = 9;
constexpr int32_t kMaxDepthExceeded = 65;
constexpr int32_t kPendingCountExceeded = 69;
constexpr int32_t kInvalidDeviceFunction = 98;
constexpr int32_t kInvalidDevice = 101;
constexpr int32_t kUnsupportedLimit = 215;
constexpr int32_t kInvalidResourceHandle = 400;
constexpr int32_t kNotSupported = 801;

// The device runtime's special streams (cuda_device_runtime_api.h).
constexpr uint64_t kNullStream = 0, kLegacyStream = 1, kPerThreadStream = 2, kTailLaunch = 3, kFireAndForget = 4;

const char* error_name(int32_t e) {
  switch (e) {
    case kSuccess: return "cudaSuccess";
    case kInvalidValue: return "cudaErrorInvalidValue";
    case 2: return "cudaErrorMemoryAllocation";
    case kInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case kMaxDepthExceeded: return "cudaErrorLaunchMaxDepthExceeded";
    case kPendingCountExceeded: return "cudaErrorLaunchPendingCountExceeded";
    case kInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case kInvalidDevice: return "cudaErrorInvalidDevice";
    case kUnsupportedLimit: return "cudaErrorUnsupportedLimit";
    case kInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case kNotSupported: return "cudaErrorNotSupported";
    default: return "cudaErrorUnknown";
  }
}
const char* error_text(int32_t e) {
  switch (e) {
    case kSuccess: return "no error";
    case kInvalidValue: return "invalid argument";
    case 2: return "out of memory";
    case kInvalidConfiguration: return "invalid configuration argument";
    case kMaxDepthExceeded: return "launch failed because launch would exceed cudaLimitDevRuntimeSyncDepth";
    case kPendingCountExceeded: return "launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount";
    case kInvalidDeviceFunction: return "invalid device function";
    case kInvalidDevice: return "invalid device ordinal";
    case kUnsupportedLimit: return "limit is not supported on this architecture";
    case kInvalidResourceHandle: return "invalid resource handle";
    case kNotSupported: return "operation not supported";
    default: return "unknown error";
  }
}

template <class T>
T arg(const void* const* args, int i) {
  T v;
  std::memcpy(&v, args[i], sizeof v);
  return v;
}
devrt::Dim3 dim_arg(const void* const* args, int i) {
  uint32_t d[3];
  std::memcpy(d, args[i], sizeof d);
  return {d[0], d[1], d[2]};
}
void answer(void* result, int32_t e) { std::memcpy(result, &e, sizeof e); }
void answer_pointer(void* result, const void* p) {
  const uint64_t v = reinterpret_cast<uintptr_t>(p);
  std::memcpy(result, &v, sizeof v);
}
template <class T>
void store(uint64_t address, T v) {
  if (address) std::memcpy(reinterpret_cast<void*>(address), &v, sizeof v);
}

uint64_t thread_key(const devrt::Dim3& block, const devrt::Dim3& thread) {
  const uint64_t b = (uint64_t{block.z} * 65536 + block.y) * 2147483648ull + block.x;
  return b * 1024 + (uint64_t{thread.z} * 1024 + thread.y) * 1024 + thread.x;
}

// A device runtime call cucpu refuses: said once per call on stderr, with
// the kernel that made it first.
void say_not_supported(devrt::DeviceCall c, const std::string& kernel) {
  static std::mutex mu;
  static bool said[64] = {};
  const auto i = static_cast<size_t>(c);
  {
    std::lock_guard<std::mutex> g(mu);
    if (i >= 64 || said[i]) return;
    said[i] = true;
  }
  std::fprintf(stderr,
               "cucpu: kernel %s called %s, which cucpu's device runtime does not support "
               "(cudaFuncGetAttributes and the occupancy calculator in device code): it answers "
               "cudaErrorNotSupported\n",
               kernel.c_str(), devrt::device_call_info(c).name);
}

}  // namespace

struct DeviceLaunches::Buffer {
  std::vector<uint64_t> bytes;  // 8-byte aligned, as every parameter's alignment needs
  Function* function = nullptr; // null for a cudaGetParameterBuffer (V1) buffer
  LaunchShape shape;
};

struct DeviceLaunches::Item {
  enum class Kind : uint8_t { kLaunch, kCopy, kSet } kind = Kind::kLaunch;
  Function* function = nullptr;
  LaunchShape shape;
  std::vector<uint64_t> params;
  uint64_t dst = 0, src = 0, bytes = 0, pitch = 0, height = 1;
  int value = 0;
};

DeviceLaunches::DeviceLaunches(const Function* parent, unsigned depth) : parent_(parent), depth_(depth) {}
DeviceLaunches::~DeviceLaunches() = default;

Function* DeviceLaunches::function_at(uint64_t address) const {
  if ((address & devrt::kEntryAddressMask) != devrt::kEntryAddressTag) return nullptr;
  const int index = static_cast<int>(address & ~devrt::kEntryAddressMask);
  for (Function* f : parent_->module->functions())
    if (f->unit == parent_->unit && f->entry_index == index) return f;
  return nullptr;
}

bool DeviceLaunches::stream_known(uint64_t stream) const {
  return stream <= kFireAndForget || streams_.count(stream);
}

void* DeviceLaunches::parameter_buffer(Function* f, const LaunchShape& shape, size_t bytes, size_t align) {
  if (align > 8 || bytes > (size_t{1} << 20)) return nullptr;  // a launch's parameters fill 32 KB at most
  auto b = std::make_unique<Buffer>();
  b->bytes.assign((bytes + 7) / 8 + 1, 0);
  b->function = f;
  b->shape = shape;
  void* p = b->bytes.data();
  std::lock_guard<std::mutex> g(mu_);
  buffers_.emplace(p, std::move(b));
  return p;
}

int32_t DeviceLaunches::queue(Item item, uint64_t stream) {
  std::lock_guard<std::mutex> g(mu_);
  if (!stream_known(stream)) return kInvalidResourceHandle;
  const size_t limit = parent_->module->ctx->limits[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT].load(std::memory_order_relaxed);
  if (items_.size() + tails_.size() >= limit) return kPendingCountExceeded;
  (stream == kTailLaunch ? tails_ : items_).push_back(std::move(item));
  return kSuccess;
}

int32_t DeviceLaunches::launch(Function* f, const LaunchShape& shape, const void* params, uint64_t stream) {
  if (!f) return kInvalidDeviceFunction;
  if (depth_ >= kMaxDepth) return kMaxDepthExceeded;
  const ptx::Kernel* k = f->loaded();
  if (!k) return kInvalidDeviceFunction;
  if (check_launch_shape(*f, *k, shape) != CUDA_SUCCESS) return kInvalidConfiguration;
  Item item;
  item.function = f;
  item.shape = shape;
  const uint32_t n = f->entry().param_bytes;
  item.params.assign((n + 7) / 8 + 1, 0);
  if (n) std::memcpy(item.params.data(), params, n);  // a wild V1 buffer faults the block (no lock held)
  return queue(std::move(item), stream);
}

int32_t DeviceLaunches::queue_copy(uint64_t dst, uint64_t src, uint64_t bytes, uint64_t stream) {
  if (stream == kTailLaunch) return kInvalidValue;
  Item item;
  item.kind = Item::Kind::kCopy;
  item.dst = dst;
  item.src = src;
  item.bytes = bytes;
  return queue(std::move(item), stream);
}

int32_t DeviceLaunches::queue_set(uint64_t dst, uint64_t pitch, int value, uint64_t width, uint64_t height,
                                  uint64_t stream) {
  if (stream == kTailLaunch || (height > 1 && pitch < width)) return kInvalidValue;
  Item item;
  item.kind = Item::Kind::kSet;
  item.dst = dst;
  item.pitch = pitch;
  item.value = value;
  item.bytes = width;
  item.height = height;
  return queue(std::move(item), stream);
}

// cudaMemcpy3DParms and its parts as the device runtime's ABI lays them
// out (cuda_runtime_api.h): positions and widths in bytes for linear memory.
struct PitchedPtr {
  uint64_t ptr, pitch, xsize, ysize;
};
struct Box {
  uint64_t x, y, z;
};
struct Copy3DParams {
  uint64_t src_array;
  Box src_pos;
  PitchedPtr src;
  uint64_t dst_array;
  Box dst_pos;
  PitchedPtr dst;
  Box extent;
  int32_t kind;
};
static_assert(sizeof(Copy3DParams) == 160);

// A 3D copy between pitched linear ranges, queued row by row. Arrays have
// no device-side form in cucpu: a copy naming one is refused.
int32_t DeviceLaunches::queue_copy_3d(uint64_t params, uint64_t stream) {
  if (!params) return kInvalidValue;
  Copy3DParams p;
  std::memcpy(&p, reinterpret_cast<const void*>(params), sizeof p);  // a wild pointer faults the block
  if (p.src_array || p.dst_array) return kNotSupported;
  const Box& e = p.extent;
  if (e.x == 0 || e.y == 0 || e.z == 0) return kSuccess;
  if (p.src_pos.x + e.x > p.src.pitch || p.dst_pos.x + e.x > p.dst.pitch) return kInvalidValue;
  int32_t r = kSuccess;
  for (uint64_t z = 0; z < e.z && r == kSuccess; ++z)
    for (uint64_t y = 0; y < e.y && r == kSuccess; ++y) {
      const uint64_t src_row = (p.src_pos.z + z) * p.src.ysize + p.src_pos.y + y;
      const uint64_t dst_row = (p.dst_pos.z + z) * p.dst.ysize + p.dst_pos.y + y;
      r = queue_copy(p.dst.ptr + dst_row * p.dst.pitch + p.dst_pos.x, p.src.ptr + src_row * p.src.pitch + p.src_pos.x,
                     e.x, stream);
    }
  return r;
}

// A 3D set of a pitched range: one 2D set per slice.
int32_t DeviceLaunches::queue_set_3d(const void* pitched, int value, const void* extent, uint64_t stream) {
  PitchedPtr p;
  Box e;
  std::memcpy(&p, pitched, sizeof p);
  std::memcpy(&e, extent, sizeof e);
  if (e.x == 0 || e.y == 0 || e.z == 0) return kSuccess;
  if (e.x > p.pitch || (e.z > 1 && e.y > p.ysize)) return kInvalidValue;
  int32_t r = kSuccess;
  for (uint64_t z = 0; z < e.z && r == kSuccess; ++z)
    r = queue_set(p.ptr + z * p.ysize * p.pitch, p.pitch, value, e.x, e.y, stream);
  return r;
}

int32_t DeviceLaunches::new_token(std::unordered_set<uint64_t>& set, uint64_t out) {
  if (!out) return kInvalidValue;
  uint64_t token;
  {
    std::lock_guard<std::mutex> g(mu_);
    token = next_token_ += 16;
    set.insert(token);
  }
  store(out, token);  // no lock held: a wild pointer faults the block
  return kSuccess;
}

int32_t DeviceLaunches::drop_token(std::unordered_set<uint64_t>& set, uint64_t token) {
  std::lock_guard<std::mutex> g(mu_);
  return set.erase(token) ? kSuccess : kInvalidResourceHandle;
}

void DeviceLaunches::set_error(const devrt::Dim3& block, const devrt::Dim3& thread, int32_t e) {
  if (e == kSuccess) return;
  std::lock_guard<std::mutex> g(mu_);
  last_errors_[thread_key(block, thread)] = e;
}

int32_t DeviceLaunches::take_error(const devrt::Dim3& block, const devrt::Dim3& thread, bool clear) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = last_errors_.find(thread_key(block, thread));
  if (it == last_errors_.end()) return kSuccess;
  const int32_t e = it->second;
  if (clear) last_errors_.erase(it);
  return e;
}

void DeviceLaunches::call(devrt::DeviceCall c, const devrt::Dim3& block, const devrt::Dim3& thread,
                          const void* const* args, void* result) {
  using C = devrt::DeviceCall;
  int32_t e = kSuccess;
  switch (c) {
    case C::kGetParameterBufferV2: {
      Function* f = function_at(arg<uint64_t>(args, 0));
      const LaunchShape shape{dim_arg(args, 1), dim_arg(args, 2), arg<uint32_t>(args, 3)};
      void* p = f ? parameter_buffer(f, shape, f->entry().param_bytes, 8) : nullptr;
      if (!p) set_error(block, thread, f ? kInvalidValue : kInvalidDeviceFunction);
      return answer_pointer(result, p);
    }
    case C::kGetParameterBuffer: {
      void* p = parameter_buffer(nullptr, {}, arg<uint64_t>(args, 1), arg<uint64_t>(args, 0));
      if (!p) set_error(block, thread, kInvalidValue);
      return answer_pointer(result, p);
    }
    case C::kLaunchDeviceV2:
    case C::kLaunchDeviceV2Ptsz: {
      const void* data = reinterpret_cast<const void*>(arg<uint64_t>(args, 0));
      Function* f = nullptr;
      LaunchShape shape;
      {
        std::lock_guard<std::mutex> g(mu_);
        if (auto it = buffers_.find(data); it != buffers_.end()) {
          f = it->second->function;
          shape = it->second->shape;
        }
      }
      e = f ? launch(f, shape, data, arg<uint64_t>(args, 1)) : kInvalidValue;
      break;
    }
    case C::kLaunchDevice:
    case C::kLaunchDevicePtsz: {
      const LaunchShape shape{dim_arg(args, 2), dim_arg(args, 3), arg<uint32_t>(args, 4)};
      const void* data = reinterpret_cast<const void*>(arg<uint64_t>(args, 1));
      e = data ? launch(function_at(arg<uint64_t>(args, 0)), shape, data, arg<uint64_t>(args, 5)) : kInvalidValue;
      break;
    }
    case C::kGetLastError: return answer(result, take_error(block, thread, true));
    case C::kPeekAtLastError: return answer(result, take_error(block, thread, false));
    case C::kGetErrorString: return answer_pointer(result, error_text(arg<int32_t>(args, 0)));
    case C::kGetErrorName: return answer_pointer(result, error_name(arg<int32_t>(args, 0)));
    case C::kStreamCreateWithFlags:
      e = arg<uint32_t>(args, 1) > 1 ? kInvalidValue : new_token(streams_, arg<uint64_t>(args, 0));
      break;
    case C::kStreamDestroy: e = drop_token(streams_, arg<uint64_t>(args, 0)); break;
    case C::kEventCreateWithFlags: e = new_token(events_, arg<uint64_t>(args, 0)); break;
    case C::kEventDestroy: e = drop_token(events_, arg<uint64_t>(args, 0)); break;
    case C::kEventRecord:
    case C::kEventRecordPtsz:
    case C::kEventRecordWithFlags:
    case C::kEventRecordWithFlagsPtsz:
    case C::kStreamWaitEvent:
    case C::kStreamWaitEventPtsz: {
      // (event, stream) for a record, (stream, event) for a wait: in one
      // total order the dependency already holds once both are known.
      const bool wait = c == C::kStreamWaitEvent || c == C::kStreamWaitEventPtsz;
      const uint64_t event = arg<uint64_t>(args, wait ? 1 : 0), stream = arg<uint64_t>(args, wait ? 0 : 1);
      std::lock_guard<std::mutex> g(mu_);
      e = events_.count(event) && stream_known(stream) && stream != kTailLaunch ? kSuccess : kInvalidResourceHandle;
      break;
    }
    case C::kMemcpyAsync:
    case C::kMemcpyAsyncPtsz:
      e = queue_copy(arg<uint64_t>(args, 0), arg<uint64_t>(args, 1), arg<uint64_t>(args, 2), arg<uint64_t>(args, 4));
      break;
    case C::kMemsetAsync:
    case C::kMemsetAsyncPtsz:
      e = queue_set(arg<uint64_t>(args, 0), 0, arg<int32_t>(args, 1), arg<uint64_t>(args, 2), 1, arg<uint64_t>(args, 3));
      break;
    case C::kMemset2DAsync:
    case C::kMemset2DAsyncPtsz:
      e = queue_set(arg<uint64_t>(args, 0), arg<uint64_t>(args, 1), arg<int32_t>(args, 2), arg<uint64_t>(args, 3),
                    arg<uint64_t>(args, 4), arg<uint64_t>(args, 5));
      break;
    case C::kMemcpy2DAsync:
    case C::kMemcpy2DAsyncPtsz: {
      // (dst, dpitch, src, spitch, width, height, kind, stream): one copy per row.
      const uint64_t dpitch = arg<uint64_t>(args, 1), spitch = arg<uint64_t>(args, 3);
      const uint64_t width = arg<uint64_t>(args, 4), height = arg<uint64_t>(args, 5);
      if (width > dpitch || width > spitch) {
        e = kInvalidValue;
        break;
      }
      for (uint64_t r = 0; r < height && e == kSuccess; ++r)
        e = queue_copy(arg<uint64_t>(args, 0) + r * dpitch, arg<uint64_t>(args, 2) + r * spitch, width,
                       arg<uint64_t>(args, 7));
      break;
    }
    case C::kMemcpy3DAsync:
    case C::kMemcpy3DAsyncPtsz: e = queue_copy_3d(arg<uint64_t>(args, 0), arg<uint64_t>(args, 1)); break;
    case C::kMemset3DAsync:
    case C::kMemset3DAsyncPtsz:
      e = queue_set_3d(args[0], arg<int32_t>(args, 1), args[2], arg<uint64_t>(args, 3));
      break;
    case C::kGetDevice: store(arg<uint64_t>(args, 0), parent_->module->ctx->device->ordinal); break;
    case C::kGetDeviceCount: store(arg<uint64_t>(args, 0), static_cast<int>(rt().devices.size())); break;
    case C::kDeviceGetAttribute: {
      int v = 0;
      const int dev = arg<int32_t>(args, 2);
      if (dev < 0 || static_cast<size_t>(dev) >= rt().devices.size()) e = kInvalidDevice;
      else if (!device_attribute(arg<int32_t>(args, 1), dev, &v)) e = kInvalidValue;
      else store(arg<uint64_t>(args, 0), v);
      break;
    }
    case C::kDeviceGetLimit: {
      const uint32_t limit = arg<uint32_t>(args, 1);
      if (limit > CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT) e = kUnsupportedLimit;
      else store(arg<uint64_t>(args, 0), static_cast<uint64_t>(parent_->module->ctx->limits[limit].load()));
      break;
    }
    case C::kDeviceGetCacheConfig:
    case C::kDeviceGetSharedMemConfig: store(arg<uint64_t>(args, 0), 0); break;
    case C::kRuntimeGetVersion: store(arg<uint64_t>(args, 0), 13000); break;
    default:
      say_not_supported(c, parent_->name());
      e = kNotSupported;
      break;
  }
  set_error(block, thread, e);
  answer(result, e);
}

void DeviceLaunches::run_item(Item& item) {
  Context* ctx = parent_->module->ctx;
  if (item.kind != Item::Kind::kLaunch) {
    const bool ok = run_trapped([&] {
      for (uint64_t r = 0; r < item.height; ++r) {
        auto* dst = reinterpret_cast<unsigned char*>(item.dst + r * item.pitch);
        if (item.kind == Item::Kind::kCopy) std::memmove(dst, reinterpret_cast<const void*>(item.src), item.bytes);
        else std::memset(dst, item.value, item.bytes);
      }
    });
    if (!ok) ctx->set_device_fault(CUDA_ERROR_ILLEGAL_ADDRESS);
    return;
  }
  Function* f = item.function;
  devrt::LaunchConfig cfg;
  cfg.grid = item.shape.grid;
  cfg.block = item.shape.block;
  cfg.dynamic_shared_bytes = item.shape.shared;
  cfg.params = item.params.data();
  cfg.globals = f->globals();
  std::unique_ptr<DeviceLaunches> children;
  if (f->kernel()->info().device_runtime) {
    children = std::make_unique<DeviceLaunches>(f, depth_ + 1);
    cfg.device_runtime = children.get();
  }
  if (run_child_grid(*f, item.shape, cfg) && children) children->run_pending();
}

bool DeviceLaunches::run_child_grid(const Function& f, const LaunchShape& shape, const devrt::LaunchConfig& cfg) {
  // A small grid, or one the watchdog watches: on this thread.
  if (!launch_in_parallel(shape) || watchdog::on()) return run_kernel_inline(f, cfg);
  // A large one: its blocks shared, chunk by chunk, by this thread and as
  // many helper threads as the engine has workers (the grid must end before
  // this op does, and a worker never waits on the others).
  const uint64_t total = shape.blocks();
  const size_t threads = std::min<uint64_t>(Scheduler::instance().worker_count(), total);
  if (threads < 2) return run_kernel_inline(f, cfg);
  const uint64_t chunk = std::clamp<uint64_t>(total / (threads * 16), 1, 1024);
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  devrt::Fault first;
  devrt::LaunchConfig shared = cfg;
  shared.leave_parked = true;  // as a kernel part's: claim on while blocks wait, then give them rounds
  auto work = [&] {
    const ptx::Kernel* k = f.kernel();
    for (;;) {
      uint64_t b = next.fetch_add(chunk, std::memory_order_relaxed), e = std::min(b + chunk, total);
      if (b >= total || stop.load(std::memory_order_relaxed)) {
        if (!devrt::parked_blocks()) return;
        if (stop.load(std::memory_order_relaxed)) return devrt::drop_parked_blocks();
        b = e = 0;
      }
      if (devrt::Fault ft = k->run_blocks(shared, b, e)) {
        std::lock_guard<std::mutex> g(mu);
        if (!stop.exchange(true)) first = ft;
        devrt::drop_parked_blocks();
        return;
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  for (size_t i = 1; i < threads; ++i) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  if (!stop.load()) return true;
  report_fault(f, cfg, first);
  return false;
}

void DeviceLaunches::run_pending() {
  for (bool tails = false;; tails = true) {
    // Items queue more items only from grids this thread runs: take the list whole.
    std::vector<Item> list;
    {
      std::lock_guard<std::mutex> g(mu_);
      list.swap(tails ? tails_ : items_);
      buffers_.clear();
    }
    for (Item& item : list) {
      if (parent_->module->ctx->sticky_error() != CUDA_SUCCESS) return;
      run_item(item);
    }
    if (tails) return;
  }
}

}  // namespace cucpu
