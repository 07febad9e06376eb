// Range functions (abi.h): the loops that step threads [first, last) of a
// block, a row (threads of one y, z) at a time, so that x is an induction
// variable of the inner loop (two divisions per row, none per thread).
//
// A kernel with cuts whose regions overlap little (lower_body decides) gets
// one loop per resume point, around a copy of the step that resumes there
// (only the code reachable from it remains: the region up to the next
// cuts), and the range function dispatches on `resume`; otherwise one loop
// passes `resume` on. Each loop stores its threads' codes and returns the code
// they share, from an unsigned min and max over them (reductions the loop
// vectorizer knows); misalignment is reported after the loop, so that the
// loop has no exit a vectorizer must keep.
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>

#include "ptx/lower.h"

namespace cucpu::ptx {

using llvm::Value;

namespace {

// Above this many cut sites, one loop takes the resume point at run time
// (each resume point's loop is a function of its own).
constexpr size_t kMaxSpecialized = 48;

llvm::Function* make_loop(llvm::Module& mod, llvm::Function* step, const std::string& name, bool cuts, int resume_const,
                          llvm::GlobalValue::LinkageTypes linkage) {
  llvm::LLVMContext& ctx = mod.getContext();
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  auto* run_ty = llvm::FunctionType::get(i32, {ptr, i64, ptr, i32, i32, i32, ptr}, false);
  llvm::Function* run = llvm::Function::Create(run_ty, linkage, name, mod);
  for (unsigned a : {0u, 2u, 6u}) run->addParamAttr(a, llvm::Attribute::NoAlias);  // frames, env, codes: the runner's own
  run->addDereferenceableParamAttr(2, sizeof(BlockEnv));
  run->addParamAttr(2, llvm::Attribute::getWithAlignment(ctx, llvm::Align(alignof(BlockEnv))));
  if (linkage == llvm::GlobalValue::InternalLinkage) run->addFnAttr(llvm::Attribute::NoInline);
  llvm::IRBuilder<> b(ctx);
  auto* entry_bb = llvm::BasicBlock::Create(ctx, "entry", run);
  auto* row = llvm::BasicBlock::Create(ctx, "row", run);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", run);
  auto* row_done = llvm::BasicBlock::Create(ctx, "row_done", run);
  auto* done = llvm::BasicBlock::Create(ctx, "done", run);
  b.SetInsertPoint(entry_bb);
  Value* frames = run->getArg(0);
  Value* pitch = run->getArg(1);
  Value* envp = run->getArg(2);
  Value* first = run->getArg(3);
  Value* last = run->getArg(4);
  Value* resume = resume_const >= 0 ? static_cast<Value*>(b.getInt32(static_cast<uint32_t>(resume_const))) : run->getArg(5);
  Value* codes = run->getArg(6);
  auto* env_ty = llvm::StructType::getTypeByName(ctx, "cucpu.env");
  llvm::AllocaInst* misaligned = b.CreateAlloca(i64, nullptr, "misaligned");
  b.CreateStore(b.getInt64(0), misaligned);
  auto ntid = [&](unsigned k) {
    return b.CreateLoad(i32, b.CreateInBoundsGEP(env_ty, envp, {b.getInt32(0), b.getInt32(0), b.getInt32(k)}));
  };
  Value* nx = ntid(0);
  Value* ny = ntid(1);
  b.CreateCondBr(b.CreateICmpULT(first, last), row, done);
  b.SetInsertPoint(row);
  llvm::PHINode* t0 = b.CreatePHI(i32, 2);
  t0->addIncoming(first, entry_bb);
  llvm::PHINode* lo_row = b.CreatePHI(i32, 2);
  lo_row->addIncoming(b.getInt32(0xffffffffu), entry_bb);
  llvm::PHINode* hi_row = b.CreatePHI(i32, 2);
  hi_row->addIncoming(b.getInt32(0), entry_bb);
  Value* x0 = b.CreateURem(t0, nx);
  Value* xy = b.CreateUDiv(t0, nx);
  Value* y = b.CreateURem(xy, ny);
  Value* z = b.CreateUDiv(xy, ny);
  Value* row_end = b.CreateAdd(b.CreateSub(t0, x0), nx);
  row_end = b.CreateSelect(b.CreateICmpULT(row_end, last), row_end, last);
  Value* count = b.CreateSub(row_end, t0);
  // The thread a wild access is blamed on: the row's first (compiled code
  // stores the exact thread itself before it reports a fault).
  b.CreateStore(t0, b.CreateStructGEP(env_ty, envp, 10));
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i32, 2);
  i->addIncoming(b.getInt32(0), row);
  llvm::PHINode* lo = b.CreatePHI(i32, 2);
  lo->addIncoming(lo_row, row);
  llvm::PHINode* hi = b.CreatePHI(i32, 2);
  hi->addIncoming(hi_row, row);
  Value* t = b.CreateAdd(t0, i, "t", true, true);
  Value* x = b.CreateAdd(x0, i, "x", true, true);
  Value* code = b.CreateCall(step, {frames, envp, t, x, y, z, resume, misaligned, pitch});
  Value* lo_next = lo;
  Value* hi_next = hi;
  if (cuts) {
    b.CreateStore(code, b.CreateGEP(i32, codes, b.CreateZExt(t, i64)));
    lo_next = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, lo, code);
    hi_next = b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, hi, code);
  }
  lo->addIncoming(lo_next, loop);
  hi->addIncoming(hi_next, loop);
  Value* next = b.CreateAdd(i, b.getInt32(1), "", true, true);
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpULT(next, count), loop, row_done);
  b.SetInsertPoint(row_done);
  t0->addIncoming(row_end, row_done);
  lo_row->addIncoming(lo_next, row_done);
  hi_row->addIncoming(hi_next, row_done);
  b.CreateCondBr(b.CreateICmpULT(row_end, last), row, done);
  b.SetInsertPoint(done);
  llvm::PHINode* lo_all = b.CreatePHI(i32, 2);
  lo_all->addIncoming(b.getInt32(0), entry_bb);
  lo_all->addIncoming(lo_next, row_done);
  llvm::PHINode* hi_all = b.CreatePHI(i32, 2);
  hi_all->addIncoming(b.getInt32(0), entry_bb);
  hi_all->addIncoming(hi_next, row_done);
  // Without cuts every thread returns 0.
  Value* result = cuts ? b.CreateSelect(b.CreateICmpEQ(lo_all, hi_all), lo_all, b.getInt32(kMixedCodes))
                       : static_cast<Value*>(b.getInt32(0));
  Value* bad = b.CreateLoad(i64, misaligned);
  auto* fault_bb = llvm::BasicBlock::Create(ctx, "misaligned", run);
  auto* ret_bb = llvm::BasicBlock::Create(ctx, "ret", run);
  b.CreateCondBr(b.CreateICmpNE(bad, b.getInt64(0)), fault_bb, ret_bb);
  b.SetInsertPoint(fault_bb);
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, i32, i64}, false);
  llvm::Function* rt = mod.getFunction("cucpu_rt_fault");
  if (!rt) rt = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "cucpu_rt_fault", mod);
  rt->setDoesNotReturn();
  b.CreateCall(rt, {envp, b.getInt32(static_cast<uint32_t>(FaultKind::kMisalignedAddress)), bad});
  b.CreateUnreachable();
  b.SetInsertPoint(ret_bb);
  b.CreateRet(result);
  return run;
}

