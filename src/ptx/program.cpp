// Program and Kernel: parsing once per text, compiling once per entry.
#include "ptx/program.h"

#include <x86intrin.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>

#include "ptx/ast.h"
#include "devrt/block_runner.h"
#include "ptx/code_cache.h"
#include "ptx/jit.h"
#include "ptx/lower.h"

namespace cucpu::ptx {

namespace {

// A kernel's code in the JIT, by code key: a text compiled again in the
// same process (after its Program was dropped) reuses it. `range` starts as
// the quick tier's code when the kernel was compiled quickly, and becomes
// the full tier's once the kernel is hot (see tier_up); both come from one
// lowering, made twice, so they share `layout` and its frames.
struct Linked {
  enum State : int { kUpgradable, kUpgrading, kFinal };
  KernelLayout layout;
  // Release by tier_up, acquire by each run: the new code is linked before it is seen.
  std::atomic<uint64_t> range{0};
  std::atomic<int> state{kFinal};
  std::atomic<bool> full{false};          // range is the full tier's code (Kernel::runs_full_tier)
  std::atomic<uint64_t> quick_ticks{0};   // time-stamp counter ticks spent running the quick code
};
std::shared_ptr<Linked> link_kernel(const Module& ast, int fi, const std::string& key, const std::string& text_name,
                                    bool big_grid, std::string* log);
void tier_up(Linked& l, const Module& ast, int fi, const std::string& key, const std::string& text_name, bool big_grid);
void fill_code(const Linked& l, KernelLayout* layout, CompiledCode* code, const char* name);

// A kernel is hot once its quick code has run for about as long as its
// full compile takes (20 to 30 ms of one core: the counter ticks at the
// CPU's base clock). Paying the compile then at most doubles what a kernel
// that is never run again has cost, and a short program never pays it.
constexpr uint64_t kHotTicks = 60'000'000;

class KernelImpl final : public Kernel {
 public:
  const KernelInfo& info() const override { return info_; }
  const EntryDesc& entry() const override { return entry_; }
  bool runs_full_tier() const override { return linked_->full.load(std::memory_order_relaxed); }
  Fault run_blocks(const LaunchConfig& cfg, uint64_t first, uint64_t last) const override {
    if (cfg.grid.x <= kMaxGridX) return run_linked(code_, *linked_, false, cfg, first, last);
    // A grid wider than the main code is built for: code made for it, compiled on first use.
    std::call_once(big_once_, [&] {
      std::string log;
      if ((big_linked_ = link_kernel(*ast_, fi_, key_ + "+big", entry_.name, true, &log)))
        fill_code(*big_linked_, &big_layout_, &big_code_, entry_.name.c_str());
    });
    if (!big_linked_) {
      Fault f;
      f.kind = FaultKind::kIllegalInstruction;
      f.message = "the kernel could not be compiled for a grid this wide";
      return f;
    }
    return run_linked(big_code_, *big_linked_, true, cfg, first, last);
  }

  // Runs `code` with the newest range function `l` has. While that is the
  // quick tier's, times the run; the run that makes the kernel hot
  // compiles the full tier on this thread (other threads go on running
  // the quick code meanwhile).
  Fault run_linked(const CompiledCode& code, Linked& l, bool big_grid, const LaunchConfig& cfg, uint64_t first,
                   uint64_t last) const {
    CompiledCode now = code;
    now.range = reinterpret_cast<RangeFn>(l.range.load(std::memory_order_acquire));
    if (l.state.load(std::memory_order_relaxed) != Linked::kUpgradable) return devrt::run_blocks(now, cfg, first, last);
    const uint64_t start = __rdtsc();
    Fault f = devrt::run_blocks(now, cfg, first, last);
    const uint64_t spent = __rdtsc() - start;
    if (l.quick_ticks.fetch_add(spent, std::memory_order_relaxed) + spent >= kHotTicks)
      tier_up(l, *ast_, fi_, big_grid ? key_ + "+big" : key_, entry_.name, big_grid);
    return f;
  }

