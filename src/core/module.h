// Loaded code: modules (CUmodule), their functions (CUfunction), libraries
// (CUlibrary) and library kernels (CUkernel).
//
// Contract:
//  - A Module is one context's instance of one or more parsed PTX programs
//    ("units": one per image, several after cuLinkComplete). It owns the
//    memory behind every module-scope variable of its units (one mapping,
//    with a guard after it), each variable registered in the allocation
//    registry under its context (managed variables as managed memory), and
//    the table of their addresses that each launch hands the kernel
//    (devrt::LaunchConfig::globals).
//  - Modules are reference counted. The handle holds one reference, and so
//    does every graph node and executable graph node that names one of its
//    functions (ModuleRef). cuModuleUnload kills the handles at once and
//    drops the handle's reference once the work that the context's streams
//    hold at that moment is done, so launches in flight (which hold no
//    reference: a count per launch would cost the enqueue a cache-line
//    transfer) keep their functions and memory. Registry entries of the
//    memory go with the object, or at once when the context is torn down
//    (its memory is gone on the driver too).
//  - A Function belongs to its module and dies with it. Its kernel is
//    compiled on first need (load()), once, then read without a lock.
//  - A Library is context-independent: it keeps the parsed programs and
//    loads a module of them into a context the first time that context
//    needs one. Those modules belong to the library: cuModuleUnload refuses
//    them, and they go when the library is unloaded or their context is
//    torn down.
//  - Handle pools here are process-wide and never unmapped, like those of
//    core/runtime.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cuda.h"
#include "core/handle_pool.h"
#include "ptx/program.h"

namespace cucpu {

class Context;
class Module;
class Library;
struct LibKernel;

// The attributes a caller may set on a function or a library kernel
// (cuFuncSetAttribute, cuFuncSetCacheConfig, cuKernelSetAttribute).
struct FuncSettings {
  int max_dynamic_shared = -1;  // -1: the default (48 KiB less the static shared size)
  int carveout = -1;            // -1: no preference
  int cache_config = CU_FUNC_CACHE_PREFER_NONE;
  int cluster[3] = {0, 0, 0};
  int non_portable_cluster = 0;
  int cluster_policy = 0;
};

// Launch limits every architecture cucpu presents shares (the same figures
// as core/device_attributes.inc); those that vary are device_arch()'s.
namespace limits {
constexpr uint32_t kMaxBlockX = 1024, kMaxBlockY = 1024, kMaxBlockZ = 64;
constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr uint32_t kMaxGridX = 0x7fffffffu, kMaxGridY = 65535, kMaxGridZ = 65535;
constexpr int kDefaultSharedPerBlock = 48 * 1024;     // without the opt-in attribute
constexpr int kReservedSharedPerBlock = 1024;
constexpr int kRegistersPerSm = 65536;
constexpr int kWarpSize = 32;
constexpr int kMaxPortableCluster = 8;
}  // namespace limits

// Reads and writes of function attributes, shared by cuFuncGet/SetAttribute
// and cuKernelGet/SetAttribute. `info` is the compiled kernel's.
CUresult get_function_attribute(const ptx::KernelInfo& info, const FuncSettings& s, int attr, int* out);
CUresult set_function_attribute(const ptx::KernelInfo& info, FuncSettings& s, int attr, int value);
// The largest dynamic shared size a launch may ask for under `s`.
int max_dynamic_shared(const ptx::KernelInfo& info, const FuncSettings& s);
// Blocks of `threads` threads with `dynamic_shared` bytes each that one
// multiprocessor holds at once (the occupancy calculator's answer for the
// architecture presented). At least 1 for any launch the limits allow: cucpu does not
// refuse launches for their register count, which is an estimate.
int blocks_per_sm(const ptx::KernelInfo& info, const FuncSettings& s, int threads, size_t dynamic_shared);

class Function {
 public:
  Function(Module* m, uint32_t unit, int entry_index, uint32_t index);
  Module* const module;
  const uint32_t unit;       // the module unit that defines it
  const int entry_index;     // index in that unit's Program::entries()
  const uint32_t index;      // position in Module::functions
  const ptx::EntryDesc& entry() const;
  const std::string& name() const { return entry().name; }
  // The library kernel this function instantiates, or null for a module's own.
  LibKernel* library_kernel() const;

