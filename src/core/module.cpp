#include "core/module.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/allocation.h"
#include "core/device_arch.h"
#include "core/context.h"
#include "core/runtime.h"
#include "core/stream.h"
#include "exec/scheduler.h"
#include "exec/trace.h"

namespace cucpu {

HandlePool<Module>& module_pool() {
  static auto* p = new HandlePool<Module>(1 << 16);  // never destroyed: see core/handle_pool.h
  return *p;
}
HandlePool<Function>& function_pool() {
  static auto* p = new HandlePool<Function>(1 << 20);
  return *p;
}
HandlePool<Library>& library_pool() {
  static auto* p = new HandlePool<Library>(1 << 16);
  return *p;
}
HandlePool<LibKernel>& lib_kernel_pool() {
  static auto* p = new HandlePool<LibKernel>(1 << 20);
  return *p;
}

bool eager_loading() {
  static const bool eager = [] {
    const char* v = std::getenv("CUDA_MODULE_LOADING");
    return v && std::strcmp(v, "EAGER") == 0;
  }();
  return eager;
}

namespace {

// Every Module object that exists, handle live or not, so that a context's
// teardown reaches them all. A module leaves it first thing in its
// destructor; one found under the lock is therefore not yet destroyed.
// Never destroyed: a worker may release a module while the process exits.
std::mutex& g_modules_mu = *new std::mutex;
std::vector<Module*>& g_modules = *new std::vector<Module*>;  // guarded by g_modules_mu

}  // namespace

// --- attributes -------------------------------------------------------------

int max_dynamic_shared(const ptx::KernelInfo& info, const FuncSettings& s) {
  if (s.max_dynamic_shared >= 0) return s.max_dynamic_shared;
  return std::max(0, limits::kDefaultSharedPerBlock - static_cast<int>(info.static_shared_bytes));
}

int blocks_per_sm(const ptx::KernelInfo& info, const FuncSettings& s, int threads, size_t dynamic_shared) {
  using namespace limits;
  // Driver 580 answers for any block size up to the device's limit, even
  // above the kernel's .maxntid (which only the launch refuses).
  if (threads <= 0 || threads > static_cast<int>(kMaxThreadsPerBlock)) return 0;
  if (dynamic_shared > static_cast<size_t>(max_dynamic_shared(info, s))) return 0;
  const int warps = (threads + kWarpSize - 1) / kWarpSize;
  const DeviceArch& arch = device_arch();
  int n = std::min(arch.blocks_per_sm, arch.threads_per_sm / kWarpSize / warps);
  // Registers are allocated per warp in units of 256.
  const int regs = std::max(info.num_regs, 1);
  const int per_warp = (regs * kWarpSize + 255) / 256 * 256;
  n = std::min(n, kRegistersPerSm / per_warp / warps);
  // Shared memory is allocated in units of 128 bytes, plus the block's reserved kilobyte.
  const size_t shared = (info.static_shared_bytes + dynamic_shared + 127) / 128 * 128 + kReservedSharedPerBlock;
  n = std::min<int>(n, static_cast<int>(arch.shared_per_sm / shared));
  return std::max(n, 1);
}

CUresult get_function_attribute(const ptx::KernelInfo& info, const FuncSettings& s, int attr, int* out) {
  switch (attr) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *out = info.max_threads_per_block; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *out = static_cast<int>(info.static_shared_bytes); break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *out = static_cast<int>(info.const_bytes); break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *out = static_cast<int>(info.local_bytes); break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *out = info.num_regs; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *out = info.ptx_version; break;
    // PTX is compiled for the device, as the driver's JIT does: the binary
    // is the device's own architecture.
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *out = device_arch().sm; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *out = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *out = max_dynamic_shared(info, s); break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *out = s.carveout; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: *out = 0; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: *out = s.cluster[0]; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: *out = s.cluster[1]; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *out = s.cluster[2]; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *out = s.non_portable_cluster; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *out = s.cluster_policy; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult set_function_attribute(const ptx::KernelInfo& info, FuncSettings& s, int attr, int v) {
  switch (attr) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      if (v < 0 || v > device_arch().optin_shared_per_block - static_cast<int>(info.static_shared_bytes))
        return CUDA_ERROR_INVALID_VALUE;
      s.max_dynamic_shared = v;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      if (v < -1 || v > 100) return CUDA_ERROR_INVALID_VALUE;
      s.carveout = v;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
      if (v < 0 || v > device_arch().max_non_portable_cluster) return CUDA_ERROR_INVALID_VALUE;
      s.cluster[attr - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] = v;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      if (v != 0 && v != 1) return CUDA_ERROR_INVALID_VALUE;
      s.non_portable_cluster = v;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      if (v < CU_CLUSTER_SCHEDULING_POLICY_DEFAULT || v > CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING)
        return CUDA_ERROR_INVALID_VALUE;
      s.cluster_policy = v;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;  // read-only or unknown
  }
}

// --- Function ---------------------------------------------------------------

Function::Function(Module* m, uint32_t unit, int entry_index, uint32_t index)
    : module(m), unit(unit), entry_index(entry_index), index(index) {}

LibKernel* Function::library_kernel() const {
  return module->library ? module->library->kernels()[index] : nullptr;
}

const ptx::EntryDesc& Function::entry() const {
  return module->units()[unit].program->entries()[static_cast<size_t>(entry_index)];
}

void* const* Function::globals() const { return module->units()[unit].globals.data(); }

CUresult Function::load(std::string* log) {
  std::lock_guard<std::mutex> g(load_mu_);
  if (kernel_.load(std::memory_order_relaxed)) return CUDA_SUCCESS;
  std::string why;
  std::shared_ptr<const ptx::Kernel> k = module->units()[unit].program->kernel(entry_index, &why);
  if (!k) {
    log_line("kernel %s could not be compiled: %s", name().c_str(), why.c_str());
    if (log) *log += why;
    return CUDA_ERROR_INVALID_PTX;
  }
  owned_ = std::move(k);
  // Release: a thread that sees the pointer sees the compiled kernel.
  kernel_.store(owned_.get(), std::memory_order_release);
  return CUDA_SUCCESS;
}

FuncSettings Function::settings() const {
  std::lock_guard<std::mutex> g(settings_mu_);
  return settings_;
}

void Function::set_settings(const FuncSettings& s) {
  std::lock_guard<std::mutex> g(settings_mu_);
  settings_ = s;
  max_dyn_shared.store(s.max_dynamic_shared, std::memory_order_relaxed);
}

// --- Module -----------------------------------------------------------------

Module::Module(Context* ctx, Library* lib) : ctx(ctx->owner), library(lib) {
  std::lock_guard<std::mutex> g(g_modules_mu);
  g_modules.push_back(this);
}

Module::~Module() {
  {
    std::lock_guard<std::mutex> g(g_modules_mu);
    g_modules.erase(std::find(g_modules.begin(), g_modules.end(), this));
  }
  unregister_memory();
  if (segment_) munmap(segment_, segment_bytes_);
  for (Function* f : functions_) {
    function_pool().kill(f);
    function_pool().release(f);
  }
}

void Module::release() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (trace::on()) trace::names_may_change();  // the trace's keys of kernel names hold function addresses
    module_pool().release(this);
  }
}