  KernelInfo info_;
  EntryDesc entry_;
  KernelLayout layout_;
  CompiledCode code_;  // its range is read from linked_ at each run
  std::shared_ptr<Linked> linked_;
  // For grids wider than kMaxGridX: the parsed text, shared with the
  // Program (a kernel may outlive it).
  std::shared_ptr<const Module> ast_;
  int fi_ = 0;
  std::string key_;
  mutable std::once_flag big_once_;
  mutable KernelLayout big_layout_;
  mutable CompiledCode big_code_;
  mutable std::shared_ptr<Linked> big_linked_;  // set once, in big_once_
};

class ProgramImpl final : public Program {
 public:
  const std::vector<EntryDesc>& entries() const override { return entries_; }
  const std::vector<GlobalDesc>& globals() const override { return globals_; }
  int find_entry(std::string_view name) const override {
    for (size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].name == name) return static_cast<int>(i);
    return -1;
  }
  int find_global(std::string_view name) const override {
    for (size_t i = 0; i < globals_.size(); ++i)
      if (globals_[i].name == name) return static_cast<int>(i);
    return -1;
  }
  int ptx_version() const override { return ast_.version_major * 10 + ast_.version_minor; }
  int target_sm() const override { return ast_.target_sm; }
  char target_variant() const override {
    for (const std::string& m : ast_.target_mods)
      if ((m.rfind("sm_", 0) == 0 || m.rfind("compute_", 0) == 0) && (m.back() == 'a' || m.back() == 'f'))
        return m.back();
    return 0;
  }

  std::shared_ptr<const Kernel> kernel(int index, std::string* log) const override {
    if (index < 0 || static_cast<size_t>(index) >= entries_.size()) {
      if (log) *log = "no such entry";
      return nullptr;
    }
    Slot& s = slots_[static_cast<size_t>(index)];
    std::lock_guard<std::mutex> g(s.mu);
    if (s.kernel) return s.kernel;
    if (!s.error.empty()) {  // a failed compile fails the same way again, without the cost
      if (log) *log = s.error;
      return nullptr;
    }
    std::string err;
    auto k = compile(index, &err);
    if (!k) {
      s.error = err;
      if (log) *log = err;
      return nullptr;
    }
    s.kernel = std::move(k);
    return s.kernel;
  }

  bool build(std::string* log);

  uint64_t function_address(std::string_view name, std::string* log) const override {
    std::lock_guard<std::mutex> g(fn_mu_);
    if (!fn_compiled_) {
      fn_compiled_ = true;
      compile_pointer_functions();
    }
    auto it = fn_addrs_.find(std::string(name));
    if (it == fn_addrs_.end()) {
      if (log) *log = fn_error_.empty() ? "no device function '" + std::string(name) + "'" : fn_error_;
      return 0;
    }
    return it->second;
  }
  std::vector<int> pointer_funcs_;  // functions whose addresses initializers hold

  std::shared_ptr<Module> ast_holder_ = std::make_shared<Module>();
  Module& ast_ = *ast_holder_;
  std::string text_;
  std::vector<EntryDesc> entries_;
  std::vector<int> entry_funcs_;  // entries_[i] is ast_.funcs[entry_funcs_[i]]
  std::vector<GlobalDesc> globals_;
  uint32_t const_bytes_ = 0;

 private:
  struct Slot {
    std::mutex mu;
    std::shared_ptr<const Kernel> kernel;
    std::string error;
  };
  mutable std::vector<Slot> slots_;
  mutable std::mutex fn_mu_;
  mutable bool fn_compiled_ = false;
  mutable std::map<std::string, uint64_t> fn_addrs_;
  mutable std::string fn_error_;

