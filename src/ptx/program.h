// The kernel compiler's public face: PTX text in, native kernels out.
//
// This folder knows nothing of streams, contexts or CUDA handles; the
// runtime above it (core/module, core/kernel_op) owns those. Everything
// here is thread-safe: a Program is immutable once parsed, and a Kernel is
// immutable once compiled, so any number of threads may launch it at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cucpu::ptx {

// A kernel parameter as laid out in the launch's parameter buffer.
struct ParamDesc {
  std::string name;
  uint32_t offset = 0;  // byte offset in the buffer (aligned to `align`)
  uint32_t size = 0;    // bytes
  uint32_t align = 1;
};

// One `.entry` of the module.
struct EntryDesc {
  std::string name;
  std::vector<ParamDesc> params;
  uint32_t param_bytes = 0;    // size of the whole buffer
  uint32_t reqntid[3] = {};    // .reqntid, zeros when absent
  uint32_t maxntid[3] = {};    // .maxntid, zeros when absent
  uint32_t min_blocks_per_sm = 0;  // .minnctapersm, 0 when absent
};

// A module-scope variable the runtime backs with memory: `.global` (with
// `.managed` for __managed__) and `.const`. Shared and local variables are
// per block and per thread, laid out by the compiler.
struct GlobalDesc {
  enum class Space : uint8_t { kGlobal, kConst };
  std::string name;
  Space space = Space::kGlobal;
  bool managed = false;       // .attribute(.managed)
  bool is_extern = false;     // .extern: declared, defined by another module (link only)
  uint64_t size = 0;
  uint32_t align = 1;
  std::vector<uint8_t> init;  // initial bytes (may be shorter than size: the rest is zero)
  // Initializers that hold another variable's address: at `offset`, store
  // the address of globals()[target] plus `addend` (8 bytes).
  // A `function` reloc holds the address of a device function instead
  // (a table of function pointers): Program::function_address gives it.
  struct Reloc {
    uint64_t offset;
    uint32_t target;
    int64_t addend;
    std::string function;
  };
  std::vector<Reloc> relocs;
};

// What the driver reports about a compiled kernel (cuFuncGetAttribute).
struct KernelInfo {
  int num_regs = 0;                 // registers the kernel names (what ptxas would allocate, estimated)
  uint32_t static_shared_bytes = 0;
  uint32_t local_bytes = 0;         // per thread
  uint32_t const_bytes = 0;         // module .const bytes
  int max_threads_per_block = 1024; // lowered by .maxntid/.reqntid
  int ptx_version = 0;              // the PTX's .target (75 for sm_75), as the driver reports it
  bool device_runtime = false;      // its program calls the device runtime (LaunchConfig::device_runtime)
};

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// The device runtime's calls (dynamic parallelism), one per row of device_calls.inc.
enum class DeviceCall : uint32_t {
#define X(name, call, params, result) call,
#include "ptx/device_calls.inc"
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
  // blocks, one of which may be what it waits for (ptx/block_runner.h).
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

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const KernelInfo& info() const = 0;
  virtual const EntryDesc& entry() const = 0;
  // Runs blocks [first, last) of `cfg.grid` (linear index, x fastest) on
  // the calling thread, one after another. Stops at the first fault and
  // returns it. May be called by many threads at once with disjoint ranges.
  // The caller has checked the launch shape against info() and the limits.
  virtual Fault run_blocks(const LaunchConfig& cfg, uint64_t first, uint64_t last) const = 0;
};

// A parsed PTX module. Kernels are compiled on first request (lazily) and
// kept: a second kernel() call for an entry returns the same object.
class Program {
 public:
  virtual ~Program() = default;
  // Parses `text`. On malformed PTX returns null and writes
  // "line L, column C: reason" lines to *log. Identical texts share one
  // Program (and its compiled kernels) within the process.
  static std::shared_ptr<Program> parse(std::string_view text, std::string* log);

  virtual const std::vector<EntryDesc>& entries() const = 0;
  virtual const std::vector<GlobalDesc>& globals() const = 0;
  virtual int find_entry(std::string_view name) const = 0;   // -1 when absent
  virtual int find_global(std::string_view name) const = 0;  // -1 when absent
  virtual int ptx_version() const = 0;                       // major*10 + minor
  virtual int target_sm() const = 0;                         // e.g. 90 for sm_90
  // The target's suffix: 'a' (sm_90a: that architecture alone), 'f'
  // (sm_100f: its family, the same major at this minor or later), or 0.
  virtual char target_variant() const = 0;

  // The address of device function `name` as compiled code calls it
  // through a pointer (for initializers holding function addresses).
  // Compiles the module's address-taken functions on first use; 0 on failure, with *log.
  virtual uint64_t function_address(std::string_view name, std::string* log) const = 0;

  // Compiles entry `index` (once). Null on failure, with the reason in *log
  // (an unsupported instruction names itself and its line).
  virtual std::shared_ptr<const Kernel> kernel(int index, std::string* log) const = 0;
};

}  // namespace cucpu::ptx
