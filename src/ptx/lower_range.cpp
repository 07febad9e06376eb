// Range functions (abi.h): the loops that step threads [first, last) of a
// block, a row (threads of one y, z) at a time, so that x is an induction
// variable of the inner loop (divisions for the first row only, none per thread).
//
// A kernel with cuts whose regions overlap little (lower_body decides) gets
// one loop per resume point, around a copy of the step that resumes there
// (only the code reachable from it remains: the region up to the next
// cuts), and the range function dispatches on `resume`; otherwise one loop
// passes `resume` on. Each loop stores its threads' codes; the code they
// share comes from an unsigned min and max over the stored codes, taken in
// a loop of its own after the threads' loop (inside it, a region that can
// stop at one cut only makes the reductions fold into forms the loop
// vectorizer no longer knows). Misalignment is reported after the loop, so
// that the loop has no exit a vectorizer must keep.
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Mem2Reg.h>

#include <set>

#include "ptx/lower.h"

namespace cucpu::ptx {

using llvm::Value;

namespace {

// Above this many cut sites, one loop takes the resume point at run time
// (each resume point's loop is a function of its own), beside the warp
// machine where the kernel has collectives it resolves.
constexpr size_t kMaxSpecialized = 48;
// The largest range of one load site that the next block's prefetch covers.
constexpr uint64_t kMaxStreamBytes = 16384;

// Next-block prefetch, in a loop that starts the threads of a block (its
// step call `call` is inlined here; `at` is where the loop is done). A
// block's threads read through each of the first kStreamSites plain global
// loads (kGlobalLoadTag) a range of addresses, from the lowest to the end
// of the highest (a min and a max the loop vectorizer keeps as
// reductions). When a block's range starts where the previous block's
// ended (env stream_next: blocks of a worker run in order), the next one
// is taken to go on, and the lines it would read are prefetched now: the
// work before the next block starts hides their latency, which the
// hardware's own prefetcher does not reach across the gap between blocks.
void prefetch_next_block(llvm::Function* run, llvm::CallInst* call, llvm::StructType* env_ty, Value* envp,
                         llvm::Instruction* at) {
  llvm::InlineFunctionInfo ifi;
  if (!llvm::InlineFunction(*call, ifi).isSuccess()) return;
  std::vector<llvm::LoadInst*> sites;
  for (llvm::BasicBlock& bb : *run)
    for (llvm::Instruction& i : bb)
      if (auto* ld = llvm::dyn_cast<llvm::LoadInst>(&i); ld && ld->getMetadata(kGlobalLoadTag) && sites.size() < kStreamSites)
        sites.push_back(ld);
  if (sites.empty()) return;
  llvm::LLVMContext& ctx = run->getContext();
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::IRBuilder<> e(&run->getEntryBlock(), run->getEntryBlock().getFirstInsertionPt());
  llvm::IRBuilder<> b(ctx);
  const llvm::DataLayout& dl = run->getParent()->getDataLayout();
  for (size_t k = 0; k < sites.size(); ++k) {
    llvm::AllocaInst* lo = e.CreateAlloca(i64, nullptr, "stream.lo");
    llvm::AllocaInst* hi = e.CreateAlloca(i64, nullptr, "stream.hi");
    e.CreateStore(e.getInt64(~uint64_t{0}), lo);
    e.CreateStore(e.getInt64(0), hi);
    llvm::LoadInst* ld = sites[k];
    b.SetInsertPoint(ld->getNextNode());
    Value* a = b.CreatePtrToInt(ld->getPointerOperand(), i64);
    Value* end = b.CreateAdd(a, b.getInt64(dl.getTypeStoreSize(ld->getType())));
    b.CreateStore(b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b.CreateLoad(i64, lo), a), lo);
    b.CreateStore(b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, b.CreateLoad(i64, hi), end), hi);
    // After the loop: compare with the previous block's, remember, prefetch.
    llvm::BasicBlock* here = at->getParent();
    llvm::BasicBlock* rest = here->splitBasicBlock(at, "stream.rest");
    auto* fetch = llvm::BasicBlock::Create(ctx, "stream.fetch", run, rest);
    here->getTerminator()->eraseFromParent();
    b.SetInsertPoint(here);
    Value* l = b.CreateLoad(i64, lo);
    Value* h = b.CreateLoad(i64, hi);
    Value* words = b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(env_ty, envp, 11));
    Value* slot = b.CreateInBoundsGEP(i64, words, b.getInt64(k));
    Value* prev = b.CreateLoad(i64, slot);
    Value* read = b.CreateICmpULT(l, h);
    b.CreateStore(b.CreateSelect(read, h, prev), slot);
    Value* go_on = b.CreateAnd(b.CreateAnd(read, b.CreateICmpEQ(prev, l)),
                               b.CreateICmpULE(b.CreateSub(h, l), b.getInt64(kMaxStreamBytes)));
    b.CreateCondBr(go_on, fetch, rest);
    b.SetInsertPoint(fetch);
    llvm::PHINode* p = b.CreatePHI(i64, 2);
    p->addIncoming(h, here);
    b.CreateIntrinsic(llvm::Intrinsic::prefetch, {b.getPtrTy()},
                      {b.CreateIntToPtr(p, b.getPtrTy()), b.getInt32(0), b.getInt32(3), b.getInt32(1)});
    Value* p2 = b.CreateAdd(p, b.getInt64(64));
    p->addIncoming(p2, fetch);
    b.CreateCondBr(b.CreateICmpULT(p2, b.CreateAdd(h, b.CreateSub(h, l))), fetch, rest);
  }
}

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
  llvm::AllocaInst* misaligned = b.CreateAlloca(b.getInt8Ty(), nullptr, "misaligned");  // the steps' or of low address bits
  b.CreateStore(b.getInt8(0), misaligned);
  auto ntid = [&](unsigned k) {
    return b.CreateLoad(i32, b.CreateInBoundsGEP(env_ty, envp, {b.getInt32(0), b.getInt32(0), b.getInt32(k)}));
  };
  Value* nx = ntid(0);
  Value* ny = ntid(1);
  // The first row's coordinates by division; each next row's by a step
  // (it starts at x 0, one y on, wrapping into z).
  Value* x_first = b.CreateURem(first, nx);
  Value* xy_first = b.CreateUDiv(first, nx);
  Value* y_first = b.CreateURem(xy_first, ny);
  Value* z_first = b.CreateUDiv(xy_first, ny);
  b.CreateCondBr(b.CreateICmpULT(first, last), row, done);
  b.SetInsertPoint(row);
  llvm::PHINode* t0 = b.CreatePHI(i32, 2);
  llvm::PHINode* x0 = b.CreatePHI(i32, 2);
  llvm::PHINode* y = b.CreatePHI(i32, 2);
  llvm::PHINode* z = b.CreatePHI(i32, 2);
  t0->addIncoming(first, entry_bb);
  x0->addIncoming(x_first, entry_bb);
  y->addIncoming(y_first, entry_bb);
  z->addIncoming(z_first, entry_bb);
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
  Value* t = b.CreateAdd(t0, i, "t", true, true);
  Value* x = b.CreateAdd(x0, i, "x", true, true);
  llvm::CallInst* code = b.CreateCall(step, {frames, envp, t, x, y, z, resume, misaligned, pitch});
  if (cuts) b.CreateStore(code, b.CreateGEP(i32, codes, b.CreateZExt(t, i64)));
  Value* next = b.CreateAdd(i, b.getInt32(1), "", true, true);
  i->addIncoming(next, loop);
  llvm::BranchInst* latch = b.CreateCondBr(b.CreateICmpULT(next, count), loop, row_done);
  if (cuts) ask_frame_loop_width(latch);
  b.SetInsertPoint(row_done);
  t0->addIncoming(row_end, row_done);
  Value* y_next = b.CreateAdd(y, b.getInt32(1), "", true, true);
  Value* wraps = b.CreateICmpEQ(y_next, ny);
  x0->addIncoming(b.getInt32(0), row_done);
  y->addIncoming(b.CreateSelect(wraps, b.getInt32(0), y_next), row_done);
  z->addIncoming(b.CreateAdd(z, b.CreateZExt(wraps, i32), "", true, true), row_done);
  // Without cuts every thread returns 0.
  Value* result = b.getInt32(0);
  if (cuts) {
    // The codes' min and max over [first, last) (the span is not empty here).
    auto* scan = llvm::BasicBlock::Create(ctx, "scan", run);
    auto* scanned = llvm::BasicBlock::Create(ctx, "scanned", run);
    b.CreateCondBr(b.CreateICmpULT(row_end, last), row, scan);
    b.SetInsertPoint(scan);
    llvm::PHINode* k = b.CreatePHI(i32, 2);
    llvm::PHINode* lo = b.CreatePHI(i32, 2);
    llvm::PHINode* hi = b.CreatePHI(i32, 2);
    k->addIncoming(first, row_done);
    lo->addIncoming(b.getInt32(0xffffffffu), row_done);
    hi->addIncoming(b.getInt32(0), row_done);
    Value* c = b.CreateLoad(i32, b.CreateGEP(i32, codes, b.CreateZExt(k, i64)));
    Value* lo_next = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, lo, c);
    Value* hi_next = b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, hi, c);
    Value* k_next = b.CreateAdd(k, b.getInt32(1), "", true, true);
    k->addIncoming(k_next, scan);
    lo->addIncoming(lo_next, scan);
    hi->addIncoming(hi_next, scan);
    b.CreateCondBr(b.CreateICmpULT(k_next, last), scan, scanned);
    b.SetInsertPoint(scanned);
    Value* shared = b.CreateSelect(b.CreateICmpEQ(lo_next, hi_next), lo_next, b.getInt32(kMixedCodes));
    b.CreateBr(done);
    b.SetInsertPoint(done);
    llvm::PHINode* r = b.CreatePHI(i32, 2);
    r->addIncoming(b.getInt32(0), entry_bb);
    r->addIncoming(shared, scanned);
    result = r;
  } else {
    b.CreateCondBr(b.CreateICmpULT(row_end, last), row, done);
    b.SetInsertPoint(done);
  }
  Value* bad = b.CreateLoad(b.getInt8Ty(), misaligned);
  auto* fault_bb = llvm::BasicBlock::Create(ctx, "misaligned", run);
  auto* ret_bb = llvm::BasicBlock::Create(ctx, "ret", run);
  b.CreateCondBr(b.CreateICmpNE(bad, b.getInt8(0)), fault_bb, ret_bb);
  b.SetInsertPoint(fault_bb);
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, i32, i64}, false);
  llvm::Function* rt = mod.getFunction("cucpu_rt_fault");
  if (!rt) rt = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "cucpu_rt_fault", mod);
  rt->setDoesNotReturn();
  b.CreateCall(rt, {envp, b.getInt32(static_cast<uint32_t>(FaultKind::kMisalignedAddress)), b.getInt64(0)});  // address not kept
  b.CreateUnreachable();
  b.SetInsertPoint(ret_bb);
  llvm::Instruction* ret = b.CreateRet(result);
  // The first region of a kernel with cuts starts a block, and other
  // regions run before the next block starts (a kernel without cuts is one
  // loop per block, back to back: the hardware's prefetcher follows it).
  if (resume_const == 0 && cuts) prefetch_next_block(run, code, env_ty, envp, ret);
  return run;
}

