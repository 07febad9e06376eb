// ORC LLJIT set up for the host CPU, with the runtime services bound by
// address and the process's own libraries (libm) searchable.
#include "ptx/jit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Utils/Mem2Reg.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <llvm/Support/raw_ostream.h>

#include "devrt/abi.h"
#include "devrt/check_rt.h"
#include "ptx/red_combine.h"
#include "devrt/texture.h"

extern "C" {
float cucpu_rt_add_f32(float, float, int32_t);
float cucpu_rt_sub_f32(float, float, int32_t);
float cucpu_rt_mul_f32(float, float, int32_t);
float cucpu_rt_div_f32(float, float, int32_t);
float cucpu_rt_fma_f32(float, float, float, int32_t);
float cucpu_rt_sqrt_f32(float, int32_t);
double cucpu_rt_add_f64(double, double, int32_t);
double cucpu_rt_sub_f64(double, double, int32_t);
double cucpu_rt_mul_f64(double, double, int32_t);
double cucpu_rt_div_f64(double, double, int32_t);
double cucpu_rt_fma_f64(double, double, double, int32_t);
double cucpu_rt_sqrt_f64(double, int32_t);
float cucpu_rt_i2f_f32(int64_t, int32_t, int32_t);
double cucpu_rt_i2f_f64(int64_t, int32_t, int32_t);
float cucpu_rt_d2f(double, int32_t);
uint16_t cucpu_rt_d2h(double);
uint16_t cucpu_rt_to_half(double, int32_t, int32_t);
uint16_t cucpu_rt_f32x2_to_fp8x2(float, float, int32_t);
uint32_t cucpu_rt_fp8x2_to_f16x2(uint16_t, int32_t);
uint16_t cucpu_rt_atomic_half(void*, uint16_t, uint32_t);
uint32_t cucpu_rt_atomic_half2(void*, uint32_t, uint32_t);
uint32_t cucpu_rt_fns(uint32_t, uint32_t, int32_t);
}

