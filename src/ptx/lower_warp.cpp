// Cuts: barriers and warp collectives. The thread stores its operands in
// the exchange area and returns the site id; the runner (block_runner.cpp)
// resolves the cut for every thread that reached it, and the thread reads
// its results back on resuming (see abi.h).
#include "ptx/lower.h"

namespace cucpu::ptx {

using llvm::Value;

Value* FnLowering::frame_row(uint32_t unit, uint32_t elem_bytes) {
  Value* row = b.CreateGEP(b.getInt8Ty(), frame, b.CreateMul(pitch, b.getInt64(unit)));
  return b.CreateGEP(b.getInt8Ty(), row, b.CreateMul(b.CreateZExt(tid, b.getInt64Ty()), b.getInt64(elem_bytes)));
}

llvm::Instruction* FnLowering::frame_access(llvm::Instruction* access, uint32_t unit, uint32_t elem_bytes) {
  if (auto* ld = llvm::dyn_cast<llvm::LoadInst>(access)) ld->setAlignment(llvm::Align(elem_bytes > 8 ? 8 : elem_bytes));
  if (auto* st = llvm::dyn_cast<llvm::StoreInst>(access)) st->setAlignment(llvm::Align(elem_bytes > 8 ? 8 : elem_bytes));
  access->setMetadata(llvm::LLVMContext::MD_tbaa, row_tags.at(unit));
  // Which cut the access belongs to (the one emitted last: its operands and
  // saved registers, or what its resume point reads back), for the warp
  // machine, which keeps a warp's rows of each cut apart (lower_warps.cpp).
  auto num = [&](uint32_t v) { return llvm::ConstantAsMetadata::get(b.getInt32(v)); };
  access->setMetadata(kRowTag, llvm::MDNode::get(ctx, {num(static_cast<uint32_t>(layout.sites.size())), num(unit), num(elem_bytes)}));
  return access;
}

std::vector<bool> float_bits_only(const Function& f) {
  std::vector<bool> only(f.regs.size(), false);
  for (size_t r = 0; r < f.regs.size(); ++r) only[r] = f.regs[r].vec == 1 && type_bits(f.regs[r].ty) == 32 && !is_float(f.regs[r].ty);
  auto plain = [](const Operand& o) { return o.kind == Operand::Kind::kReg && o.elem < 0 && o.sel < 0 && !o.neg; };
  auto mark_read = [&](const Operand& o, auto& self) -> void {
    if (o.kind == Operand::Kind::kReg || o.kind == Operand::Kind::kAddr) {
      if (o.reg >= 0) only[static_cast<size_t>(o.reg)] = false;
    }
    for (const Operand& e : o.elems) self(e, self);
  };
  for (bool changed = true; changed;) {
    const std::vector<bool> before = only;
    for (const Instr& in : f.body) {
      for (size_t k = 0; k < in.args.size(); ++k) {
        const Operand& o = in.args[k];
        if (k == 0 && op_has(in.op, kDest) && o.kind != Operand::Kind::kAddr) continue;  // written
        if (k == 1 && plain(o) && plain(in.args[0]) && !in.args[0].neg) {
          const RegDecl& dest = f.regs[static_cast<size_t>(in.args[0].reg)];
          if (in.op == Op::kMov && dest.vec == 1 && dest.ty == Ty::kF32) continue;  // read as an f32
          if (in.op == Op::kShfl && only[static_cast<size_t>(in.args[0].reg)]) continue;  // moved to such a register
        }
        mark_read(o, mark_read);
      }
    }
    changed = only != before;
  }
  return only;
}

void FnLowering::emit_cut(const CutSite& site_in, size_t index, Value* const in[kExchangeInSlots],
                          Value* const* results) {
  report_misalignment();
  if (float_bits.empty()) float_bits = float_bits_only(f);
  // A store of bits a reader may see other than as an f32's.
  auto bits_seen = [&](llvm::Instruction* st) { st->setMetadata(kBitsSeenTag, llvm::MDNode::get(ctx, {})); };
  const Instr& at = f.body[index];
  const bool shuffled_bits_seen = site_in.kind == CutKind::kShfl && !at.args.empty() && at.args[0].kind == Operand::Kind::kReg &&
                                  at.args[0].reg >= 0 && !float_bits[static_cast<size_t>(at.args[0].reg)];
  CutSite site = site_in;
  llvm::Type* i64 = b.getInt64Ty();
  std::vector<std::pair<int, Value*>> stores;
  for (int i = 0; i < kExchangeInSlots; ++i)
    if (in[i]) {
      Value* v = in[i];
      if (v->getType()->isFloatingPointTy()) v = b.CreateBitCast(v, b.getIntNTy(v->getType()->getPrimitiveSizeInBits()));
      v = b.CreateZExtOrTrunc(v, i64);
      if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(v); k && i < 4) {
        site.konst_mask |= static_cast<uint8_t>(1u << i);
        site.konst[i] = k->getZExtValue();
        continue;
      }
      stores.push_back({i, v});
    }
  layout.sites.push_back(site);
  const uint32_t id = static_cast<uint32_t>(layout.sites.size());
  for (auto& [i, v] : stores) {
    const uint32_t unit = kExchangeInUnit + 2 * static_cast<uint32_t>(i);
    llvm::Instruction* st = frame_access(b.CreateStore(v, frame_row(unit, 8)), unit, 8);
    if (i == 0 && shuffled_bits_seen) bits_seen(st);
  }
  for (int i = 0; results && i < kExchangeOutSlots; ++i)
    if (results[i]) {
      const uint32_t unit = kExchangeOutUnit + 2 * static_cast<uint32_t>(i);
      frame_access(b.CreateStore(b.CreateZExtOrTrunc(results[i], i64), frame_row(unit, 8)), unit, 8);
    }
  // The registers live across the cut: saved, or recomputed on resuming.
  std::vector<int> saved, recomputed;
  for (int r : live_across[index]) (reg_unit[static_cast<size_t>(r)] ? saved : recomputed).push_back(r);
  // A round cut's loop register, when its start can be recomputed, is
  // saved as its distance from that start (layout.uniform_rows).
  auto round = cuts.round_edges.find(index);
  const int walked = round != cuts.round_edges.end() && round->second.start >= 0 ? round->second.iv : -1;
  auto start_value = [&]() {
    const Instr& start = f.body[static_cast<size_t>(round->second.start)];
    std::vector<int> sources;
    for (size_t k = 1; k < start.args.size(); ++k)
      if (start.args[k].kind == Operand::Kind::kReg) sources.push_back(start.args[k].reg);
    for (int i : cuts.round_remat.closure(f, sources)) lower_instr(f.body[static_cast<size_t>(i)], static_cast<size_t>(i));
    lower_instr(start, static_cast<size_t>(round->second.start));
    llvm::AllocaInst* a = regs[static_cast<size_t>(walked)];
    return static_cast<Value*>(b.CreateLoad(a->getAllocatedType(), a));
  };
  auto save = [&](int r, bool store) {
    llvm::AllocaInst* a = regs[static_cast<size_t>(r)];
    llvm::Type* ty = a->getAllocatedType();
    const uint32_t unit = reg_unit[static_cast<size_t>(r)];
    const unsigned bits = static_cast<unsigned>(ty->getPrimitiveSizeInBits());
    const uint32_t elem = bits > 64 ? 16 : bits > 32 ? 8 : 4;  // wider registers: vectors of 128 bits
    Value* p = frame_row(unit, elem);
    if (store) {
      Value* v = b.CreateLoad(ty, a);
      if (r == walked) v = b.CreateSub(v, start_value());
      llvm::Instruction* st = frame_access(b.CreateStore(v, p), unit, elem);
      if (ty->isIntegerTy() && !float_bits[static_cast<size_t>(r)]) bits_seen(st);
    } else {
      Value* v = frame_access(b.CreateLoad(ty, p), unit, elem);
      if (r == walked) v = b.CreateAdd(start_value(), v);
      b.CreateStore(v, a);
    }
  };
  if (walked >= 0 && reg_unit[static_cast<size_t>(walked)])
    layout.uniform_rows.push_back({id, reg_unit[static_cast<size_t>(walked)],
                                   static_cast<uint32_t>(regs[static_cast<size_t>(walked)]->getAllocatedType()->getPrimitiveSizeInBits() / 8)});
  for (int r : saved) save(r, true);
  b.CreateRet(b.getInt32(id));
  auto* resume = llvm::BasicBlock::Create(ctx, "resume" + std::to_string(id), fn);
  resume_switch->addCase(b.getInt32(id), resume);
  b.SetInsertPoint(resume);
  for (int r : saved) save(r, false);
  for (int i : cuts.remat.closure(f, recomputed)) lower_instr(f.body[static_cast<size_t>(i)], static_cast<size_t>(i));
}