// A copy of `step` that always resumes at `resume`: only the blocks reachable
// from the entry through that case of the dispatch (the switch on the
// resume point, argument 6) are copied, so a copy costs its region, not
// the kernel; the resume point is a constant in it.
llvm::Function* resuming_at(llvm::Function* step, uint32_t resume) {
  llvm::Argument* point = step->getArg(6);
  auto* point_ty = llvm::cast<llvm::IntegerType>(point->getType());
  // The block a dispatch (a switch on the resume point) goes to for
  // `resume`, or nullptr when bb ends otherwise.
  auto resumed_by = [&](llvm::BasicBlock* bb) -> llvm::BasicBlock* {
    auto* sw = llvm::dyn_cast<llvm::SwitchInst>(bb->getTerminator());
    if (!sw || sw->getCondition() != point) return nullptr;
    return sw->findCaseValue(llvm::ConstantInt::get(point_ty, resume))->getCaseSuccessor();
  };
  std::vector<llvm::BasicBlock*> order = {&step->getEntryBlock()};
  std::set<llvm::BasicBlock*> seen = {order[0]};
  for (size_t i = 0; i < order.size(); ++i) {
    llvm::BasicBlock* bb = order[i];
    auto visit = [&](llvm::BasicBlock* next) {
      if (seen.insert(next).second) order.push_back(next);
    };
    if (llvm::BasicBlock* dest = resumed_by(bb)) visit(dest);
    else
      for (llvm::BasicBlock* next : llvm::successors(bb)) visit(next);
  }
  llvm::Function* s = llvm::Function::Create(step->getFunctionType(), step->getLinkage(),
                                             step->getName() + ".r" + std::to_string(resume), step->getParent());
  s->copyAttributesFrom(step);
  llvm::ValueToValueMapTy vmap;
  for (unsigned i = 0; i < step->arg_size(); ++i) {
    s->getArg(i)->setName(step->getArg(i)->getName());
    vmap[step->getArg(i)] = s->getArg(i);
  }
  vmap[point] = llvm::ConstantInt::get(point_ty, resume);
  llvm::SmallVector<llvm::BasicBlock*, 64> copies;
  std::set<llvm::BasicBlock*> dispatches;  // copies whose dispatch is now a branch
  for (llvm::BasicBlock* bb : order) {
    llvm::BasicBlock* copy = llvm::CloneBasicBlock(bb, vmap, "", s);
    vmap[bb] = copy;
    copies.push_back(copy);
    if (llvm::BasicBlock* dest = resumed_by(bb)) {
      // The copy's dispatch becomes a branch: one edge, so one PHI entry.
      llvm::Instruction* term = copy->getTerminator();
      llvm::BranchInst::Create(dest, term);
      term->eraseFromParent();
      dispatches.insert(copy);
    }
  }
  llvm::remapInstructionsInBlocks(copies, vmap);
  // PHI entries from blocks not copied (their edges are gone), and all but
  // one entry from a dispatch now a branch.
  for (llvm::BasicBlock* copy : copies)
    for (llvm::PHINode& phi : copy->phis()) {
      std::set<llvm::BasicBlock*> kept;
      for (unsigned i = phi.getNumIncomingValues(); i-- > 0;) {
        llvm::BasicBlock* from = phi.getIncomingBlock(i);
        const bool edge = from->getParent() == s && llvm::is_contained(llvm::successors(from), copy);
        if (!edge || (dispatches.count(from) && !kept.insert(from).second)) phi.removeIncomingValue(i, false);
      }
    }
  return s;
}

