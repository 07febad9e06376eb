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

#include "devrt/launch.h"

namespace cucpu::ptx {

// The compiler's face speaks the device runtime's launch types (Dim3,
// LaunchConfig, Fault...), and its code the runtime's ABI (devrt/abi.h).
using namespace cucpu::devrt;

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

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const KernelInfo& info() const = 0;
  virtual const EntryDesc& entry() const = 0;
  // Whether launches now run the full tier's code (jit.h): from the start
  // under CUCPU_JIT=full or from the disk cache, else once the kernel is
  // hot (its quick code has run about as long as a full compile takes).
  // Never under CUCPU_JIT=quick.
  virtual bool runs_full_tier() const = 0;
  // Runs blocks [first, last) of `cfg.grid` (linear index, x fastest) on
  // the calling thread, one after another. Stops at the first fault and
  // returns it. May be called by many threads at once with disjoint ranges.
  // The run that makes the kernel hot also compiles its full tier, on the
  // calling thread.
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