// A copy of `step` that always resumes at `resume`: only the code reachable
// from there remains.
llvm::Function* resuming_at(llvm::Function* step, uint32_t resume) {
  llvm::ValueToValueMapTy vmap;
  llvm::Function* s = llvm::CloneFunction(step, vmap);
  s->setName(step->getName() + ".r" + std::to_string(resume));
  llvm::SwitchInst* sw = nullptr;
  for (llvm::BasicBlock& bb : *s)
    if (auto* x = llvm::dyn_cast<llvm::SwitchInst>(bb.getTerminator()); x && x->getCondition() == s->getArg(6)) sw = x;
  if (!sw) return s;
  llvm::BasicBlock* dest = sw->getDefaultDest();
  for (auto& c : sw->cases())
    if (c.getCaseValue()->getZExtValue() == resume) dest = c.getCaseSuccessor();
  llvm::BranchInst::Create(dest, sw);
  sw->eraseFromParent();
  llvm::removeUnreachableBlocks(*s);
  return s;
}

}  // namespace

void make_ranges(llvm::Module& mod, llvm::Function* step, const KernelLayout& layout, bool specialize) {
  const bool cuts = layout.frame_bytes != 0;
  const size_t nsites = layout.sites.size();
  if (!cuts || !specialize || nsites > kMaxSpecialized) {
    make_loop(mod, step, layout.range_name, cuts, -1, llvm::Function::ExternalLinkage);
    return;
  }
  bool machine = false;
  for (const CutSite& cs : layout.sites) machine |= warp_resolvable(cs);
  std::vector<llvm::Function*> loops, steps;
  for (size_t r = 0; r <= nsites; ++r) {
    steps.push_back(resuming_at(step, static_cast<uint32_t>(r)));
    loops.push_back(make_loop(mod, steps.back(), layout.range_name + ".r" + std::to_string(r), true, static_cast<int>(r),
                              llvm::Function::InternalLinkage));
  }
  step->eraseFromParent();
  // The dispatcher (the warp machine's fallback when there is one).
  llvm::LLVMContext& ctx = mod.getContext();
  llvm::Function* run = llvm::Function::Create(loops[0]->getFunctionType(),
                                               machine ? llvm::Function::InternalLinkage : llvm::Function::ExternalLinkage,
                                               layout.range_name + (machine ? ".loops" : ""), mod);
  for (unsigned a : {0u, 2u, 6u}) run->addParamAttr(a, llvm::Attribute::NoAlias);
  run->addDereferenceableParamAttr(2, sizeof(BlockEnv));
  run->addParamAttr(2, llvm::Attribute::getWithAlignment(ctx, llvm::Align(alignof(BlockEnv))));
  llvm::IRBuilder<> b(ctx);
  auto* entry_bb = llvm::BasicBlock::Create(ctx, "entry", run);
  std::vector<llvm::BasicBlock*> cases;
  for (size_t r = 0; r <= nsites; ++r) cases.push_back(llvm::BasicBlock::Create(ctx, "r" + std::to_string(r), run));
  b.SetInsertPoint(entry_bb);
  auto* sw = b.CreateSwitch(run->getArg(5), cases[0], static_cast<unsigned>(nsites));
  std::vector<Value*> args;
  for (llvm::Argument& a : run->args()) args.push_back(&a);
  for (size_t r = 0; r <= nsites; ++r) {
    if (r) sw->addCase(b.getInt32(static_cast<uint32_t>(r)), cases[r]);
    b.SetInsertPoint(cases[r]);
    llvm::CallInst* c = b.CreateCall(loops[r], args);
    c->setTailCall();
    b.CreateRet(c);
  }
  if (machine) make_warp_machine(mod, steps, layout, run);
}

}  // namespace cucpu::ptx