// The step's registers to SSA values before it is copied once per resume
// point: its entry block holds an alloca for every register of the kernel,
// which each copy would carry (and the optimizer then remove) again.
void promote_registers(llvm::Function& step) {
  llvm::FunctionAnalysisManager fam;
  llvm::PassBuilder pb;
  pb.registerFunctionAnalyses(fam);
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::PromotePass());
  fpm.run(step, fam);
}

uint32_t row_tag_field(llvm::MDNode* tag, unsigned k) {
  return static_cast<uint32_t>(llvm::mdconst::extract<llvm::ConstantInt>(tag->getOperand(k))->getZExtValue());
}

// The loop of round site `row.site` in two versions: `general` (the loop
// made from the step as it is), and one made from `step` where every load
// of the uniform row is the value of the span's first thread. A test over
// the span's rows picks the second when all of them hold that value.
llvm::Function* with_uniform_row(llvm::Module& mod, llvm::Function* step, llvm::Function* general,
                                 const KernelLayout::UniformRow& row) {
  llvm::LLVMContext& ctx = mod.getContext();
  const std::string name = general->getName().str();
  // The general loop runs only for spans whose threads went round apart (a
  // block that diverged before the loop): its step stays a call, so that
  // the region is not widened (and compiled) twice more.
  for (llvm::BasicBlock& bb : *general)
    for (llvm::Instruction& i : bb)
      if (auto* c = llvm::dyn_cast<llvm::CallInst>(&i); c && c->getCalledFunction() && !c->getCalledFunction()->isIntrinsic())
        c->addFnAttr(llvm::Attribute::NoInline);
  llvm::Function* fast_step = resuming_at(step, row.site);
  llvm::Function* fast = make_loop(mod, fast_step, name + ".uniform", true, static_cast<int>(row.site),
                                   llvm::Function::InternalLinkage);
  llvm::CallInst* call = nullptr;
  for (llvm::BasicBlock& bb : *fast)
    for (llvm::Instruction& i : bb)
      if (auto* c = llvm::dyn_cast<llvm::CallInst>(&i); c && c->getCalledFunction() == fast_step) call = c;
  llvm::InlineFunctionInfo ifi;
  if (!call || !llvm::InlineFunction(*call, ifi).isSuccess()) {
    fast->eraseFromParent();
    fast_step->eraseFromParent();
    return general;
  }
  fast_step->eraseFromParent();
  llvm::Type* ty = llvm::Type::getIntNTy(ctx, row.elem * 8);
  llvm::IRBuilder<> b(ctx);
  // The row's element of thread `t`, in the function `fn` whose arguments are the range function's.
  auto element = [&](llvm::Function* fn, Value* t) {
    Value* base = b.CreateGEP(b.getInt8Ty(), fn->getArg(0), b.CreateMul(fn->getArg(1), b.getInt64(row.unit)));
    return b.CreateLoad(ty, b.CreateGEP(ty, base, b.CreateZExt(t, b.getInt64Ty())));
  };
  b.SetInsertPoint(&fast->getEntryBlock(), fast->getEntryBlock().getFirstInsertionPt());
  Value* v0 = element(fast, fast->getArg(3));
  std::vector<llvm::LoadInst*> uses;
  for (llvm::BasicBlock& bb : *fast)
    for (llvm::Instruction& i : bb)
      if (auto* ld = llvm::dyn_cast<llvm::LoadInst>(&i); ld && ld->getType() == ty)
        if (llvm::MDNode* tag = ld->getMetadata(kRowTag); tag && row_tag_field(tag, 0) == row.site && row_tag_field(tag, 1) == row.unit)
          uses.push_back(ld);
  for (llvm::LoadInst* ld : uses) {
    ld->replaceAllUsesWith(v0);
    ld->eraseFromParent();
  }
  // The test: first < last here (the runner steps no empty span).
  llvm::Function* pick = llvm::Function::Create(general->getFunctionType(), llvm::Function::InternalLinkage, name + ".pick", mod);
  pick->copyAttributesFrom(general);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", pick);
  auto* scan = llvm::BasicBlock::Create(ctx, "scan", pick);
  auto* go = llvm::BasicBlock::Create(ctx, "go", pick);
  b.SetInsertPoint(entry);
  Value* first = pick->getArg(3);
  Value* last = pick->getArg(4);
  Value* want = element(pick, first);
  b.CreateBr(scan);
  b.SetInsertPoint(scan);
  llvm::PHINode* t = b.CreatePHI(b.getInt32Ty(), 2);
  llvm::PHINode* same = b.CreatePHI(b.getInt1Ty(), 2);
  t->addIncoming(first, entry);
  same->addIncoming(b.getTrue(), entry);
  Value* same_next = b.CreateAnd(same, b.CreateICmpEQ(element(pick, t), want));
  Value* t_next = b.CreateAdd(t, b.getInt32(1), "", true, true);
  t->addIncoming(t_next, scan);
  same->addIncoming(same_next, scan);
  b.CreateCondBr(b.CreateICmpULT(t_next, last), scan, go);
  b.SetInsertPoint(go);
  std::vector<Value*> args;
  for (llvm::Argument& a : pick->args()) args.push_back(&a);
  Value* r = b.CreateSelect(same_next, fast, general);
  llvm::CallInst* c = b.CreateCall(general->getFunctionType(), r, args);
  c->setTailCall();
  b.CreateRet(c);
  return pick;
}

}  // namespace

