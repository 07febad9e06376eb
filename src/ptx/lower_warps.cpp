// The warp machine: a range function for kernels with whole-warp
// collectives the compiled code can resolve itself (warp_resolvable). The
// region at the resume point runs over the whole span first, as the
// per-resume-point loop (its loads stream); then the span goes a warp at a
// time: a warp whose lanes all stopped at the same resolvable collective
// has it resolved on its rows (a shuffle is a constant permutation of the
// values the lanes gave) and its 32 lanes run the region after it as one
// loop (the step inlined with a constant resume point, so it vectorizes),
// and so on; any other stop (a barrier, an exit, lanes at different
// places, a collective the runner resolves) ends the warp's turn, its codes
// and the rows of the cuts its lanes stopped at stored for the runner. The
// rows a warp passes between regions inside the machine are its own
// (WarpRows), not the frames, so that the chain of regions and shuffles
// stays in vector registers. Spans that are not whole warps, and blocks
// whose rows are not whole warps, go to the per-resume-point loops.
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <map>
#include <set>

#include "ptx/lower.h"
#include "devrt/warp_shuffle.h"

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

// A warp's rows: for each (cut, frame unit) the 32 lanes' elements, in a
// stack slot of the warp machine's own. The regions' accesses to the rows
// (the steps' tagged accesses, kRowTag) go there instead of to the frames,
// so each cut's rows are apart from every other's: once the vectorized lane
// loops are unrolled, the optimizer keeps such a slot in registers (a
// shuffle becomes a permutation of vector registers) unless some region
// that reaches it runs lane by lane. The frames see a warp's rows only
// where the runner does: a cut's rows are copied in when a warp that
// stopped there in the span's first region goes on in the machine, and
// copied out for the lanes stopped at a cut when the warp's turn ends.
// The exchange rows of 32-bit collectives hold 4-byte lanes in the slots
// (their 8-byte frame elements are zero-extended 32-bit values, abi.h).
struct WarpRows {
  struct Row {
    llvm::AllocaInst* slot = nullptr;
    uint32_t elem = 0;        // bytes per lane in the slot
    uint32_t frame_elem = 0;  // bytes per thread in the frame row
    llvm::Type* ty = nullptr;  // the element type the regions use
    bool stored = false, loaded = false;
    bool narrow() const { return elem != frame_elem; }
  };
  llvm::IRBuilder<>& b;
  llvm::BasicBlock* entry;
  const std::vector<CutSite>& sites;
  std::map<std::pair<uint32_t, uint32_t>, Row> rows;  // by (site, unit)

  Row& get(uint32_t site, uint32_t unit, uint32_t elem, llvm::Type* ty) {
    Row& r = rows[{site, unit}];
    if (!r.slot) {
      r.frame_elem = elem;
      if (unit < kFrameHeaderUnits && site >= 1 && site <= sites.size() && narrow_kind(sites[site - 1].kind)) elem = 4;
      llvm::IRBuilder<> e(entry, entry->getFirstInsertionPt());
      r.slot = e.CreateAlloca(llvm::ArrayType::get(e.getInt8Ty(), 32 * elem), nullptr,
                              "rows" + std::to_string(site) + "." + std::to_string(unit));
      r.slot->setAlignment(llvm::Align(64));
      // Accesses to the slot are row accesses wherever the optimizer moves
      // or rewrites them (the NaN rule, nan_canonical.cpp, asks the slot).
      r.slot->setMetadata(kRowTag, llvm::MDNode::get(e.getContext(), {}));
      r.elem = elem;
      r.ty = ty->isVectorTy() || ty->getPrimitiveSizeInBits() != elem * 8 ? b.getIntNTy(elem * 8) : ty;
    }
    return r;
  }
  // Collectives whose operands and results are 32-bit values.
  static bool narrow_kind(CutKind k) {
    return k == CutKind::kShfl || k == CutKind::kVote || k == CutKind::kActiveMask || k == CutKind::kWarpSync ||
           k == CutKind::kRedux || k == CutKind::kElect;
  }
  // A lane's element of a row, loaded from the frame (`v`: 32 of frame_elem) into the slot's form, and back.
  Value* to_slot(const Row& r, Value* v) { return r.narrow() ? b.CreateTrunc(v, vec(r)) : v; }
  Value* to_frame(const Row& r, Value* v) {
    return r.narrow() ? b.CreateZExt(v, llvm::FixedVectorType::get(b.getIntNTy(r.frame_elem * 8), 32)) : v;
  }
  llvm::Type* frame_vec(const Row& r) {
    return r.narrow() ? llvm::FixedVectorType::get(b.getIntNTy(r.frame_elem * 8), 32) : vec(r);
  }
  llvm::Type* vec(const Row& r) { return llvm::FixedVectorType::get(r.ty, 32); }
};

