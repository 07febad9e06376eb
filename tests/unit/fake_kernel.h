// A stand-in for the PTX compiler: programs whose kernels are C++ lambdas,
// so that the runtime around kernels (modules, launches, graphs, faults)
// can be tested without compiling PTX.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/module.h"
#include "ptx/program.h"

namespace cucpu::test {

// Runs blocks [first, last) of a launch; returns the first fault.
using BlockFn = std::function<devrt::Fault(const devrt::LaunchConfig&, uint64_t first, uint64_t last)>;

class FakeKernel final : public ptx::Kernel {
 public:
  FakeKernel(ptx::EntryDesc e, ptx::KernelInfo i, BlockFn f) : entry_(std::move(e)), info_(i), fn_(std::move(f)) {}
  const ptx::KernelInfo& info() const override { return info_; }
  const ptx::EntryDesc& entry() const override { return entry_; }
  bool runs_full_tier() const override { return true; }
  devrt::Fault run_blocks(const devrt::LaunchConfig& cfg, uint64_t first, uint64_t last) const override {
    return fn_(cfg, first, last);
  }

 private:
  ptx::EntryDesc entry_;
  ptx::KernelInfo info_;
  BlockFn fn_;
};

class FakeProgram final : public ptx::Program {
 public:
  // An entry named `name` whose parameters are 8-byte values (pointers or
  // integers), laid out one after another.
  FakeProgram& add(const std::string& name, int num_params, BlockFn fn, ptx::KernelInfo info = {}) {
    ptx::EntryDesc e;
    e.name = name;
    for (int i = 0; i < num_params; ++i)
      e.params.push_back({"p" + std::to_string(i), static_cast<uint32_t>(8 * i), 8, 8});
    e.param_bytes = static_cast<uint32_t>(8 * num_params);
    return add_entry(std::move(e), std::move(fn), info);
  }
  FakeProgram& add_entry(ptx::EntryDesc e, BlockFn fn, ptx::KernelInfo info = {}) {
    entries_.push_back(e);
    kernels_.push_back(std::make_shared<FakeKernel>(std::move(e), info, std::move(fn)));
    return *this;
  }
  FakeProgram& add_global(ptx::GlobalDesc g) {
    globals_.push_back(std::move(g));
    return *this;
  }
  // A kernel that the compiler refuses.
  FakeProgram& refuse(int index) {
    kernels_[static_cast<size_t>(index)] = nullptr;
    return *this;
  }

  const std::vector<ptx::EntryDesc>& entries() const override { return entries_; }
  const std::vector<ptx::GlobalDesc>& globals() const override { return globals_; }
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
  int ptx_version() const override { return 80; }
  int target_sm() const override { return 90; }
  char target_variant() const override { return 0; }
  uint64_t function_address(std::string_view, std::string* log) const override {
    if (log) *log = "the fake program has no device functions";
    return 0;
  }
  std::shared_ptr<const ptx::Kernel> kernel(int index, std::string* log) const override {
    auto k = kernels_.at(static_cast<size_t>(index));
    if (!k && log) *log = "refused by the fake compiler";
    return k;
  }

 private:
  std::vector<ptx::EntryDesc> entries_;
  std::vector<ptx::GlobalDesc> globals_;
  std::vector<std::shared_ptr<const ptx::Kernel>> kernels_;
};

// The linear block index's coordinates, x fastest.
inline devrt::Dim3 block_of(const devrt::LaunchConfig& cfg, uint64_t b) {
  return {static_cast<uint32_t>(b % cfg.grid.x), static_cast<uint32_t>(b / cfg.grid.x % cfg.grid.y),
          static_cast<uint32_t>(b / (uint64_t{cfg.grid.x} * cfg.grid.y))};
}

// The i-th 8-byte parameter of a launch.
template <class T>
T param(const devrt::LaunchConfig& cfg, int i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(cfg.params) + 8 * i, sizeof v);
  return v;
}

// Loads `p` as a module of the current context (a CUmodule handle).
inline CUmodule load_fake(std::shared_ptr<FakeProgram> p, Context* ctx) {
  Module* m = nullptr;
  std::string log;
  if (Module::create(ctx, {std::move(p)}, nullptr, &m, &log) != CUDA_SUCCESS) return nullptr;
  return reinterpret_cast<CUmodule>(m);
}

}  // namespace cucpu::test