namespace {
// Drops the handle's reference of an unloaded module once the work it
// waits for is done. Not part of any stream's timeline (seq 0); it carries
// the legacy stream only for the engine's sticky-error hook.
class ModuleReleaseOp final : public Op {
 public:
  explicit ModuleReleaseOp(Module* m) : m_(m) {}
  void execute(int) override { m_->release(); }
  bool trivial() const override { return true; }

 private:
  Module* m_;
};
}  // namespace

void Module::unload() {
  for (Function* f : functions_) function_pool().kill(f);
  if (trace::on()) trace::names_may_change();  // a killed function's slot may come back as another
  std::vector<OpRef> pending;
  if (OpRef op = ctx->legacy_stream()->last_pending_op()) pending.push_back(std::move(op));
  ctx->for_each_stream([&](Stream* s) {
    if (OpRef op = s->last_pending_op()) pending.push_back(std::move(op));
  });
  if (pending.empty()) {
    release();  // the handle's
    return;
  }
  auto* op = new ModuleReleaseOp(this);
  op->timeline = ctx->legacy_stream();
  for (OpRef& p : pending) p->add_successor(op);  // an op done meanwhile adds nothing
  // Drop the build guard: ready now, it runs here; else the last
  // dependency's reference carries it.
  if (op->release_dependency()) Scheduler::instance().submit(op);
  else op->release();
}