// The frame row of unit `unit` (elements of `elem` bytes) from lane 0 of the warp at `lo`.
Value* frame_rows(llvm::IRBuilder<>& b, Value* frames, Value* pitch, Value* lo, uint32_t unit, uint32_t elem) {
  Value* r = b.CreateGEP(b.getInt8Ty(), frames, b.CreateMul(pitch, b.getInt64(unit)));
  return b.CreateGEP(b.getInt8Ty(), r, b.CreateMul(b.CreateZExt(lo, b.getInt64Ty()), b.getInt64(elem)));
}

// Sends the tagged row accesses of blocks `bbs` (one inlined region, lane `lane`) to the warp's rows.
void redirect_rows(WarpRows& w, const std::vector<llvm::BasicBlock*>& bbs, Value* lane) {
  llvm::IRBuilder<>& b = w.b;
  std::vector<llvm::Instruction*> tagged;
  for (llvm::BasicBlock* bb : bbs)
    for (llvm::Instruction& i : *bb)
      if (i.getMetadata(kRowTag)) tagged.push_back(&i);
  for (llvm::Instruction* ip : tagged) {
      llvm::Instruction& i = *ip;
      llvm::MDNode* tag = i.getMetadata(kRowTag);
      auto field = [&](unsigned k) {
        return static_cast<uint32_t>(llvm::mdconst::extract<llvm::ConstantInt>(tag->getOperand(k))->getZExtValue());
      };
      auto* ld = llvm::dyn_cast<llvm::LoadInst>(&i);
      auto* st = llvm::dyn_cast<llvm::StoreInst>(&i);
      if (!ld && !st) continue;
      llvm::Type* ty = ld ? ld->getType() : st->getValueOperand()->getType();
      WarpRows::Row& row = w.get(field(0), field(1), field(2), ty);
      (ld ? row.loaded : row.stored) = true;
      if (st && st->getMetadata(kBitsSeenTag)) row.slot->setMetadata(kBitsSeenTag, st->getMetadata(kBitsSeenTag));
      b.SetInsertPoint(&i);
      Value* p = b.CreateGEP(b.getInt8Ty(), row.slot, b.CreateMul(b.CreateZExt(lane, b.getInt64Ty()), b.getInt64(row.elem)));
      if (!row.narrow()) {
        i.setOperand(ld ? 0 : 1, p);
        continue;
      }
      // An 8-byte exchange element of a 32-bit collective: its low half.
      if (ld) {
        ld->replaceAllUsesWith(b.CreateZExt(b.CreateAlignedLoad(row.ty, p, llvm::Align(4)), ld->getType()));
      } else {
        b.CreateAlignedStore(b.CreateTrunc(st->getValueOperand(), row.ty), p, llvm::Align(4));
      }
      i.eraseFromParent();
  }
}