namespace cucpu::ptx {

namespace {

struct Jit {
  std::mutex load_mu;  // one object is added and looked up at a time
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::optional<llvm::orc::JITTargetMachineBuilder> tmb;
  std::string error;
  // glibc's vector math library, loaded into the process: the vectorizer
  // may then turn exp2, log2, sin and cos over a warp into its calls.
  bool libmvec = false;
  // CUCPU_PTX_LLVM_ARGS was given: LLVM's remarks are wanted (compile_object).
  bool llvm_args = false;
};

Jit* make_jit() {
  auto* j = new Jit;
  // CUCPU_PTX_LLVM_ARGS: extra LLVM options (for compiler work), e.g.
  // "-pass-remarks-missed=loop-vectorize".
  if (const char* a = std::getenv("CUCPU_PTX_LLVM_ARGS")) {
    j->llvm_args = true;
    static std::vector<std::string> words;
    static std::vector<const char*> argv = {"cucpu"};
    std::string w;
    for (const char* c = a;; ++c) {
      if (*c == ' ' || !*c) {
        if (!w.empty()) words.push_back(w);
        w.clear();
        if (!*c) break;
      } else {
        w += *c;
      }
    }
    for (auto& x : words) argv.push_back(x.c_str());
    llvm::cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data());
  }
  if (void* mvec = dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL)) {
    // glibc 2.35's functions, the newest the vectorizer may call (older
    // libmvecs lack them: then none is used).
    j->libmvec = true;
    for (const char* f : {"_ZGVdN8v_tanf", "_ZGVbN4v_exp2f", "_ZGVdN8v_exp2f", "_ZGVbN4v_log2f", "_ZGVdN8v_log2f",
                          "_ZGVbN2v_exp2", "_ZGVdN4v_exp2", "_ZGVbN2v_log2", "_ZGVdN4v_log2"})
      j->libmvec &= dlsym(mvec, f) != nullptr;
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto tmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmb) {
    j->error = llvm::toString(tmb.takeError());
    return j;
  }
  tmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  j->tmb = *tmb;
  auto built = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*tmb).create();
  if (!built) {
    j->error = llvm::toString(built.takeError());
    return j;
  }
  j->lljit = std::move(*built);
  llvm::orc::JITDylib& jd = j->lljit->getMainJITDylib();
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(j->lljit->getDataLayout().getGlobalPrefix());
  if (gen) jd.addGenerator(std::move(*gen));
  llvm::orc::SymbolMap syms;
  auto bind = [&](const char* name, auto* fn) {
    syms[j->lljit->mangleAndIntern(name)] =
        llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(reinterpret_cast<void*>(fn)), llvm::JITSymbolFlags::Exported);
  };
  bind("cucpu_rt_fault", &cucpu_rt_fault);
  bind("cucpu_rt_check_access", &cucpu_rt_check_access);
  bind("cucpu_rt_check_shared", &cucpu_rt_check_shared);
  bind("cucpu_rt_assert", &cucpu_rt_assert);
  bind("cucpu_rt_vprintf", &cucpu_rt_vprintf);
  bind("cucpu_rt_globaltimer", &cucpu_rt_globaltimer);
  bind("cucpu_rt_nanosleep", &cucpu_rt_nanosleep);
  bind("cucpu_rt_mbarrier", &cucpu_rt_mbarrier);
  bind("cucpu_rt_malloc", &cucpu_rt_malloc);
  bind("cucpu_rt_device_call", &cucpu_rt_device_call);
  bind("cucpu_rt_free", &cucpu_rt_free);
  bind("cucpu_rt_add_f32", &cucpu_rt_add_f32);
  bind("cucpu_rt_sub_f32", &cucpu_rt_sub_f32);
  bind("cucpu_rt_mul_f32", &cucpu_rt_mul_f32);
  bind("cucpu_rt_div_f32", &cucpu_rt_div_f32);
  bind("cucpu_rt_fma_f32", &cucpu_rt_fma_f32);
  bind("cucpu_rt_sqrt_f32", &cucpu_rt_sqrt_f32);
  bind("cucpu_rt_add_f64", &cucpu_rt_add_f64);
  bind("cucpu_rt_sub_f64", &cucpu_rt_sub_f64);
  bind("cucpu_rt_mul_f64", &cucpu_rt_mul_f64);
  bind("cucpu_rt_div_f64", &cucpu_rt_div_f64);
  bind("cucpu_rt_fma_f64", &cucpu_rt_fma_f64);
  bind("cucpu_rt_sqrt_f64", &cucpu_rt_sqrt_f64);
  bind("cucpu_rt_i2f_f32", &cucpu_rt_i2f_f32);
  bind("cucpu_rt_i2f_f64", &cucpu_rt_i2f_f64);
  bind("cucpu_rt_d2f", &cucpu_rt_d2f);
  bind("cucpu_rt_d2h", &cucpu_rt_d2h);
  bind("cucpu_rt_to_half", &cucpu_rt_to_half);
  bind("cucpu_rt_f32x2_to_fp8x2", &cucpu_rt_f32x2_to_fp8x2);
  bind("cucpu_rt_fp8x2_to_f16x2", &cucpu_rt_fp8x2_to_f16x2);
  bind("cucpu_rt_atomic_half", &cucpu_rt_atomic_half);
  bind("cucpu_rt_atomic_half2", &cucpu_rt_atomic_half2);
  bind("cucpu_rt_fns", &cucpu_rt_fns);
  bind("cucpu_rt_red", &cucpu_rt_red);
  bind("cucpu_rt_red_apply", &cucpu_rt_red_apply);
  bind("cucpu_rt_tex", &cucpu_rt_tex);
  bind("cucpu_rt_txq", &cucpu_rt_txq);
  bind("cucpu_rt_suld", &cucpu_rt_suld);
  bind("cucpu_rt_sust", &cucpu_rt_sust);
  if (auto err = jd.define(llvm::orc::absoluteSymbols(std::move(syms)))) j->error = llvm::toString(std::move(err));
  return j;
}