void Module::unregister_memory() {
  if (!registered_.exchange(false, std::memory_order_acq_rel)) return;
  for (const Block& b : memory_) Registry::instance().remove_id(b.base, b.alloc_id);
}

Function* Module::find_function(std::string_view name) const {
  for (Function* f : functions_)
    if (f->name() == name) return f;
  return nullptr;
}

bool Module::find_global(std::string_view name, GlobalRef* out) const {
  for (const Unit& u : units_) {
    const auto& gs = u.program->globals();
    for (size_t i = 0; i < gs.size(); ++i) {
      if (gs[i].is_extern || gs[i].name != name) continue;
      *out = {u.globals[i], static_cast<size_t>(gs[i].size), gs[i].managed};
      return true;
    }
  }
  return false;
}

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kGuard = 64 * 1024;  // mapped inaccessible after a module's variables

size_t variable_align(const ptx::GlobalDesc& g) {
  return std::max<size_t>(16, std::bit_ceil(std::max<uint32_t>(g.align, 1)));
}

}  // namespace

CUresult Module::create(Context* ctx, std::vector<std::shared_ptr<ptx::Program>> programs, Library* lib,
                        Module** out, std::string* log) {
  Module* m = module_pool().create(ctx, lib);
  auto fail = [&](CUresult r, const std::string& why) {
    if (log) *log += why;
    module_pool().kill(m);
    for (Function* f : m->functions_) function_pool().kill(f);
    m->release();  // no launch ever named it
    return r;
  };
  m->units_.reserve(programs.size());
  for (auto& p : programs) {
    Unit u;
    u.globals.assign(p->globals().size(), nullptr);
    u.program = std::move(p);
    m->units_.push_back(std::move(u));
  }
  // The defined variables, packed in one zeroed mapping as in a GPU's
  // module data segment, with a guard after the last: an access past it
  // faults (one between two variables reaches the next, as on the GPU).
  if (lib) m->managed_ = lib->managed;
  auto in_library_segment = [&](size_t unit, size_t global) {
    return m->managed_ && m->managed_->address(unit, global) != nullptr;
  };
  size_t bytes = 0;
  for (size_t ui = 0; ui < m->units_.size(); ++ui)
    for (size_t gi = 0; gi < m->units_[ui].program->globals().size(); ++gi) {
      const ptx::GlobalDesc& g = m->units_[ui].program->globals()[gi];
      if (g.is_extern || in_library_segment(ui, gi)) continue;
      const size_t align = variable_align(g);
      bytes = (bytes + align - 1) / align * align + std::max<uint64_t>(g.size, 1);
    }
  if (bytes > 0) {
    const size_t mapped = (bytes + kPage - 1) / kPage * kPage;
    void* seg = mmap(nullptr, mapped + kGuard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    if (seg == MAP_FAILED) return fail(CUDA_ERROR_OUT_OF_MEMORY, "out of memory for the module's variables\n");
    mprotect(static_cast<char*>(seg) + mapped, kGuard, PROT_NONE);
    m->segment_ = seg;
    m->segment_bytes_ = mapped + kGuard;
  }
  // Defined variables first, so that .extern ones can name them.
  Registry& reg = Registry::instance();
  size_t at = 0;
  for (size_t ui = 0; ui < m->units_.size(); ++ui) {
    Unit& u = m->units_[ui];
    const auto& gs = u.program->globals();
    for (size_t i = 0; i < gs.size(); ++i) {
      if (gs[i].is_extern) continue;
      if (in_library_segment(ui, i)) {
        u.globals[i] = m->managed_->address(ui, i);
        continue;
      }
      const size_t align = variable_align(gs[i]);
      at = (at + align - 1) / align * align;
      char* p = static_cast<char*>(m->segment_) + at;
      at += std::max<uint64_t>(gs[i].size, 1);
      if (!gs[i].init.empty()) std::memcpy(p, gs[i].init.data(), std::min<size_t>(gs[i].init.size(), gs[i].size));
      Allocation a;
      a.base = reinterpret_cast<uintptr_t>(p);
      a.size = std::max<uint64_t>(gs[i].size, 1);
      a.kind = gs[i].managed ? MemKind::kManaged : MemKind::kDevice;
      a.ctx = ctx;
      if (gs[i].managed) a.flags = a.attach_flags = CU_MEM_ATTACH_GLOBAL;
      a.module_owned = true;
      m->memory_.push_back({a.base, reg.add(a)});
      m->registered_.store(true, std::memory_order_relaxed);
      u.globals[i] = p;
    }
  }
  for (Unit& u : m->units_) {
    const auto& gs = u.program->globals();
    for (size_t i = 0; i < gs.size(); ++i) {
      if (!gs[i].is_extern) continue;
      GlobalRef def;
      // Unresolved: driver 580 loads the module anyway; here the variable has
      // no memory, and a kernel that touches it faults.
      if (!m->find_global(gs[i].name, &def)) {
        u.globals[i] = nullptr;
        continue;
      }
      u.globals[i] = def.address;
    }
  }
  // Initializers that hold addresses.
  for (Unit& u : m->units_) {
    const auto& gs = u.program->globals();
    for (size_t i = 0; i < gs.size(); ++i) {
      if (gs[i].is_extern) continue;
      for (const auto& r : gs[i].relocs) {
        if (r.target >= gs.size() || r.offset > gs[i].size || gs[i].size - r.offset < 8)
          return fail(CUDA_ERROR_INVALID_PTX, "bad initializer of variable " + gs[i].name + "\n");
        uint64_t v;
        if (!r.function.empty()) {  // a function pointer: its code is compiled now
          std::string log;
          v = u.program->function_address(r.function, &log);
          if (!v) return fail(CUDA_ERROR_INVALID_PTX, log + "\n");
          v += static_cast<uint64_t>(r.addend);
          std::memcpy(static_cast<char*>(u.globals[i]) + r.offset, &v, 8);
          continue;
        }
        v = reinterpret_cast<uintptr_t>(u.globals[r.target]) + static_cast<uint64_t>(r.addend);
        std::memcpy(static_cast<char*>(u.globals[i]) + r.offset, &v, 8);
      }
    }
  }
  for (uint32_t ui = 0; ui < m->units_.size(); ++ui) {
    const auto& es = m->units_[ui].program->entries();
    for (size_t e = 0; e < es.size(); ++e) {
      auto idx = static_cast<uint32_t>(m->functions_.size());
      m->functions_.push_back(function_pool().create(m, ui, static_cast<int>(e), idx));
    }
  }
  if (eager_loading()) {
    for (Function* f : m->functions_) {
      std::string why;
      if (CUresult r = f->load(&why)) return fail(r, why);
    }
  }
  *out = m;
  return CUDA_SUCCESS;
}

void unload_context_modules(Context* ctx) {
  std::vector<Module*> live;
  {
    std::lock_guard<std::mutex> g(g_modules_mu);
    for (Module* m : g_modules) {
      if (m->ctx != ctx) continue;
      m->unregister_memory();
      if (module_pool().try_kill(m)) live.push_back(m);  // we now own the handle's reference
    }
  }
  for (Module* m : live) {
    if (m->library) m->library->forget(m);
    m->unload();
  }
}

// --- Library ----------------------------------------------------------------

std::shared_ptr<ManagedSegment> ManagedSegment::create(const std::vector<std::shared_ptr<ptx::Program>>& programs) {
  size_t bytes = 0;
  for (const auto& p : programs)
    for (const ptx::GlobalDesc& g : p->globals()) {
      if (g.is_extern || !g.managed) continue;
      const size_t align = variable_align(g);
      bytes = (bytes + align - 1) / align * align + std::max<uint64_t>(g.size, 1);
    }
  if (bytes == 0) return nullptr;
  auto seg = std::make_shared<ManagedSegment>();
  const size_t mapped = (bytes + kPage - 1) / kPage * kPage;
  void* base = mmap(nullptr, mapped + kGuard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  mprotect(static_cast<char*>(base) + mapped, kGuard, PROT_NONE);
  seg->base_ = base;
  seg->bytes_ = mapped + kGuard;
  Registry& reg = Registry::instance();
  size_t at = 0;
  for (const auto& p : programs) {
    const auto& gs = p->globals();
    seg->address_.emplace_back(gs.size(), nullptr);
    for (size_t i = 0; i < gs.size(); ++i) {
      if (gs[i].is_extern || !gs[i].managed) continue;
      const size_t align = variable_align(gs[i]);
      at = (at + align - 1) / align * align;
      char* v = static_cast<char*>(base) + at;
      at += std::max<uint64_t>(gs[i].size, 1);
      if (!gs[i].init.empty()) std::memcpy(v, gs[i].init.data(), std::min<size_t>(gs[i].init.size(), gs[i].size));
      Allocation a;
      a.base = reinterpret_cast<uintptr_t>(v);
      a.size = std::max<uint64_t>(gs[i].size, 1);
      a.kind = MemKind::kManaged;
      a.ctx = nullptr;
      a.flags = a.attach_flags = CU_MEM_ATTACH_GLOBAL;
      a.module_owned = true;
      seg->registered_.emplace_back(a.base, reg.add(a));
      seg->address_.back()[i] = v;
    }
  }
  return seg;
}

ManagedSegment::~ManagedSegment() {
  for (auto [b, id] : registered_) Registry::instance().remove_id(b, id);
  if (base_) munmap(base_, bytes_);
}

bool Library::find_managed(std::string_view name, void** address, size_t* size) const {
  if (!managed) return false;
  for (size_t u = 0; u < programs.size(); ++u) {
    const auto& gs = programs[u]->globals();
    for (size_t i = 0; i < gs.size(); ++i) {
      if (gs[i].name != name || !managed->address(u, i)) continue;
      *address = managed->address(u, i);
      *size = static_cast<size_t>(gs[i].size);
      return true;
    }
  }
  return false;
}

Library::Library(std::vector<std::shared_ptr<ptx::Program>> progs)
    : programs(std::move(progs)), managed(ManagedSegment::create(programs)) {
  for (uint32_t u = 0; u < programs.size(); ++u)
    for (size_t e = 0; e < programs[u]->entries().size(); ++e) {
      where_.emplace_back(u, static_cast<int>(e));
      kernels_.push_back(lib_kernel_pool().create(this, static_cast<uint32_t>(kernels_.size())));
    }
}

Library::~Library() {
  for (LibKernel* k : kernels_) {
    lib_kernel_pool().kill(k);
    lib_kernel_pool().release(k);
  }
}

LibKernel* Library::find_kernel(std::string_view name) const {
  for (uint32_t i = 0; i < kernels_.size(); ++i)
    if (entry(i).name == name) return kernels_[i];
  return nullptr;
}

CUresult Library::module_for(Context* ctx, Module** out, std::string* log) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [c, m] : modules_)
    if (c == ctx) {
      *out = m;
      return CUDA_SUCCESS;
    }
  Module* m;
  if (CUresult r = Module::create(ctx, programs, this, &m, log)) return r;
  const uint64_t dev = static_cast<uint64_t>(ctx->device->ordinal);
  for (auto& [key, s] : set_)
    if (key >> 32 == dev) m->functions()[static_cast<uint32_t>(key)]->set_settings(s);
  modules_.emplace_back(ctx, m);
  *out = m;
  return CUDA_SUCCESS;
}