// Resolves site `cs` (id `id`) for the warp: reads the lanes' operand rows,
// writes their result rows (abi.h), the warp's own (WarpRows).
void resolve_in_code(llvm::IRBuilder<>& b, WarpRows& w, const CutSite& cs, uint32_t id) {
  // The lanes' 32-bit operand, and 32-bit results (the rows of these collectives are narrow: WarpRows).
  llvm::Type* i64 = b.getInt64Ty();
  auto* v32i = llvm::FixedVectorType::get(b.getInt32Ty(), 32);
  auto operand = [&]() -> Value* {
    if (cs.konst_mask & 1) return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(32), b.getInt32(static_cast<uint32_t>(cs.konst[0])));
    WarpRows::Row& r = w.get(id, kExchangeInUnit, 8, i64);
    Value* v = b.CreateAlignedLoad(w.vec(r), r.slot, llvm::Align(8));
    return r.narrow() ? v : b.CreateTrunc(v, v32i);
  };
  auto result = [&](int slot, Value* v) {
    WarpRows::Row& r = w.get(id, kExchangeOutUnit + 2 * static_cast<uint32_t>(slot), 8, i64);
    b.CreateAlignedStore(r.narrow() ? v : b.CreateZExt(v, w.vec(r)), r.slot, llvm::Align(8));
  };
  auto splat = [&](Value* v) { return b.CreateVectorSplat(32, v); };
  switch (cs.kind) {
    case CutKind::kShfl: {
      std::vector<int> src(32);
      std::vector<llvm::Constant*> pred(32);
      for (uint32_t l = 0; l < 32; ++l) {
        bool p;
        src[l] = static_cast<int>(shfl_source(cs.mode, l, static_cast<uint32_t>(cs.konst[1]), static_cast<uint32_t>(cs.konst[2]), &p));
        pred[l] = b.getInt32(p);
      }
      result(0, b.CreateShuffleVector(operand(), src));
      if (!cs.pred_unused) result(1, llvm::ConstantVector::get(pred));
      return;
    }
    case CutKind::kVote: {
      Value* ballot = b.CreateBitCast(b.CreateICmpNE(operand(), splat(b.getInt32(0))), b.getInt32Ty());
      Value* all = b.CreateICmpEQ(ballot, b.getInt32(0xffffffffu));
      Value* none = b.CreateICmpEQ(ballot, b.getInt32(0));
      Value* r;
      switch (cs.mode) {
        case kVoteAll: r = all; break;
        case kVoteAny: r = b.CreateNot(none); break;
        case kVoteUni: r = b.CreateOr(all, none); break;
        default: r = ballot; break;
      }
      result(0, splat(b.CreateZExt(r, b.getInt32Ty())));
      return;
    }
    case CutKind::kActiveMask: result(0, splat(b.getInt32(0xffffffffu))); return;
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
  Value* codes = run->getArg(6);
  auto* env_ty = llvm::StructType::getTypeByName(ctx, "cucpu.env");
  llvm::IRBuilder<> b(ctx);
  auto block = [&](const std::string& name) { return llvm::BasicBlock::Create(ctx, name, run); };
  auto* entry_bb = block("entry");
  auto* other_bb = block("other");
  auto* first_bb = block("first");
  auto* ret_bb = block("ret");
  auto* dispatch_bb = block("dispatch");
  auto* warp_bb = block("warp");
  auto* warp_end = block("warp_end");
  auto* done = block("done");
  auto* fault_bb = block("misaligned");

  b.SetInsertPoint(entry_bb);
  llvm::AllocaInst* misaligned = b.CreateAlloca(b.getInt8Ty(), nullptr, "misaligned");  // the steps' or of low address bits
  b.CreateStore(b.getInt8(0), misaligned);
  auto ntid = [&](unsigned k) {
    // As the steps read it (lower_misc.cpp): invariant, 1 to 1024.
    auto* ld = b.CreateLoad(i32, b.CreateInBoundsGEP(env_ty, envp, {b.getInt32(0), b.getInt32(0), b.getInt32(k)}));
    ld->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx, {}));
    ld->setMetadata(llvm::LLVMContext::MD_range, llvm::MDNode::get(ctx, {llvm::ConstantAsMetadata::get(b.getInt32(1)),
                                                                          llvm::ConstantAsMetadata::get(b.getInt32(1025))}));
    return ld;
  };
  Value* nx = ntid(0);
  Value* ny = ntid(1);
  Value* odd = b.CreateICmpNE(b.CreateAnd(b.CreateOr(b.CreateOr(first, last), nx), b.getInt32(31)), b.getInt32(0));
  b.CreateCondBr(b.CreateOr(odd, b.CreateICmpUGE(first, last)), other_bb, first_bb);

  b.SetInsertPoint(other_bb);
  std::vector<Value*> args;
  for (llvm::Argument& a : run->args()) args.push_back(&a);
  llvm::CallInst* c = b.CreateCall(fallback, args);
  c->setTailCall();
  b.CreateRet(c);

  // The region at the resume point runs over the whole span first (the
  // per-resume-point loop over all its threads: its loads stream); then
  // each warp whose lanes all stopped at a collective resolved here goes on
  // in the machine. When every thread stopped at the same other place, that
  // is the answer.
  const size_t nstates = steps.size();
  b.SetInsertPoint(first_bb);
  llvm::CallInst* c0 = b.CreateCall(fallback, args);
  auto* sw0 = b.CreateSwitch(c0, ret_bb);
  sw0->addCase(b.getInt32(kMixedCodes), dispatch_bb);
  for (size_t s = 1; s < nstates; ++s)
    if (warp_resolvable(layout.sites[s - 1])) sw0->addCase(b.getInt32(static_cast<uint32_t>(s)), dispatch_bb);
  b.SetInsertPoint(ret_bb);
  b.CreateRet(c0);
  b.SetInsertPoint(dispatch_bb);
  b.CreateBr(warp_bb);

  // A warp: lanes lo .. lo + 31, one row's (x = x0 + lane).
  b.SetInsertPoint(warp_bb);
  llvm::PHINode* lo = b.CreatePHI(i32, 2, "lo");
  llvm::PHINode* blo = b.CreatePHI(i32, 2);
  llvm::PHINode* bhi = b.CreatePHI(i32, 2);
  lo->addIncoming(first, dispatch_bb);
  blo->addIncoming(b.getInt32(0xffffffffu), dispatch_bb);
  bhi->addIncoming(b.getInt32(0), dispatch_bb);
  // The warp's row position, stepped from warp to warp (the divisions once per call).
  llvm::PHINode* x0p = b.CreatePHI(i32, 2, "x0");
  llvm::PHINode* y = b.CreatePHI(i32, 2, "y");
  llvm::PHINode* z = b.CreatePHI(i32, 2, "z");
  {
    llvm::IRBuilder<> e(entry_bb->getTerminator());
    Value* xy = e.CreateUDiv(first, nx);
    x0p->addIncoming(e.CreateURem(first, nx), dispatch_bb);
    y->addIncoming(e.CreateURem(xy, ny), dispatch_bb);
    z->addIncoming(e.CreateUDiv(xy, ny), dispatch_bb);
  }
  // x0 is a multiple of 32 below ntid.x <= 1024: at most 992, said so the
  // optimizer sees that x0 + lane stays within the row (and the index
  // arithmetic cannot wrap). x0 and lo are multiples of 32 (spans and rows
  // are whole warps here), said so too: then what the lanes compute from
  // %tid / 32 is one value for the warp (a lane-0 store to warp_sums[tid /
  // 32] is a store, not a scatter), and tests of %tid % 32 are constants.
  Value* x0 = b.CreateAnd(b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, x0p, b.getInt32(992)), b.getInt32(~31u));
  Value* lo32 = b.CreateAnd(lo, b.getInt32(~31u));
  b.CreateStore(lo, b.CreateStructGEP(env_ty, envp, 10));
  // Only the regions after collectives resolved here run in the machine.
  std::vector<llvm::BasicBlock*> state(nstates, nullptr);
  std::vector<llvm::BasicBlock*> resolve(nstates, nullptr), picked(nstates, nullptr);
  for (size_t r = 1; r < nstates; ++r)
    if (warp_resolvable(layout.sites[r - 1])) {
      state[r] = block("state" + std::to_string(r));
      resolve[r] = block("resolve" + std::to_string(r));
      picked[r] = block("picked" + std::to_string(r));
    }
  // The warp's codes from the span's first region: a warp all at one such
  // collective takes that cut's rows from the frames (below) and goes on.
  auto* v32i = llvm::FixedVectorType::get(i32, 32);
  Value* first_codes = b.CreateAlignedLoad(v32i, b.CreateGEP(i32, codes, b.CreateZExt(lo, i64)), llvm::Align(4));
  Value* fmn = b.CreateUnaryIntrinsic(llvm::Intrinsic::vector_reduce_umin, first_codes);
  Value* fmx = b.CreateUnaryIntrinsic(llvm::Intrinsic::vector_reduce_umax, first_codes);
  auto* first_uniform = block("first_uniform");
  b.CreateCondBr(b.CreateICmpEQ(fmn, fmx), first_uniform, warp_end);
  llvm::BasicBlock* first_mixed = b.GetInsertBlock();
  b.SetInsertPoint(first_uniform);
  auto* sw = b.CreateSwitch(fmn, warp_end);
  for (size_t r = 1; r < nstates; ++r)
    if (picked[r]) sw->addCase(b.getInt32(static_cast<uint32_t>(r)), picked[r]);

  // A warp's turn ends (spill_r, after region r): its codes and, for the
  // lanes stopped at a cut, that cut's rows go to the runner's arrays.
  b.SetInsertPoint(warp_end);
  llvm::PHINode* wlo = b.CreatePHI(i32, static_cast<unsigned>(nstates + 2));
  llvm::PHINode* whi = b.CreatePHI(i32, static_cast<unsigned>(nstates + 2));
  for (llvm::BasicBlock* from : {first_mixed, first_uniform}) {
    wlo->addIncoming(fmn, from);
    whi->addIncoming(fmx, from);
  }
  std::vector<llvm::BasicBlock*> spills(nstates);
  std::vector<Value*> region_codes(nstates);
  std::vector<unsigned> spill_edge(nstates);
  b.SetInsertPoint(warp_end);
  Value* blo_next = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, blo, wlo);
  Value* bhi_next = b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, bhi, whi);
  Value* lo_next = b.CreateAdd(lo, b.getInt32(32));
  lo->addIncoming(lo_next, warp_end);
  {
    Value* x_next = b.CreateAdd(x0p, b.getInt32(32));
    Value* row_done = b.CreateICmpEQ(x_next, nx);
    Value* y_next = b.CreateSelect(row_done, b.CreateAdd(y, b.getInt32(1)), y);
    Value* plane_done = b.CreateICmpEQ(y_next, ny);
    x0p->addIncoming(b.CreateSelect(row_done, b.getInt32(0), x_next), warp_end);
    y->addIncoming(b.CreateSelect(plane_done, b.getInt32(0), y_next), warp_end);
    z->addIncoming(b.CreateSelect(plane_done, b.CreateAdd(z, b.getInt32(1)), z), warp_end);
  }
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
  b.CreateCall(rt, {envp, b.getInt32(static_cast<uint32_t>(FaultKind::kMisalignedAddress)), b.getInt64(0)});  // address not kept
  b.CreateUnreachable();

  // Every cut's rows, and which of them its threads store (any region may reach it).
  WarpRows w{b, entry_bb, layout.sites, {}};
  for (llvm::Function* step : std::set<llvm::Function*>(steps.begin(), steps.end()))
    for (llvm::BasicBlock& bb : *step)
      for (llvm::Instruction& i : bb)
        if (auto* st = llvm::dyn_cast<llvm::StoreInst>(&i); st && st->getMetadata(kRowTag)) {
          llvm::MDNode* tag = st->getMetadata(kRowTag);
          auto field = [&](unsigned k) {
            return static_cast<uint32_t>(llvm::mdconst::extract<llvm::ConstantInt>(tag->getOperand(k))->getZExtValue());
          };
          w.get(field(0), field(1), field(2), st->getValueOperand()->getType()).stored = true;
        }
  std::vector<std::pair<llvm::CallInst*, Value*>> calls(nstates);  // each region's step, and its lane
  std::vector<std::set<uint32_t>> stops(nstates);                   // the cuts each region may stop at
  for (size_t r = 1; r < nstates; ++r) {
    if (!state[r]) continue;
    // The lanes run the region after resume point r; their codes in a slot of the region's own.
    b.SetInsertPoint(state[r]);
    llvm::BasicBlock* pre = b.GetInsertBlock();
    auto* loop = block("lanes" + std::to_string(r));
    auto* after = block("after" + std::to_string(r));
    llvm::AllocaInst* lane_codes;
    {
      llvm::IRBuilder<> e(entry_bb, entry_bb->getFirstInsertionPt());
      lane_codes = e.CreateAlloca(llvm::ArrayType::get(i32, 32), nullptr, "codes" + std::to_string(r));
      lane_codes->setAlignment(llvm::Align(64));
    }
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    llvm::PHINode* l = b.CreatePHI(i32, 2);
    llvm::PHINode* mn = b.CreatePHI(i32, 2);
    llvm::PHINode* mx = b.CreatePHI(i32, 2);
    l->addIncoming(b.getInt32(0), pre);
    mn->addIncoming(b.getInt32(0xffffffffu), pre);
    mx->addIncoming(b.getInt32(0), pre);
    Value* t = b.CreateAdd(lo32, l, "t", true, true);
    Value* x = b.CreateAdd(x0, l, "x", true, true);
    llvm::CallInst* code =
        b.CreateCall(steps[r], {frames, envp, t, x, y, z, b.getInt32(static_cast<uint32_t>(r)), misaligned, pitch});
    calls[r] = {code, l};
    b.CreateStore(code, b.CreateGEP(i32, lane_codes, b.CreateZExt(l, i64)));
    Value* mn2 = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, mn, code);
    Value* mx2 = b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, mx, code);
    Value* l2 = b.CreateAdd(l, b.getInt32(1), "", true, true);
    l->addIncoming(l2, loop);
    mn->addIncoming(mn2, loop);
    mx->addIncoming(mx2, loop);
    ask_frame_loop_width(b.CreateCondBr(b.CreateICmpULT(l2, b.getInt32(32)), loop, after));
    // A misaligned access is reported before the warp goes past its cut.
    b.SetInsertPoint(after);
    auto* checked = block("checked" + std::to_string(r));
    b.CreateCondBr(b.CreateICmpNE(b.CreateLoad(b.getInt8Ty(), misaligned), b.getInt8(0)), fault_bb, checked);
    b.SetInsertPoint(checked);
    auto* uniform = block("uniform" + std::to_string(r));
    spills[r] = block("spill" + std::to_string(r));
    b.CreateCondBr(b.CreateICmpEQ(mn2, mx2), uniform, spills[r]);
    b.SetInsertPoint(uniform);
    auto* sw2 = b.CreateSwitch(mn2, spills[r]);
    b.SetInsertPoint(spills[r]);
    region_codes[r] = b.CreateAlignedLoad(llvm::FixedVectorType::get(i32, 32), lane_codes, llvm::Align(64));
    b.CreateAlignedStore(region_codes[r], b.CreateGEP(i32, codes, b.CreateZExt(lo, i64)), llvm::Align(4));
    spill_edge[r] = wlo->getNumIncomingValues();
    wlo->addIncoming(mn2, spills[r]);  // the block that branches to warp_end is set below
    whi->addIncoming(mx2, spills[r]);
    // The cuts the region may stop at: what its step returns.
    for (llvm::BasicBlock& bb : *steps[r])
      if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator())) {
        auto* k = llvm::dyn_cast<llvm::ConstantInt>(ret->getReturnValue());
        for (size_t s = 1; s < nstates; ++s)
          if (!k || k->getZExtValue() == s) stops[r].insert(static_cast<uint32_t>(s));
      }
    for (uint32_t s : stops[r])
      if (resolve[s]) sw2->addCase(b.getInt32(s), resolve[s]);
  }
  // The regions inlined, their row accesses sent to the warp's rows.
  for (size_t r = 1; r < nstates; ++r) {
    if (!state[r]) continue;
    auto [call, lane] = calls[r];
    std::set<llvm::BasicBlock*> before;
    for (llvm::BasicBlock& bb : *run) before.insert(&bb);
    llvm::BasicBlock* at = call->getParent();  // receives the step's first block
    llvm::InlineFunctionInfo ifi;
    if (!llvm::InlineFunction(*call, ifi).isSuccess()) continue;  // the call stays: its rows are the frames'
    std::vector<llvm::BasicBlock*> added = {at};
    before.erase(at);
    for (llvm::BasicBlock& bb : *run)
      if (!before.count(&bb) && &bb != at) added.push_back(&bb);
    redirect_rows(w, added, lane);
  }
  // The collectives resolved here, each followed by the region after it.
  for (size_t s = 1; s < nstates; ++s)
    if (resolve[s]) {
      b.SetInsertPoint(resolve[s]);
      resolve_in_code(b, w, layout.sites[s - 1], static_cast<uint32_t>(s));
      b.CreateBr(state[s]);
    }
  // A warp all at cut s after the span's first region: what its threads stored there, from the frames.
  for (size_t s = 1; s < nstates; ++s) {
    if (!picked[s]) continue;
    b.SetInsertPoint(picked[s]);
    for (auto& [key, row] : w.rows)
      if (key.first == s && row.stored) {
        Value* v = b.CreateAlignedLoad(w.frame_vec(row), frame_rows(b, frames, pitch, lo, key.second, row.frame_elem),
                                       llvm::Align(row.frame_elem > 8 ? 8 : row.frame_elem));
        b.CreateAlignedStore(w.to_slot(row, v), row.slot, llvm::Align(64));
      }
    b.CreateBr(resolve[s]);
  }
  // Leaving after region r: the rows of each cut it stops at, for the lanes stopped there.
  for (size_t r = 1; r < nstates; ++r) {
    if (!state[r]) continue;
    b.SetInsertPoint(spills[r]);
    for (uint32_t s : stops[r]) {
      Value* at = b.CreateICmpEQ(region_codes[r], b.CreateVectorSplat(32, b.getInt32(s)));
      auto* copy = block("spill" + std::to_string(r) + "." + std::to_string(s));
      auto* next = block("spilled" + std::to_string(r) + "." + std::to_string(s));
      b.CreateCondBr(b.CreateICmpNE(b.CreateBitCast(at, i32), b.getInt32(0)), copy, next);
      b.SetInsertPoint(copy);
      for (auto& [key, row] : w.rows)
        if (key.first == s && row.stored) {
          Value* v = w.to_frame(row, b.CreateAlignedLoad(w.vec(row), row.slot, llvm::Align(64)));
          b.CreateMaskedStore(v, frame_rows(b, frames, pitch, lo, key.second, row.frame_elem),
                              llvm::Align(row.frame_elem > 8 ? 8 : row.frame_elem), at);
        }
      b.CreateBr(next);
      b.SetInsertPoint(next);
    }
    for (llvm::PHINode* p : {wlo, whi}) p->setIncomingBlock(spill_edge[r], b.GetInsertBlock());
    b.CreateBr(warp_end);
  }
  return run;
}

}  // namespace cucpu::ptx