  // The compiled kernel, or null until load() succeeded.
  const ptx::Kernel* kernel() const { return kernel_.load(std::memory_order_acquire); }
  // Compiles the kernel once. CUDA_ERROR_INVALID_PTX (and the reason in
  // *log, when given) when the compiler refuses it.
  CUresult load(std::string* log = nullptr);
  // The kernel, compiled if need be (null on failure).
  const ptx::Kernel* loaded() { return kernel() ? kernel() : (load() == CUDA_SUCCESS ? kernel() : nullptr); }
  void* const* globals() const;

  // User-set attributes. Guarded by settings_mu; launches read only
  // max_dyn_shared, a copy kept current by set_settings.
  FuncSettings settings() const;
  void set_settings(const FuncSettings& s);
  std::atomic<int> max_dyn_shared{-1};

  // The pre-4.0 launch API's per-function state (cuFuncSetBlockShape,
  // cuFuncSetSharedSize, cuParamSet*), read by cuLaunch and cuLaunchGrid*.
  struct LegacyLaunch {
    static constexpr size_t kParamSpace = 32764;  // what a launch's parameters may fill (sm_70 and later)
    unsigned block[3] = {1, 1, 1};
    unsigned shared = 0;
    size_t size = 0;                    // cuParamSetSize: the bytes a launch passes
    std::vector<unsigned char> params;  // kParamSpace bytes once any is set
  };
  std::mutex legacy_mu;
  LegacyLaunch legacy;  // guarded by legacy_mu

 private:
  std::atomic<const ptx::Kernel*> kernel_{nullptr};
  std::shared_ptr<const ptx::Kernel> owned_;  // guarded by load_mu_
  std::mutex load_mu_;
  mutable std::mutex settings_mu_;
  FuncSettings settings_;  // guarded by settings_mu_
};

// The managed variables of a library: one segment, initialized at load and
// shared by the library's module in every context (managed memory is one
// address space, and cudart reads the variables before any context exists).
// Each variable is registered as managed memory of no context. Alive while
// the library or one of its modules is.
class ManagedSegment {
 public:
  // Null when the programs define no managed variable. Throws std::bad_alloc.
  static std::shared_ptr<ManagedSegment> create(const std::vector<std::shared_ptr<ptx::Program>>& programs);
  // The storage of programs[unit]->globals()[global], or null when that
  // variable is not a managed one.
  void* address(size_t unit, size_t global) const { return address_[unit][global]; }
  ManagedSegment() = default;
  ManagedSegment(const ManagedSegment&) = delete;
  ManagedSegment& operator=(const ManagedSegment&) = delete;
  ~ManagedSegment();

 private:
  void* base_ = nullptr;
  size_t bytes_ = 0;
  std::vector<std::vector<void*>> address_;
  std::vector<std::pair<uintptr_t, uint64_t>> registered_;  // (base, registry id) of each variable
};

class Module {
 public:
  struct Unit {
    std::shared_ptr<ptx::Program> program;
    std::vector<void*> globals;  // address of each program->globals() entry
  };

  // Builds a module of `programs` in `ctx`: allocates and initializes its
  // variables and resolves .extern variables between units. On failure
  // returns the error and writes the reason to *log. `lib` for a library's
  // module (which takes the library's per-device kernel settings).
  static CUresult create(Context* ctx, std::vector<std::shared_ptr<ptx::Program>> programs, Library* lib,
                         Module** out, std::string* log);

  Context* const ctx;
  Library* const library;  // null for cuModuleLoad*; valid while the handle lives
  const std::vector<Unit>& units() const { return units_; }
  // Every entry of every unit, in unit order then entry order.
  const std::vector<Function*>& functions() const { return functions_; }
  Function* find_function(std::string_view name) const;
  // A defined (non-extern) variable by name.
  struct GlobalRef {
    void* address = nullptr;
    size_t size = 0;
    bool managed = false;
  };
  bool find_global(std::string_view name, GlobalRef* out) const;

  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Drops a reference; the last one destroys the module (and frees its memory).
  void release();
  // Kills the module's functions' handles and drops the handle's reference
  // once every op pending on the context's streams now is done. Called
  // once, by whoever turned the module's handle dead, not from a worker.
  void unload();