// The vector width asked of a thread loop that passes values through frame
// rows. Its rows are 8 bytes a thread (abi.h) where the values are mostly 4,
// and the vectorizer sizes a loop by its widest type: left alone it runs
// such loops 4 threads at a time on 256-bit registers. 16 threads measured
// fastest for the tile loads of SGEMM (2.0x), the block reduction (1.4x)
// and the histogram (1.2x); loops without frame rows (streaming kernels)
// keep the vectorizer's own choice, which measured best for them.
constexpr unsigned kFrameLoopLanes = 16;

void ask_frame_loop_width(llvm::BranchInst* latch) {
  llvm::LLVMContext& ctx = latch->getContext();
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Metadata* width[] = {llvm::MDString::get(ctx, "llvm.loop.vectorize.width"),
                             llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(i32, kFrameLoopLanes))};
  llvm::Metadata* parts[] = {nullptr, llvm::MDNode::get(ctx, width)};
  llvm::MDNode* loop = llvm::MDNode::getDistinct(ctx, parts);
  loop->replaceOperandWith(0, loop);
  latch->setMetadata(llvm::LLVMContext::MD_loop, loop);
}

void make_ranges(llvm::Module& mod, llvm::Function* step, const KernelLayout& layout, bool specialize) {
  const bool cuts = layout.frame_bytes != 0;
  const size_t nsites = layout.sites.size();
  bool machine = false;
  for (const CutSite& cs : layout.sites) machine |= warp_resolvable(cs);
  if (!cuts || !specialize || (nsites > kMaxSpecialized && !machine)) {
    make_loop(mod, step, layout.range_name, cuts, -1, llvm::Function::ExternalLinkage);
    return;
  }
  promote_registers(*step);
  if (nsites > kMaxSpecialized) {
    // Many sites (a block-wide ranking's unrolled ballots): the warp machine
    // gets a copy of the step for each collective it resolves; everything
    // else goes to one loop that takes the resume point at run time.
    std::vector<llvm::Function*> steps(nsites + 1, step);
    for (size_t r = 1; r <= nsites; ++r)
      if (warp_resolvable(layout.sites[r - 1])) steps[r] = resuming_at(step, static_cast<uint32_t>(r));
    llvm::Function* loops =
        make_loop(mod, step, layout.range_name + ".loops", true, -1, llvm::Function::InternalLinkage);
    make_warp_machine(mod, steps, layout, loops);
    return;
  }
  std::vector<llvm::Function*> loops, steps;
  for (size_t r = 0; r <= nsites; ++r) {
    steps.push_back(resuming_at(step, static_cast<uint32_t>(r)));
    loops.push_back(make_loop(mod, steps.back(), layout.range_name + ".r" + std::to_string(r), true, static_cast<int>(r),
                              llvm::Function::InternalLinkage));
    for (const KernelLayout::UniformRow& row : layout.uniform_rows)
      if (row.site == r) loops.back() = with_uniform_row(mod, step, loops.back(), row);
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