FuncSettings Library::settings(uint32_t index, int dev) const {
  const uint64_t key = static_cast<uint64_t>(dev) << 32 | index;
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [k, s] : set_)
    if (k == key) return s;
  return FuncSettings{};
}

void Library::set_settings(uint32_t index, int dev, const FuncSettings& s) {
  const uint64_t key = static_cast<uint64_t>(dev) << 32 | index;
  std::lock_guard<std::mutex> g(mu_);
  bool found = false;
  for (auto& [k, v] : set_)
    if (k == key) {
      v = s;
      found = true;
    }
  if (!found) set_.emplace_back(key, s);
  for (auto& [c, m] : modules_)
    if (c->device->ordinal == dev) m->functions()[index]->set_settings(s);
}

void Library::forget(Module* m) {
  std::lock_guard<std::mutex> g(mu_);
  modules_.erase(std::remove_if(modules_.begin(), modules_.end(), [m](auto& e) { return e.second == m; }),
                 modules_.end());
}

void Library::unload() {
  std::vector<std::pair<Context*, Module*>> mods;
  {
    std::lock_guard<std::mutex> g(mu_);
    mods.swap(modules_);
  }
  // A context teardown racing with this may have killed a module's handle
  // first; then it unloads that one.
  for (auto& [c, m] : mods)
    if (module_pool().try_kill(m)) m->unload();
  for (LibKernel* k : kernels_) lib_kernel_pool().kill(k);
}

}  // namespace cucpu