Value* FnLowering::exchange_out(int slot, llvm::Type* ty) {
  const uint32_t unit = kExchangeOutUnit + 2 * static_cast<uint32_t>(slot);
  Value* v = frame_access(b.CreateLoad(b.getInt64Ty(), frame_row(unit, 8)), unit, 8);
  if (ty->isIntegerTy(1)) return b.CreateICmpNE(v, b.getInt64(0));
  if (ty->isFloatingPointTy()) return b.CreateBitCast(b.CreateTrunc(v, b.getIntNTy(ty->getPrimitiveSizeInBits())), ty);
  return b.CreateZExtOrTrunc(v, ty);
}

bool FnLowering::lower_cut(const Instr& in, size_t index) {
  const Op op = in.op;
  auto& A = in.args;
  Value* ops[kExchangeInSlots] = {};
  CutSite site;
  site.line = in.line;
  auto full_mask = [&]() { return static_cast<Value*>(b.getInt32(0xffffffffu)); };
  if (op == Op::kBar || op == Op::kBarrier) {
    if (in.has("warp")) {  // bar.warp.sync mask
      site.kind = CutKind::kWarpSync;
      ops[3] = A.empty() ? full_mask() : read(A[0], Ty::kB32);
      emit_cut(site, index, ops);
      return true;
    }
    if (in.has("cluster")) unsupported();
    const bool red = in.has("red");
    const bool arrive = in.has("arrive");
    if (red) {
      // bar.red.op.type d, a[, b], {!}c
      site.kind = CutKind::kBarrierRed;
      if (in.has("popc")) site.mode = kRedPopc;
      else if (in.has("and")) site.mode = kRedAnd;
      else if (in.has("or")) site.mode = kRedOr;
      else fail("bar.red needs .popc, .and or .or");
      if (A.size() < 3) fail("malformed bar.red");
      ops[0] = read(A[1], Ty::kU32);
      ops[1] = A.size() == 4 ? read(A[2], Ty::kU32) : b.getInt32(0);
      ops[2] = b.CreateZExt(read(A.back(), Ty::kPred), b.getInt32Ty());
      emit_cut(site, index, ops);
      const Ty t = type_suffix(in);
      write(A[0], exchange_out(0, llty(t == Ty::kPred ? Ty::kPred : Ty::kU32)), t == Ty::kPred ? Ty::kPred : Ty::kU32);
      return true;
    }
    site.kind = arrive ? CutKind::kBarrierArrive : CutKind::kBarrier;
    // bar.sync is barrier.sync.aligned: every thread must reach it at one instruction.
    site.mode = op == Op::kBar || in.has("aligned") ? kBarrierAligned : 0;
    ops[0] = A.empty() ? b.getInt32(0) : read(A[0], Ty::kU32);
    ops[1] = A.size() >= 2 ? read(A[1], Ty::kU32) : b.getInt32(0);
    emit_cut(site, index, ops);
    return true;
  }
  if (op == Op::kShfl) {
    // shfl.sync.mode.b32 d[|p], a, b, c, membermask (the old form has no mask).
    site.kind = CutKind::kShfl;
    if (in.has("up")) site.mode = kShflUp;
    else if (in.has("down")) site.mode = kShflDown;
    else if (in.has("bfly")) site.mode = kShflBfly;
    else if (in.has("idx")) site.mode = kShflIdx;
    else fail("shfl needs a mode");
    if (A.size() < 4) fail("malformed shfl");
    ops[0] = read(A[1], Ty::kB32);
    ops[1] = read(A[2], Ty::kB32);
    ops[2] = read(A[3], Ty::kB32);
    ops[3] = A.size() >= 5 ? read(A[4], Ty::kB32) : full_mask();
    // A predicate half no other instruction names is never read.
    site.pred_unused = A[0].pair < 0 || reg_mentions[static_cast<size_t>(A[0].pair)] <= 1;
    emit_cut(site, index, ops);
    write(A[0], exchange_out(0, b.getInt32Ty()), Ty::kB32);
    if (!site.pred_unused) write_pair(A[0], exchange_out(1, b.getInt1Ty()));
    return true;
  }
  if (op == Op::kVote) {
    site.kind = CutKind::kVote;
    const bool ballot = in.has("ballot");
    if (in.has("all")) site.mode = kVoteAll;
    else if (in.has("any")) site.mode = kVoteAny;
    else if (in.has("uni")) site.mode = kVoteUni;
    else if (ballot) site.mode = kVoteBallot;
    else fail("vote needs a mode");
    if (A.size() < 2) fail("malformed vote");
    ops[0] = b.CreateZExt(read(A[1], Ty::kPred), b.getInt32Ty());
    ops[3] = A.size() >= 3 ? read(A[2], Ty::kB32) : full_mask();
    emit_cut(site, index, ops);
    if (ballot) write(A[0], exchange_out(0, b.getInt32Ty()), Ty::kB32);
    else write(A[0], exchange_out(0, b.getInt1Ty()), Ty::kPred);
    return true;
  }
  if (op == Op::kMatch) {
    site.kind = CutKind::kMatch;
    site.mode = in.has("all") ? kMatchAll : kMatchAny;
    const Ty t = type_suffix(in);
    site.wide = t == Ty::kB64;
    if (A.size() < 3) fail("malformed match");
    ops[0] = read(A[1], site.wide ? Ty::kB64 : Ty::kB32);
    ops[3] = read(A[2], Ty::kB32);
    emit_cut(site, index, ops);
    write(A[0], exchange_out(0, b.getInt32Ty()), Ty::kB32);
    write_pair(A[0], exchange_out(1, b.getInt1Ty()));
    return true;
  }
  if (op == Op::kRedux) {
    site.kind = CutKind::kRedux;
    static const char* const kNames[] = {"add", "min", "max", "and", "or", "xor"};
    bool found = false;
    for (uint8_t k = 0; k < 6; ++k)
      if (in.has(kNames[k])) {
        site.mode = k;
        found = true;
      }
    if (!found) fail("redux needs an operation");
    const Ty t = type_suffix(in);
    if (t == Ty::kF32) unsupported();
    site.is_signed = t == Ty::kS32;
    if (A.size() < 3) fail("malformed redux");
    ops[0] = read(A[1], Ty::kB32);
    ops[3] = read(A[2], Ty::kB32);
    emit_cut(site, index, ops);
    write(A[0], exchange_out(0, b.getInt32Ty()), Ty::kB32);
    return true;
  }
  if (is_device_fence(in)) {
    // A fence at gpu or system scope (__threadfence): the lanes that reach
    // it stop there together before the fence itself. A warp's lanes run in
    // step on a GPU, so every lane's stores before the fence are visible
    // before any lane's stores after it; libraries rely on that (cuBLAS's
    // trsv: each lane stores its part of the solution, fences, and lane 0
    // then raises the flag another block waits on). The runner resolves it
    // as it does activemask: over the lanes that arrived, waiting for no other.
    site.kind = CutKind::kActiveMask;
    emit_cut(site, index, ops);
    b.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
    return true;
  }
  if (op == Op::kActivemask) {
    site.kind = CutKind::kActiveMask;
    emit_cut(site, index, ops);
    write(A[0], exchange_out(0, b.getInt32Ty()), Ty::kB32);
    return true;
  }
  if (op == Op::kElect) {
    site.kind = CutKind::kElect;
    ops[3] = A.size() >= 2 ? read(A[1], Ty::kB32) : full_mask();
    emit_cut(site, index, ops);
    write(A[0], exchange_out(0, b.getInt32Ty()), Ty::kB32);
    write_pair(A[0], exchange_out(1, b.getInt1Ty()));
    return true;
  }
  return false;
}

}  // namespace cucpu::ptx