  // Removes the registry entries of the module's memory now (context
  // teardown); the memory itself stays until the object goes.
  void unregister_memory();

  Module(Context* ctx, Library* lib);
  ~Module();

 private:
  std::atomic<int> refs_{1};
  std::vector<Unit> units_;
  std::vector<Function*> functions_;
  struct Block {
    uintptr_t base;
    uint64_t alloc_id;
  };
  std::vector<Block> memory_;  // each variable's registry entry
  std::shared_ptr<ManagedSegment> managed_;  // a library's managed variables
  void* segment_ = nullptr;    // the mapping that holds every defined variable
  size_t segment_bytes_ = 0;
  std::atomic<bool> registered_{false};
};

// A counted reference to a module (copyable; null when empty).
class ModuleRef {
 public:
  ModuleRef() = default;
  explicit ModuleRef(Module* m) : m_(m) { if (m_) m_->retain(); }
  ModuleRef(const ModuleRef& o) : ModuleRef(o.m_) {}
  ModuleRef(ModuleRef&& o) noexcept : m_(o.m_) { o.m_ = nullptr; }
  ModuleRef& operator=(ModuleRef o) noexcept {
    std::swap(m_, o.m_);
    return *this;
  }
  ~ModuleRef() { if (m_) m_->release(); }
  Module* get() const { return m_; }
  explicit operator bool() const { return m_ != nullptr; }
  // Takes over a reference the caller already holds.
  static ModuleRef adopt(Module* m) {
    ModuleRef r;
    r.m_ = m;
    return r;
  }
  // Gives the reference up to the caller (who must release it).
  Module* leak() {
    Module* m = m_;
    m_ = nullptr;
    return m;
  }

 private:
  Module* m_ = nullptr;
};

struct LibKernel {
  LibKernel(Library* lib, uint32_t index) : library(lib), index(index) {}
  Library* const library;
  const uint32_t index;  // position in Library::kernels and in each of its modules' functions()
};

class Library {
 public:
  explicit Library(std::vector<std::shared_ptr<ptx::Program>> programs);
  ~Library();
  const std::vector<std::shared_ptr<ptx::Program>> programs;
  // The managed variables of every context's module (null when none).
  const std::shared_ptr<ManagedSegment> managed;
  // A managed variable by name, found without a context.
  bool find_managed(std::string_view name, void** address, size_t* size) const;
  const std::vector<LibKernel*>& kernels() const { return kernels_; }
  LibKernel* find_kernel(std::string_view name) const;
  // (unit, entry) of kernel `index`.
  std::pair<uint32_t, int> locate(uint32_t index) const { return where_[index]; }
  const ptx::EntryDesc& entry(uint32_t index) const {
    return programs[where_[index].first]->entries()[static_cast<size_t>(where_[index].second)];
  }

  // The library's module in `ctx`, loaded on first use.
  CUresult module_for(Context* ctx, Module** out, std::string* log = nullptr);
  // Settings of kernel `index` on device `dev` (defaults until set).
  FuncSettings settings(uint32_t index, int dev) const;
  // Sets them, and applies them to the kernel's functions in every context
  // of that device.
  void set_settings(uint32_t index, int dev, const FuncSettings& s);
  // Context teardown: forget the module without unloading it here.
  void forget(Module* m);
  // cuLibraryUnload: unloads every module and kills the kernels' handles
  // and the library's. The caller destroys the library afterwards.
  void unload();

 private:
  std::vector<LibKernel*> kernels_;
  std::vector<std::pair<uint32_t, int>> where_;
  mutable std::mutex mu_;
  std::vector<std::pair<Context*, Module*>> modules_;      // guarded by mu_
  std::vector<std::pair<uint64_t, FuncSettings>> set_;     // (dev << 32 | index) -> settings; guarded by mu_
};

HandlePool<Module>& module_pool();
HandlePool<Function>& function_pool();
HandlePool<Library>& library_pool();
HandlePool<LibKernel>& lib_kernel_pool();

// Unloads every module of `ctx` (its teardown; the context's streams are
// drained already).
void unload_context_modules(Context* ctx);

// Whether CUDA_MODULE_LOADING asks for eager loading (read once).
bool eager_loading();

}  // namespace cucpu