  // The address-taken functions, in a module of their own (code_key of the
  // text plus a marker, so each text's table is linked once).
  void compile_pointer_functions() const {
    if (pointer_funcs_.empty()) return;
    const std::string key = code_key(text_, "$pointer-functions");
    // Linked once per process, as kernels are: an equal text reuses the code.
    static std::mutex tables_mu;
    static auto* tables = new std::map<std::string, std::map<std::string, uint64_t>>;  // never destroyed, as the JIT
    std::lock_guard<std::mutex> g(tables_mu);
    if (auto it = tables->find(key); it != tables->end()) {
      fn_addrs_ = it->second;
      return;
    }
    std::vector<std::string> names;
    for (int fi : pointer_funcs_) names.push_back("cucpu_" + key + "_f_" + ast_.funcs[static_cast<size_t>(fi)].name);
    auto ctx = std::make_unique<llvm::LLVMContext>();
    std::unique_ptr<llvm::Module> mod;
    try {
      mod = lower_functions(ast_, pointer_funcs_, "cucpu_" + key, *ctx);
    } catch (const LowerError& e) {
      fn_error_ = "line " + std::to_string(e.line) + ", column " + std::to_string(e.col) + ": " + e.what;
      return;
    }
    std::string object;
    std::vector<uint64_t> addrs;
    if (!compile_object(std::move(mod), std::move(ctx), &object, &fn_error_) || !load_object(object, names, &addrs, &fn_error_))
      return;
    for (size_t i = 0; i < pointer_funcs_.size(); ++i) fn_addrs_[ast_.funcs[static_cast<size_t>(pointer_funcs_[i])].name] = addrs[i];
    (*tables)[key] = fn_addrs_;
  }

  std::shared_ptr<const Kernel> compile(int index, std::string* log) const;
  friend std::shared_ptr<Program> Program::parse(std::string_view, std::string*);
  void make_slots() { slots_ = std::vector<Slot>(entries_.size()); }
};

bool ProgramImpl::build(std::string* log) {
  for (size_t i = 0; i < ast_.funcs.size(); ++i) {
    const Function& f = ast_.funcs[i];
    if (!f.is_entry) continue;
    if (!f.has_body) continue;  // an .extern .entry: nothing to run here
    EntryDesc e;
    e.name = f.name;
    e.param_bytes = layout_params(f, &e.params);
    for (int k = 0; k < 3; ++k) {
      e.reqntid[k] = f.reqntid[k];
      e.maxntid[k] = f.maxntid[k];
    }
    e.min_blocks_per_sm = f.minnctapersm;
    if (e.param_bytes > 32764) {
      if (log) *log = "line " + std::to_string(f.line) + ", column 1: the parameters of '" + f.name + "' exceed 32764 bytes";
      return false;
    }
    entries_.push_back(std::move(e));
    entry_funcs_.push_back(static_cast<int>(i));
  }
  // Module variables the runtime backs with memory.
  std::map<std::string, uint32_t> index;
  for (const VarDecl& v : ast_.vars) {
    if (!backed_by_memory(v)) continue;
    index[v.name] = static_cast<uint32_t>(globals_.size());
    GlobalDesc g;
    g.name = v.name;
    g.space = v.space == Space::kConst ? GlobalDesc::Space::kConst : GlobalDesc::Space::kGlobal;
    g.managed = v.managed;
    g.is_extern = v.is_extern;
    g.size = v.size;
    g.align = v.align ? v.align : 1;
    g.init = v.init;
    if (g.space == GlobalDesc::Space::kConst) const_bytes_ += static_cast<uint32_t>(v.size);
    globals_.push_back(std::move(g));
  }
  // Address initializers name other variables.
  size_t gi = 0;
  for (const VarDecl& v : ast_.vars) {
    if (!backed_by_memory(v)) continue;
    for (auto& [off, expr] : v.sym_inits) {
      const size_t plus = expr.rfind('+');
      const std::string name = expr.substr(0, plus);
      auto it = index.find(name);
      auto fit = ast_.func_index.find(name);
      if (it == index.end() && fit != ast_.func_index.end() && !ast_.funcs[static_cast<size_t>(fit->second)].is_entry) {
        globals_[gi].relocs.push_back({off, 0, std::stoll(expr.substr(plus + 1)), name});
        pointer_funcs_.push_back(fit->second);
        continue;
      }
      if (it == index.end() && fit != ast_.func_index.end()) {
        // A kernel's address (dynamic parallelism's tables of kernels): a constant.
        const uint64_t value = (kEntryAddressTag | ast_.entry_ordinal(fit->second)) + static_cast<uint64_t>(std::stoll(expr.substr(plus + 1)));
        std::vector<uint8_t>& init = globals_[gi].init;
        if (init.size() < off + 8) init.resize(off + 8, 0);
        std::memcpy(init.data() + off, &value, 8);
        continue;
      }
      if (it == index.end()) {
        if (log) *log = "line 1, column 1: the initializer of '" + v.name + "' names '" + name + "', which is not a .global or .const variable";
        return false;
      }
      globals_[gi].relocs.push_back({off, it->second, std::stoll(expr.substr(plus + 1)), {}});
    }
    ++gi;
  }
  make_slots();
  return true;
}

std::mutex g_linked_mu;
std::map<std::string, std::shared_ptr<Linked>>& linked() {
  static auto* m = new std::map<std::string, std::shared_ptr<Linked>>;  // never destroyed, as the JIT
  return *m;
}

// Symbols are unique per process: each tier and each grid width has its own prefix.
std::string symbol_prefix(const std::string& key, bool big_grid, OptTier tier) {
  const std::string base = big_grid ? code_key(key, "big") : key;
  return "cucpu_" + (tier == OptTier::kQuick ? base : code_key(base, "full"));
}

std::unique_ptr<llvm::Module> lower_for(const Module& ast, int fi, const std::string& key, const std::string& text_name,
                                        bool big_grid, OptTier tier, llvm::LLVMContext& ctx, KernelLayout* layout,
                                        std::string* log) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    auto mod = lower_kernel(ast, fi, symbol_prefix(key, big_grid, tier), ctx, layout, big_grid);
    if (compile_times_wanted()) report_compile_time(text_name, "lowering", ms_since(t0));
    mod->setModuleIdentifier(text_name);
    return mod;
  } catch (const LowerError& e) {
    *log = "line " + std::to_string(e.line) + ", column " + std::to_string(e.col) + ": " + e.what + " (in '" + text_name + "')";
    return nullptr;
  }
}

