// What a launch hands a compiled kernel and what it gives back: the
// launch's shape and buffers, the device runtime's calls (dynamic
// parallelism) and the fault that stops a block. Shared by the kernel
// compiler's public face (ptx/program.h) and the runtime that runs the
// compiled code (this folder).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cucpu::devrt {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// The device runtime's calls (dynamic parallelism), one per row of device_calls.inc.
enum class DeviceCall : uint32_t {
#define X(name, call, params, result) call,
#include "devrt/device_calls.inc"
#undef X
};
// The row of a PTX function name, or null when it is none of the device runtime's.
struct DeviceCallInfo {
  const char* name;
  DeviceCall call;
  uint32_t params;
  uint32_t result_bytes;
};
const DeviceCallInfo* find_device_call(std::string_view name);
const DeviceCallInfo& device_call_info(DeviceCall call);

// What `mov.u64 %r, entry` gives device code: a kernel's address, which
// only the device runtime reads (a child launch names its kernel so). The
// entry's index in the Program's entries(), tagged so that it is never a
// mapped address.
constexpr uint64_t kEntryAddressTag = 0xcdb0000000000000ull;
constexpr uint64_t kEntryAddressMask = 0xffff000000000000ull;

// What device code's runtime calls ask of the runtime above (dynamic
// parallelism: child launches, device-side streams and events, errors).
// One per running grid whose program calls it (KernelInfo::device_runtime),
// shared by its blocks: call() may run on many threads at once.
class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  // Runs `call` for thread `thread` of block `block`: args[i] points at the
  // i-th argument's bytes, `result` at the result's (result_bytes wide; null
  // when the call has none).
  virtual void call(DeviceCall call, const Dim3& block, const Dim3& thread, const void* const* args,
                    void* result) = 0;
};

// What a launch hands the kernel.
struct LaunchConfig {
  Dim3 grid, block;
  uint32_t dynamic_shared_bytes = 0;
  const void* params = nullptr;      // EntryDesc::param_bytes bytes at least, 8-byte aligned (read freely)
  void* const* globals = nullptr;    // the address of each Program::globals() entry, in order
  // Cooperative launches: zeroed memory the grid's barrier uses (nvcc's
  // grid.sync() finds it in %envreg1/2 and traps without it), and every
  // block must be running at once (one thread each).
  void* grid_workspace = nullptr;
  // The launch's stop word (BlockEnv::stop), or null for one that is never
  // stopped. Written by another thread while blocks run: read atomically.
  const uint32_t* stop = nullptr;
  // A block whose threads only spin parks, so that the worker runs other
  // blocks, one of which may be what it waits for (devrt/block_runner.h).
  // run_blocks resumes its parked blocks before it returns, unless
  // `leave_parked`: then they stay with the calling thread, and a later
  // run_blocks of the same launch on that thread with an empty range
  // resumes each of them once.
  bool leave_parked = false;
  // The grid's device runtime: set when its kernel's program calls one
  // (KernelInfo::device_runtime), which then must outlive the blocks.
  DeviceRuntime* device_runtime = nullptr;
};

// A device fault: what stopped a block. The runtime turns it into the
// context's sticky error (and a CUCPU_LOG report).
enum class FaultKind : uint8_t {
  kNone,
  kIllegalAddress,     // an access no mapping backs (SIGSEGV/SIGBUS inside kernel code)
  kMisalignedAddress,  // an access not aligned to its size (checked by the compiled code)
  kTrap,               // `trap`, `brkpt`
  kAssert,             // __assertfail: `message` holds the driver's text
  kIllegalInstruction, // an instruction the compiler refused at run time
  kBarrierDeadlock,    // the block's threads wait at barriers no thread can release
  kOutOfMemory,        // the block's frames or shared arena could not be allocated
  kTimedOut,           // the launch's stop word was set (LaunchConfig::stop); address: the PTX line of the back edge, or 0
};
struct Fault {
  FaultKind kind = FaultKind::kNone;
  uint64_t address = 0;  // faulting address where known
  Dim3 block, thread;    // block and thread indices
  std::string message;
  explicit operator bool() const { return kind != FaultKind::kNone; }
};

}  // namespace cucpu::devrt