// The JIT outlives every user: it is never destroyed (compiled code may be
// running on a worker while the process exits).
Jit& jit() {
  static Jit* j = make_jit();
  return *j;
}

// Rewrites inttoptr(ptrtoint(P) + off) as a GEP from P, so that the
// optimizer (and the vectorizer's alias checks) see which object an
// address points into. PTX does address arithmetic on integers.
llvm::Value* pointer_of(llvm::Value* v, int depth, llvm::Instruction* at) {
  if (depth > 8) return nullptr;
  if (auto* pi = llvm::dyn_cast<llvm::PtrToIntInst>(v)) return pi->getOperand(0);
  auto* add = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (!add || add->getOpcode() != llvm::Instruction::Add) return nullptr;
  for (int side = 0; side < 2; ++side) {
    if (llvm::Value* base = pointer_of(add->getOperand(side), depth + 1, at)) {
      llvm::IRBuilder<> b(at);
      return b.CreateGEP(b.getInt8Ty(), base, add->getOperand(1 - side));
    }
  }
  return nullptr;
}

void derive_pointers(llvm::Module& mod) {
  for (llvm::Function& f : mod) {
    std::vector<llvm::IntToPtrInst*> casts;
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb)
        if (auto* c = llvm::dyn_cast<llvm::IntToPtrInst>(&i)) casts.push_back(c);
    for (llvm::IntToPtrInst* c : casts)
      if (llvm::Value* p = pointer_of(c->getOperand(0), 0, c)) {
        c->replaceAllUsesWith(p);
        c->eraseFromParent();
      }
  }
}

// Optimizes `mod` for `tm`. The quick tier stops after registers reach SSA
// form and the NaN rule; the full tier goes on to O3.
void optimize(llvm::Module& mod, llvm::TargetMachine& tm, OptTier tier) {
  const std::string cpu = tm.getTargetCPU().str(), features = tm.getTargetFeatureString().str();
  for (llvm::Function& f : mod) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", cpu);
    f.addFnAttr("target-features", features);
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::TargetLibraryInfoImpl tlii(tm.getTargetTriple());
  if (jit().libmvec && tm.getTargetFeatureString().contains("+avx2")) {
    tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, tm.getTargetTriple());
    // ex2 and lg2 (every expf and logf a kernel makes), which LLVM's
    // libmvec table leaves out; glibc has them since 2.35.
    static const llvm::VecDesc more[] = {
        {"llvm.exp2.f32", "_ZGVbN4v_exp2f", llvm::ElementCount::getFixed(4), false, "_ZGV_LLVM_N4v"},
        {"llvm.exp2.f32", "_ZGVdN8v_exp2f", llvm::ElementCount::getFixed(8), false, "_ZGV_LLVM_N8v"},
        {"llvm.log2.f32", "_ZGVbN4v_log2f", llvm::ElementCount::getFixed(4), false, "_ZGV_LLVM_N4v"},
        {"llvm.log2.f32", "_ZGVdN8v_log2f", llvm::ElementCount::getFixed(8), false, "_ZGV_LLVM_N8v"},
        {"llvm.exp2.f64", "_ZGVbN2v_exp2", llvm::ElementCount::getFixed(2), false, "_ZGV_LLVM_N2v"},
        {"llvm.exp2.f64", "_ZGVdN4v_exp2", llvm::ElementCount::getFixed(4), false, "_ZGV_LLVM_N4v"},
        {"llvm.log2.f64", "_ZGVbN2v_log2", llvm::ElementCount::getFixed(2), false, "_ZGV_LLVM_N2v"},
        {"llvm.log2.f64", "_ZGVdN4v_log2", llvm::ElementCount::getFixed(4), false, "_ZGV_LLVM_N4v"},
    };
    tlii.addVectorizableFunctions(more);
  }
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });  // before the defaults: the first one stays
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  {
    // Registers to SSA and a first clean-up, so that address arithmetic is visible.
    llvm::FunctionPassManager fpm;
    fpm.addPass(llvm::PromotePass());
    fpm.addPass(llvm::InstCombinePass());
    llvm::ModulePassManager early;
    early.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
    early.run(mod, mam);
  }
  for (llvm::Function& f : mod)
    if (!f.isDeclaration()) canonicalize_f32_nans(f);
  dump_stage("nan", mod);
  if (tier == OptTier::kQuick) return;
  derive_pointers(mod);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(mod, mam);
}

}  // namespace