std::shared_ptr<Linked> link_kernel(const Module& ast, int fi, const std::string& key, const std::string& text_name,
                                    bool big_grid, std::string* log) {
  {
    std::lock_guard<std::mutex> g(g_linked_mu);
    auto it = linked().find(key);
    if (it != linked().end()) return it->second;
  }
  auto l = std::make_shared<Linked>();
  std::string object;
  bool full = false;
  // Tiered compiles take either tier's object; the one-tier policies take their own tier's alone.
  const TierPolicy policy = tier_policy();
  const bool cached = disk_cache_load(key, &l->layout, &object, &full) &&
                      (policy == TierPolicy::kTiered || full == (policy == TierPolicy::kFullOnly));
  if (!cached) {
    const OptTier tier = policy == TierPolicy::kFullOnly ? OptTier::kFull : OptTier::kQuick;
    auto ctx = std::make_unique<llvm::LLVMContext>();
    auto mod = lower_for(ast, fi, key, text_name, big_grid, tier, *ctx, &l->layout, log);
    if (!mod || !compile_object(std::move(mod), std::move(ctx), &object, log, tier)) return nullptr;
    full = tier == OptTier::kFull;
    disk_cache_store(key, l->layout, object, full);
  }
  l->full.store(full, std::memory_order_relaxed);
  l->state.store(full || policy != TierPolicy::kTiered ? Linked::kFinal : Linked::kUpgradable,
                 std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(g_linked_mu);
  auto it = linked().find(key);  // another thread may have linked it meanwhile
  if (it != linked().end()) return it->second;
  std::vector<uint64_t> addrs;
  if (!load_object(object, {l->layout.range_name}, &addrs, log)) return nullptr;
  l->range.store(addrs[0], std::memory_order_release);
  linked()[key] = l;
  return l;
}

// Whether two lowerings of one kernel lay out its frames alike (they do:
// lowering is deterministic; checked, as a difference would be silent).
bool same_frames(const KernelLayout& a, const KernelLayout& b) {
  return a.frame_bytes == b.frame_bytes && a.frame_units == b.frame_units && a.local_stride == b.local_stride &&
         a.static_shared == b.static_shared && a.sites.size() == b.sites.size();
}

// Compiles `l`'s kernel at the full tier and swaps its code in, unless
// another thread already is or has. A failed compile leaves the quick code.
void tier_up(Linked& l, const Module& ast, int fi, const std::string& key, const std::string& text_name, bool big_grid) {
  int expected = Linked::kUpgradable;
  if (!l.state.compare_exchange_strong(expected, Linked::kUpgrading, std::memory_order_relaxed)) return;
  KernelLayout layout;
  std::string object, log;
  std::vector<uint64_t> addrs;
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = lower_for(ast, fi, key, text_name, big_grid, OptTier::kFull, *ctx, &layout, &log);
  if (mod && compile_object(std::move(mod), std::move(ctx), &object, &log, OptTier::kFull) &&
      same_frames(layout, l.layout) && load_object(object, {layout.range_name}, &addrs, &log)) {
    l.full.store(true, std::memory_order_relaxed);
    l.range.store(addrs[0], std::memory_order_release);
    disk_cache_store(key, layout, object, true);
  }
  l.state.store(Linked::kFinal, std::memory_order_relaxed);
}

void fill_code(const Linked& l, KernelLayout* layout, CompiledCode* code, const char* name) {
  *layout = l.layout;
  code->range = nullptr;  // read from l at each run (run_linked)
  code->sites = &layout->sites;
  code->frame_bytes = layout->frame_bytes;
  code->frame_units = layout->frame_units;
  code->local_stride = layout->local_stride;
  code->static_shared = layout->static_shared;
  code->name = name;
}

std::shared_ptr<const Kernel> ProgramImpl::compile(int index, std::string* log) const {
  const int fi = entry_funcs_[static_cast<size_t>(index)];
  const Function& f = ast_.funcs[static_cast<size_t>(fi)];
  auto k = std::make_shared<KernelImpl>();
  k->entry_ = entries_[static_cast<size_t>(index)];
  k->key_ = code_key(text_, f.name);
  k->ast_ = ast_holder_;
  k->fi_ = fi;
  k->linked_ = link_kernel(ast_, fi, k->key_, f.name, false, log);
  if (!k->linked_) return nullptr;
  fill_code(*k->linked_, &k->layout_, &k->code_, k->entry_.name.c_str());
  KernelInfo& info = k->info_;
  info.num_regs = k->layout_.num_regs;
  info.static_shared_bytes = k->layout_.static_shared;
  info.local_bytes = k->layout_.local_bytes;
  info.const_bytes = const_bytes_;
  // As the driver reports it: the PTX's target.
  info.ptx_version = ast_.target_sm;
  for (const Function& g : ast_.funcs)
    if (find_device_call(g.name)) info.device_runtime = true;
  uint32_t limit = 1024;
  if (f.maxntid[0]) limit = std::min(limit, f.maxntid[0] * f.maxntid[1] * f.maxntid[2]);
  if (f.reqntid[0]) limit = std::min(limit, f.reqntid[0] * f.reqntid[1] * f.reqntid[2]);
  info.max_threads_per_block = static_cast<int>(limit);
  return k;
}

struct Cache {
  std::mutex mu;
  std::multimap<size_t, std::weak_ptr<ProgramImpl>> by_hash;
};
Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: programs may outlive static destruction
  return *c;
}

}  // namespace

std::shared_ptr<Program> Program::parse(std::string_view text, std::string* log) {
  const size_t h = std::hash<std::string_view>{}(text);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> g(c.mu);
    auto [lo, hi] = c.by_hash.equal_range(h);
    for (auto it = lo; it != hi;) {
      if (auto p = it->second.lock()) {
        if (p->text_ == text) return p;
        ++it;
      } else {
        it = c.by_hash.erase(it);
      }
    }
  }
  auto p = std::make_shared<ProgramImpl>();
  std::string err;
  if (!parse_module(text, &p->ast_, &err) || !p->build(&err)) {
    if (log) *log = err;
    return nullptr;
  }
  p->text_ = std::string(text);
  std::lock_guard<std::mutex> g(c.mu);
  c.by_hash.emplace(h, p);
  return p;
}

}  // namespace cucpu::ptx
