// ORC LLJIT set up for the host CPU, with the runtime services bound by
// address and the process's own libraries (libm) searchable.
#include "ptx/jit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Function.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <mutex>

#include "ptx/abi.h"

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
uint16_t cucpu_rt_f32x2_to_fp8x2(float, float, int32_t);
uint32_t cucpu_rt_fp8x2_to_f16x2(uint16_t, int32_t);
uint16_t cucpu_rt_atomic_half(void*, uint16_t, uint32_t);
uint32_t cucpu_rt_atomic_half2(void*, uint32_t, uint32_t);
uint32_t cucpu_rt_fns(uint32_t, uint32_t, int32_t);
}

namespace cucpu::ptx {

namespace {

struct Jit {
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::optional<llvm::orc::JITTargetMachineBuilder> tmb;
  std::string error;
};

Jit* make_jit() {
  auto* j = new Jit;
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
  bind("cucpu_rt_assert", &cucpu_rt_assert);
  bind("cucpu_rt_vprintf", &cucpu_rt_vprintf);
  bind("cucpu_rt_globaltimer", &cucpu_rt_globaltimer);
  bind("cucpu_rt_nanosleep", &cucpu_rt_nanosleep);
  bind("cucpu_rt_malloc", &cucpu_rt_malloc);
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
  bind("cucpu_rt_f32x2_to_fp8x2", &cucpu_rt_f32x2_to_fp8x2);
  bind("cucpu_rt_fp8x2_to_f16x2", &cucpu_rt_fp8x2_to_f16x2);
  bind("cucpu_rt_atomic_half", &cucpu_rt_atomic_half);
  bind("cucpu_rt_atomic_half2", &cucpu_rt_atomic_half2);
  bind("cucpu_rt_fns", &cucpu_rt_fns);
  if (auto err = jd.define(llvm::orc::absoluteSymbols(std::move(syms)))) j->error = llvm::toString(std::move(err));
  return j;
}

// The JIT outlives every user: it is never destroyed (compiled code may be
// running on a worker while the process exits).
Jit& jit() {
  static Jit* j = make_jit();
  return *j;
}

void optimize(llvm::Module& mod, llvm::TargetMachine& tm) {
  const std::string cpu = tm.getTargetCPU().str(), features = tm.getTargetFeatureString().str();
  for (llvm::Function& f : mod) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", cpu);
    f.addFnAttr("target-features", features);
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(mod, mam);
}

}  // namespace

bool jit_compile(std::unique_ptr<llvm::Module> mod, std::unique_ptr<llvm::LLVMContext> ctx,
                 const std::vector<std::string>& names, std::vector<uint64_t>* addrs, std::string* error) {
  Jit& j = jit();
  if (!j.lljit) {
    *error = "the JIT could not start: " + j.error;
    return false;
  }
  auto tm = j.tmb->createTargetMachine();
  if (!tm) {
    *error = llvm::toString(tm.takeError());
    return false;
  }
  mod->setDataLayout((*tm)->createDataLayout());
  mod->setTargetTriple((*tm)->getTargetTriple().str());
  optimize(*mod, **tm);
  if (auto err = j.lljit->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), llvm::orc::ThreadSafeContext(std::move(ctx))))) {
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
  return true;
}

}  // namespace cucpu::ptx
