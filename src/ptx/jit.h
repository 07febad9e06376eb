// The JIT: optimizes a lowered module for this CPU and makes it callable.
// One process-wide ORC LLJIT; safe to call from many threads at once.
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cucpu::ptx {

// CUCPU_COMPILE_TIMES=1: each phase of each kernel's compilation (lowering,
// optimization, code generation) reports its time on stderr.
bool compile_times_wanted();
void report_compile_time(const std::string& what, const char* phase, double ms);
// Milliseconds from `start` to now (for report_compile_time).
double ms_since(std::chrono::steady_clock::time_point start);

// CUCPU_PTX_DUMP names the pipeline's stages whose IR goes to stderr,
// comma-separated: `lowered` (a kernel's step and the functions it calls,
// as lowering made them), `ranges` (with its range functions: what the
// optimizer gets), `optimized` (what code generation gets; `1` says the
// same). Whether `stage` is one of them:
bool dump_wanted(const char* stage);
// Prints `mod` under a header naming `stage`, when dump_wanted(stage).
void dump_stage(const char* stage, const llvm::Module& mod);

// Gives every f32 NaN an arithmetic operation makes the GPU's canonical
// bits (0x7fffffff) where they can be seen: stores, bit casts, widening to
// f64, calls and returns; NaNs passed through from memory keep their
// payloads, as on the GPU (nan_canonical.cpp). Run on SSA form.
void canonicalize_f32_nans(llvm::Function& fn);

// How hard compile_object works. Both tiers give the same results: the
// lowering fixes every rounding, NaN and memory rule, and the quick tier
// runs the NaN rule (canonicalize_f32_nans) too.
enum class OptTier {
  kQuick,  // registers to SSA and fast instruction selection: a first launch's code, in a few ms
  kFull,   // LLVM's O3 and its best code generation: the code a kernel is recompiled to
};

// Which tiers kernels are compiled with (CUCPU_JIT): `tiered` (the
// default: quick first, full once the kernel is hot; program.cpp), `full`
// (full at once, also whenever CUCPU_PTX_DUMP is set, so a dump shows the
// code that runs) or `quick` (never recompiled: for testing the quick tier).
enum class TierPolicy { kTiered, kFullOnly, kQuickOnly };
TierPolicy tier_policy();

// Optimizes `mod` (which lives in `ctx`; both are consumed) for this CPU
// at `tier` and compiles it to a relocatable object. False with *error on failure.
bool compile_object(std::unique_ptr<llvm::Module> mod, std::unique_ptr<llvm::LLVMContext> ctx, std::string* object,
                    std::string* error, OptTier tier = OptTier::kFull);

// Links an object from compile_object (now or in an earlier process) into
// the JIT and returns the addresses of `names`. Each object's symbols must
// be unique in the process.
bool load_object(const std::string& object, const std::vector<std::string>& names, std::vector<uint64_t>* addrs,
                 std::string* error);

// Identifies the code the JIT makes (target, CPU and its features), for cache keys.
std::string jit_target_id();

}  // namespace cucpu::ptx
