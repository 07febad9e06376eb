// The warp machine: a range function for kernels with whole-warp
// collectives the compiled code can resolve itself (warp_resolvable). It
// runs the span a warp at a time: the warp's 32 lanes run one region as a
// loop (the step inlined with a constant resume point, so it vectorizes);
// when every lane stops at the same resolvable collective, the collective
// is resolved on the warp's frame rows (a shuffle is a constant permutation
// of the values the lanes gave) and the warp goes on with the region after
// it; any other stop (a barrier, an exit, lanes at different places, a
// collective the runner resolves) ends the warp's turn, its codes stored
// for the runner. Spans that are not whole warps, and blocks whose rows are
// not whole warps, go to the per-resume-point loops.
#include <llvm/IR/Intrinsics.h>

#include "ptx/lower.h"
#include "ptx/warp_shuffle.h"

namespace cucpu::ptx {

using llvm::Value;

bool warp_resolvable(const CutSite& cs) {
  const bool full = (cs.konst_mask & 8) && (cs.konst[3] & 0xffffffffu) == 0xffffffffu;
  switch (cs.kind) {
    case CutKind::kShfl: return full && (cs.konst_mask & 6) == 6;
    case CutKind::kVote: return full;
    case CutKind::kActiveMask: return true;
    case CutKind::kWarpSync: return full;
    default: return false;
  }
}

namespace {

// Resolves site `cs` for the warp whose first thread is `lo`: reads the
// lanes' operand rows, writes their result rows (abi.h).
void resolve_in_code(llvm::IRBuilder<>& b, const CutSite& cs, Value* frames, Value* pitch, Value* lo) {
  llvm::Type* i64 = b.getInt64Ty();
  auto* v32 = llvm::FixedVectorType::get(i64, 32);
  auto row = [&](uint32_t unit) {
    Value* r = b.CreateGEP(b.getInt8Ty(), frames, b.CreateMul(pitch, b.getInt64(unit)));
    return b.CreateGEP(i64, r, b.CreateZExt(lo, i64));
  };
  auto operand = [&]() -> Value* {
    if (cs.konst_mask & 1) return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(32), b.getInt64(cs.konst[0]));
    return b.CreateAlignedLoad(v32, row(kExchangeInUnit), llvm::Align(8));
  };
  auto result = [&](int slot, Value* v) { b.CreateAlignedStore(v, row(kExchangeOutUnit + 2 * slot), llvm::Align(8)); };
  auto splat = [&](Value* v) { return b.CreateVectorSplat(32, v); };
  switch (cs.kind) {
    case CutKind::kShfl: {
      std::vector<int> src(32);
      std::vector<llvm::Constant*> pred(32);
      for (uint32_t l = 0; l < 32; ++l) {
        bool p;
        src[l] = static_cast<int>(shfl_source(cs.mode, l, static_cast<uint32_t>(cs.konst[1]), static_cast<uint32_t>(cs.konst[2]), &p));
        pred[l] = b.getInt64(p);
      }
      Value* v = b.CreateShuffleVector(operand(), src);
      result(0, b.CreateAnd(v, splat(b.getInt64(0xffffffffu))));
      if (!cs.pred_unused) result(1, llvm::ConstantVector::get(pred));
      return;
    }
    case CutKind::kVote: {
      Value* ballot = b.CreateBitCast(b.CreateICmpNE(operand(), splat(b.getInt64(0))), b.getInt32Ty());
      Value* all = b.CreateICmpEQ(ballot, b.getInt32(0xffffffffu));
      Value* none = b.CreateICmpEQ(ballot, b.getInt32(0));
      Value* r;
      switch (cs.mode) {
        case kVoteAll: r = all; break;
        case kVoteAny: r = b.CreateNot(none); break;
        case kVoteUni: r = b.CreateOr(all, none); break;
        default: r = ballot; break;
      }
      result(0, splat(b.CreateZExt(r, i64)));
      return;
    }
    case CutKind::kActiveMask: result(0, splat(b.getInt64(0xffffffffu))); return;
    default: return;  // kWarpSync of the whole warp
  }
}

}  // namespace