std::string jit_target_id() {
  Jit& j = jit();
  if (!j.tmb) return "none";
  std::string id = j.tmb->getTargetTriple().str() + "/" + j.tmb->getCPU() + (j.libmvec ? "/libmvec" : "");
  for (const std::string& f : j.tmb->getFeatures().getFeatures()) id += f;
  return id;
}

TierPolicy tier_policy() {
  static const TierPolicy policy = [] {
    const char* v = std::getenv("CUCPU_JIT");
    const std::string s = v ? v : "";
    if (s == "quick") return TierPolicy::kQuickOnly;
    if (s == "full" || std::getenv("CUCPU_PTX_DUMP")) return TierPolicy::kFullOnly;
    if (!s.empty() && s != "tiered")
      std::fprintf(stderr, "[cucpu] CUCPU_JIT: unknown value '%s' (known: tiered, full, quick); compiling tiered\n", v);
    return TierPolicy::kTiered;
  }();
  return policy;
}

bool compile_times_wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("CUCPU_COMPILE_TIMES");
    return v && *v == '1';
  }();
  return wanted;
}

bool dump_wanted(const char* stage) {
  static const std::string stages = [] {
    const char* v = std::getenv("CUCPU_PTX_DUMP");
    std::string s = v ? v : "";
    return "," + (s == "1" ? std::string("optimized") : s) + ",";
  }();
  return stages.find("," + std::string(stage) + ",") != std::string::npos;
}

void dump_stage(const char* stage, const llvm::Module& mod) {
  if (!dump_wanted(stage)) return;
  llvm::errs() << "; ---- cucpu " << stage << ": " << mod.getModuleIdentifier() << "\n";
  mod.print(llvm::errs(), nullptr);
}

void report_compile_time(const std::string& what, const char* phase, double ms) {
  std::fprintf(stderr, "[cucpu] compile %s: %s %.1f ms\n", what.c_str(), phase, ms);
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

namespace {

// LLVM's diagnostics while a kernel compiles. Its warnings and remarks (a
// vectorization hint it could not follow, ...) are about cucpu's own IR,
// not the user's program: dropped, unless CUCPU_PTX_LLVM_ARGS asks LLVM
// for remarks (compiler work). An error is said on stderr (LLVM's own
// handler would end the process).
void on_llvm_diagnostic(const llvm::DiagnosticInfo* di, void*) {
  if (di->getSeverity() != llvm::DS_Error) return;
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::DiagnosticPrinterRawOStream printer(os);
  di->print(printer);
  std::fprintf(stderr, "[cucpu] the kernel compiler's LLVM reported an error: %s\n", os.str().c_str());
}

}  // namespace

bool compile_object(std::unique_ptr<llvm::Module> mod, std::unique_ptr<llvm::LLVMContext> ctx, std::string* object,
                    std::string* error, OptTier tier) {
  Jit& j = jit();
  if (!j.llvm_args) ctx->setDiagnosticHandlerCallBack(on_llvm_diagnostic);
  if (!j.lljit) {
    *error = "the JIT could not start: " + j.error;
    return false;
  }
  llvm::orc::JITTargetMachineBuilder tmb = *j.tmb;
  if (tier == OptTier::kQuick) tmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
  auto tm = tmb.createTargetMachine();
  if (!tm) {
    *error = llvm::toString(tm.takeError());
    return false;
  }
  mod->setDataLayout((*tm)->createDataLayout());
  mod->setTargetTriple((*tm)->getTargetTriple().str());
  auto t0 = std::chrono::steady_clock::now();
  const std::string what = compile_times_wanted() ? mod->getModuleIdentifier() : std::string();
  const char* tier_name = tier == OptTier::kQuick ? "quick " : "";
  optimize(*mod, **tm, tier);
  if (compile_times_wanted()) report_compile_time(what, (std::string(tier_name) + "optimize").c_str(), ms_since(t0));
  t0 = std::chrono::steady_clock::now();
  dump_stage("optimized", *mod);
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    *error = "the target cannot emit object files";
    return false;
  }
  pm.run(*mod);
  if (compile_times_wanted()) report_compile_time(what, (std::string(tier_name) + "code generation").c_str(), ms_since(t0));
  object->assign(buf.begin(), buf.end());
  mod.reset();
  ctx.reset();
  return true;
}