llvm::Function* make_warp_machine(llvm::Module& mod, const std::vector<llvm::Function*>& steps, const KernelLayout& layout,
                                  llvm::Function* fallback) {
  llvm::LLVMContext& ctx = mod.getContext();
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Function* run = llvm::Function::Create(fallback->getFunctionType(), llvm::Function::ExternalLinkage,
                                               layout.range_name, mod);
  for (unsigned a : {0u, 2u, 6u}) run->addParamAttr(a, llvm::Attribute::NoAlias);
  run->addDereferenceableParamAttr(2, sizeof(BlockEnv));
  run->addParamAttr(2, llvm::Attribute::getWithAlignment(ctx, llvm::Align(alignof(BlockEnv))));
  Value* frames = run->getArg(0);
  Value* pitch = run->getArg(1);
  Value* envp = run->getArg(2);
  Value* first = run->getArg(3);
  Value* last = run->getArg(4);
  Value* resume = run->getArg(5);
  Value* codes = run->getArg(6);
  auto* env_ty = llvm::StructType::getTypeByName(ctx, "cucpu.env");
  llvm::IRBuilder<> b(ctx);
  auto block = [&](const std::string& name) { return llvm::BasicBlock::Create(ctx, name, run); };
  auto* entry_bb = block("entry");
  auto* other_bb = block("other");
  auto* warp_bb = block("warp");
  auto* warp_end = block("warp_end");
  auto* done = block("done");
  auto* fault_bb = block("misaligned");

  b.SetInsertPoint(entry_bb);
  llvm::AllocaInst* misaligned = b.CreateAlloca(i64, nullptr, "misaligned");
  b.CreateStore(b.getInt64(0), misaligned);
  auto ntid = [&](unsigned k) {
    return b.CreateLoad(i32, b.CreateInBoundsGEP(env_ty, envp, {b.getInt32(0), b.getInt32(0), b.getInt32(k)}));
  };
  Value* nx = ntid(0);
  Value* ny = ntid(1);
  Value* odd = b.CreateICmpNE(b.CreateAnd(b.CreateOr(b.CreateOr(first, last), nx), b.getInt32(31)), b.getInt32(0));
  b.CreateCondBr(b.CreateOr(odd, b.CreateICmpUGE(first, last)), other_bb, warp_bb);

  b.SetInsertPoint(other_bb);
  std::vector<Value*> args;
  for (llvm::Argument& a : run->args()) args.push_back(&a);
  llvm::CallInst* c = b.CreateCall(fallback, args);
  c->setTailCall();
  b.CreateRet(c);

  // A warp: lanes lo .. lo + 31, one row's (x = x0 + lane).
  b.SetInsertPoint(warp_bb);
  llvm::PHINode* lo = b.CreatePHI(i32, 2, "lo");
  llvm::PHINode* blo = b.CreatePHI(i32, 2);
  llvm::PHINode* bhi = b.CreatePHI(i32, 2);
  lo->addIncoming(first, entry_bb);
  blo->addIncoming(b.getInt32(0xffffffffu), entry_bb);
  bhi->addIncoming(b.getInt32(0), entry_bb);
  Value* x0 = b.CreateURem(lo, nx);
  Value* xy = b.CreateUDiv(lo, nx);
  Value* y = b.CreateURem(xy, ny);
  Value* z = b.CreateUDiv(xy, ny);
  b.CreateStore(lo, b.CreateStructGEP(env_ty, envp, 10));
  const size_t nstates = steps.size();
  std::vector<llvm::BasicBlock*> state(nstates);
  std::vector<llvm::BasicBlock*> resolve(nstates, nullptr);
  for (size_t r = 0; r < nstates; ++r) {
    state[r] = block("state" + std::to_string(r));
    if (r && warp_resolvable(layout.sites[r - 1])) resolve[r] = block("resolve" + std::to_string(r));
  }
  auto* sw = b.CreateSwitch(resume, state[0], static_cast<unsigned>(nstates));
  for (size_t r = 1; r < nstates; ++r) sw->addCase(b.getInt32(static_cast<uint32_t>(r)), state[r]);

  b.SetInsertPoint(warp_end);
  llvm::PHINode* wlo = b.CreatePHI(i32, static_cast<unsigned>(2 * nstates));
  llvm::PHINode* whi = b.CreatePHI(i32, static_cast<unsigned>(2 * nstates));
  Value* blo_next = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, blo, wlo);
  Value* bhi_next = b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, bhi, whi);
  Value* lo_next = b.CreateAdd(lo, b.getInt32(32));
  lo->addIncoming(lo_next, warp_end);
  blo->addIncoming(blo_next, warp_end);
  bhi->addIncoming(bhi_next, warp_end);
  b.CreateCondBr(b.CreateICmpULT(lo_next, last), warp_bb, done);

  b.SetInsertPoint(done);
  b.CreateRet(b.CreateSelect(b.CreateICmpEQ(blo_next, bhi_next), blo_next, b.getInt32(kMixedCodes)));

  b.SetInsertPoint(fault_bb);
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, i32, i64}, false);
  llvm::Function* rt = mod.getFunction("cucpu_rt_fault");
  if (!rt) rt = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "cucpu_rt_fault", mod);
  rt->setDoesNotReturn();
  b.CreateCall(rt, {envp, b.getInt32(static_cast<uint32_t>(FaultKind::kMisalignedAddress)), b.CreateLoad(i64, misaligned)});
  b.CreateUnreachable();

  for (size_t r = 0; r < nstates; ++r) {
    // The lanes run the region after resume point r.
    b.SetInsertPoint(state[r]);
    llvm::BasicBlock* pre = b.GetInsertBlock();
    auto* loop = block("lanes" + std::to_string(r));
    auto* after = block("after" + std::to_string(r));
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    llvm::PHINode* l = b.CreatePHI(i32, 2);
    llvm::PHINode* mn = b.CreatePHI(i32, 2);
    llvm::PHINode* mx = b.CreatePHI(i32, 2);
    l->addIncoming(b.getInt32(0), pre);
    mn->addIncoming(b.getInt32(0xffffffffu), pre);
    mx->addIncoming(b.getInt32(0), pre);
    Value* t = b.CreateAdd(lo, l, "t", true, true);
    Value* x = b.CreateAdd(x0, l, "x", true, true);
    Value* code = b.CreateCall(steps[r], {frames, envp, t, x, y, z, b.getInt32(static_cast<uint32_t>(r)), misaligned, pitch});
    b.CreateStore(code, b.CreateGEP(i32, codes, b.CreateZExt(t, i64)));
    Value* mn2 = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, mn, code);
    Value* mx2 = b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, mx, code);
    Value* l2 = b.CreateAdd(l, b.getInt32(1), "", true, true);
    l->addIncoming(l2, loop);
    mn->addIncoming(mn2, loop);
    mx->addIncoming(mx2, loop);
    b.CreateCondBr(b.CreateICmpULT(l2, b.getInt32(32)), loop, after);
    // A misaligned access is reported before the warp goes past its cut.
    b.SetInsertPoint(after);
    auto* checked = block("checked" + std::to_string(r));
    b.CreateCondBr(b.CreateICmpNE(b.CreateLoad(i64, misaligned), b.getInt64(0)), fault_bb, checked);
    b.SetInsertPoint(checked);
    auto* uniform = block("uniform" + std::to_string(r));
    wlo->addIncoming(mn2, checked);
    whi->addIncoming(mx2, checked);
    b.CreateCondBr(b.CreateICmpEQ(mn2, mx2), uniform, warp_end);
    b.SetInsertPoint(uniform);
    auto* sw2 = b.CreateSwitch(mn2, warp_end);
    wlo->addIncoming(mn2, uniform);
    whi->addIncoming(mx2, uniform);
    for (size_t s = 1; s < nstates; ++s)
      if (resolve[s]) sw2->addCase(b.getInt32(static_cast<uint32_t>(s)), resolve[s]);
  }
  // The collectives resolved here, each followed by the region after it.
  for (size_t s = 1; s < nstates; ++s)
    if (resolve[s]) {
      b.SetInsertPoint(resolve[s]);
      resolve_in_code(b, layout.sites[s - 1], frames, pitch, lo);
      b.CreateBr(state[s]);
    }
  return run;
}

}  // namespace cucpu::ptx