namespace {
// CUCPU_PERF_MAP=1: each loaded object's functions go to /tmp/perf-PID.map,
// where `perf report` finds names for JIT code. Addresses are placed by
// their offset from the first looked-up symbol of the same section (the JIT
// keeps a section's layout). Caller holds Jit::load_mu.
void write_perf_map(const std::string& object, const std::string& anchor, uint64_t anchor_addr) {
  static const bool enabled = [] {
    const char* v = std::getenv("CUCPU_PERF_MAP");
    return v && *v == '1';
  }();
  if (!enabled) return;
  auto parsed = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(object, "cucpu-kernel"));
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return;
  }
  llvm::object::ObjectFile& obj = **parsed;
  uint64_t anchor_value = 0;
  llvm::object::section_iterator anchor_section = obj.section_end();
  for (const llvm::object::SymbolRef& sym : obj.symbols()) {
    auto name = sym.getName();
    if (name && *name == anchor) {
      if (auto v = sym.getValue()) anchor_value = *v;
      if (auto sec = sym.getSection()) anchor_section = *sec;
    } else if (!name) {
      llvm::consumeError(name.takeError());
    }
  }
  if (anchor_section == obj.section_end()) return;
  static FILE* out = std::fopen(("/tmp/perf-" + std::to_string(getpid()) + ".map").c_str(), "a");
  if (!out) return;
  for (const llvm::object::ELFSymbolRef sym : obj.symbols()) {
    auto type = sym.getType();
    auto name = sym.getName();
    auto value = sym.getValue();
    auto sec = sym.getSection();
    if (!type || !name || !value || !sec) {
      if (!type) llvm::consumeError(type.takeError());
      if (!name) llvm::consumeError(name.takeError());
      if (!value) llvm::consumeError(value.takeError());
      if (!sec) llvm::consumeError(sec.takeError());
      continue;
    }
    if (*type != llvm::object::SymbolRef::ST_Function || *sec != anchor_section || sym.getSize() == 0) continue;
    std::fprintf(out, "%llx %llx %s\n", static_cast<unsigned long long>(anchor_addr + *value - anchor_value),
                 static_cast<unsigned long long>(sym.getSize()), name->str().c_str());
  }
  std::fflush(out);
}
}  // namespace

bool load_object(const std::string& object, const std::vector<std::string>& names, std::vector<uint64_t>* addrs,
                 std::string* error) {
  Jit& j = jit();
  if (!j.lljit) {
    *error = "the JIT could not start: " + j.error;
    return false;
  }
  // The JIT keeps the code for the life of the process: kernels may be running.
  std::lock_guard<std::mutex> g(j.load_mu);
  if (auto err = j.lljit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, "cucpu-kernel"))) {
    *error = llvm::toString(std::move(err));
    return false;
  }
  addrs->clear();
  for (const std::string& n : names) {
    auto sym = j.lljit->lookup(n);
    if (!sym) {
      *error = llvm::toString(sym.takeError());
      return false;
    }
    addrs->push_back(sym->getValue());
  }
  if (!names.empty()) write_perf_map(object, names[0], addrs->front());
  return true;
}

}  // namespace cucpu::ptx
