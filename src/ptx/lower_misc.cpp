// mov, byte and funnel permutations, lop3, dot products, masks, fences,
// special registers, and the instructions that need no code on a CPU.
#include "ptx/lower.h"
#include "devrt/check_rt.h"

namespace cucpu::ptx {

using llvm::Value;

Value* FnLowering::special(const Operand& o) {
  llvm::Type* i32 = b.getInt32Ty();
  auto env3 = [&](int field, int comp) {
    auto* gep = b.CreateInBoundsGEP(env_ty, env, {b.getInt32(0), b.getInt32(static_cast<uint32_t>(field)), b.getInt32(static_cast<uint32_t>(comp))});
    auto* ld = b.CreateLoad(i32, gep);
    ld->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx, {}));
    // What the launch limits guarantee, so that the optimizer can prove the
    // usual index arithmetic (ctaid * ntid + tid) does not overflow: block
    // dimensions up to 1024 (64 in z); block indices below the launch's grid
    // limit (the runner refuses larger grids in x for this code: abi.h).
    const uint32_t grid_x = big_grid ? 0x7fffffffu : kMaxGridX;
    const uint32_t hi = field == 0 ? (comp == 2 ? 65 : 1025) : field == 1 ? (comp == 0 ? grid_x + 1 : 65536)
                                                                          : (comp == 0 ? grid_x : 65535);
    ld->setMetadata(llvm::LLVMContext::MD_range,
                    llvm::MDNode::get(ctx, {llvm::ConstantAsMetadata::get(b.getInt32(field == 2 ? 0 : 1)),
                                            llvm::ConstantAsMetadata::get(b.getInt32(hi))}));
    return ld;
  };
  Value* lane = b.CreateAnd(tid, 31);
  switch (o.sreg) {
    case SReg::kTid: {
      if (tid_xyz[o.comp]) return tid_xyz[o.comp];
      Value* nx = env3(0, 0);
      if (o.comp == 0) return b.CreateURem(tid, nx);
      Value* ny = env3(0, 1);
      if (o.comp == 1) return b.CreateURem(b.CreateUDiv(tid, nx), ny);
      return b.CreateUDiv(tid, b.CreateMul(nx, ny));
    }
    case SReg::kNtid: return env3(0, o.comp);
    case SReg::kNctaid: return env3(1, o.comp);
    case SReg::kCtaid: return env3(2, o.comp);
    case SReg::kLaneId: return lane;
    case SReg::kWarpId: return b.CreateLShr(tid, 5);
    case SReg::kNWarpId: return b.getInt32(64);
    case SReg::kSmId: return b.getInt32(0);
    case SReg::kNSmId: return b.getInt32(1);
    case SReg::kGridId: return b.getInt64(1);
    case SReg::kLanemaskEq: return b.CreateShl(b.getInt32(1), lane);
    case SReg::kLanemaskLt: return b.CreateSub(b.CreateShl(b.getInt32(1), lane), b.getInt32(1));
    case SReg::kLanemaskLe: return b.CreateSub(b.CreateShl(b.getInt32(2), lane), b.getInt32(1));  // lane 31: 0 - 1 = all ones
    case SReg::kLanemaskGe: return b.CreateNot(b.CreateSub(b.CreateShl(b.getInt32(1), lane), b.getInt32(1)));
    case SReg::kLanemaskGt: return b.CreateNot(b.CreateSub(b.CreateShl(b.getInt32(2), lane), b.getInt32(1)));
    case SReg::kClock: return b.CreateTrunc(intrinsic(llvm::Intrinsic::readcyclecounter, {}, {}), i32);
    case SReg::kClockHi: return b.CreateTrunc(b.CreateLShr(intrinsic(llvm::Intrinsic::readcyclecounter, {}, {}), 32), i32);
    case SReg::kClock64: return intrinsic(llvm::Intrinsic::readcyclecounter, {}, {});
    case SReg::kGlobalTimer:
    case SReg::kGlobalTimerLo:
    case SReg::kGlobalTimerHi: {
      auto* ty = llvm::FunctionType::get(b.getInt64Ty(), {}, false);
      Value* t = b.CreateCall(runtime("cucpu_rt_globaltimer", ty), {});
      if (o.sreg == SReg::kGlobalTimerLo) return b.CreateTrunc(t, i32);
      if (o.sreg == SReg::kGlobalTimerHi) return b.CreateTrunc(b.CreateLShr(t, 32), i32);
      return t;
    }
    case SReg::kDynamicSmemSize: return env_field(8, i32);
    case SReg::kTotalSmemSize: return b.CreateAdd(env_field(7, i32), env_field(8, i32));
    case SReg::kAggrSmemSize: return env_field(9, i32);
    case SReg::kReservedSmemBegin:
    case SReg::kReservedSmemEnd:
    case SReg::kReservedSmem0:
    case SReg::kReservedSmem1: {
      Value* begin = b.CreateAnd(b.CreateAdd(b.CreateAdd(env_field(7, i32), env_field(8, i32)), b.getInt32(15)), b.getInt32(~15u));
      if (o.sreg == SReg::kReservedSmemEnd) return b.CreateAdd(begin, b.getInt32(kReservedShared));
      if (o.sreg == SReg::kReservedSmem1) return b.CreateAdd(begin, b.getInt32(kReservedShared / 2));
      return begin;
    }
    case SReg::kReservedSmemCap: return b.getInt32(kReservedShared);
    case SReg::kClusterId: return env3(2, o.comp);
    case SReg::kNClusterId: return env3(1, o.comp);
    case SReg::kClusterCtaId: return b.getInt32(0);
    case SReg::kClusterNCtaId: return b.getInt32(1);
    case SReg::kClusterCtaRank: return b.getInt32(0);
    case SReg::kClusterNCtaRank: return b.getInt32(1);
    case SReg::kIsExplicitCluster: return b.getFalse();
    case SReg::kEnvReg: {
      // %envreg1 (high half) and %envreg2 (low half): the cooperative
      // launch's grid workspace, as nvcc's grid.sync() assembles it; others are 0.
      if (o.comp != 1 && o.comp != 2) return b.getInt32(0);
      Value* ws = env_field(12, b.getInt64Ty());
      return b.CreateTrunc(o.comp == 1 ? b.CreateLShr(ws, 32) : ws, i32);
    }
    case SReg::kPm: return b.getInt32(0);
  }
  fail("unknown special register");
}

Value* FnLowering::mbarrier_object(const Instr& in, size_t k) {
  if (k >= in.args.size() || in.args[k].kind != Operand::Kind::kAddr) fail(op_name(in.op) + " needs the barrier's [address]");
  const Space space = space_of(in);
  Value* p = address(in.args[k], space);
  check_alignment(p, 8);
  check_access(p, 8, kAccessWrite | kAccessAtomic, space);
  return p;
}

Value* FnLowering::mbarrier_call(Value* object, MbarrierOp op, Value* value) {
  auto* ty = llvm::FunctionType::get(b.getInt64Ty(), {llvm::PointerType::get(ctx, 0), b.getInt32Ty(), b.getInt64Ty()},
                                     false);
  return b.CreateCall(runtime("cucpu_rt_mbarrier", ty), {object, b.getInt32(static_cast<uint32_t>(op)), value});
}

// The instructions of this family, each by its own function (below).
bool FnLowering::lower_misc(const Instr& in) {
  switch (in.op) {
    case Op::kMov: return lower_mov(in);
    case Op::kPrmt: return lower_prmt(in);
    case Op::kShf: return lower_shf(in);
    case Op::kLop3: return lower_lop3(in);
    case Op::kDp4a: case Op::kDp2a: return lower_dot_product(in);
    case Op::kBmsk: return lower_bmsk(in);
    case Op::kSzext: return lower_szext(in);
    case Op::kFns: return lower_fns(in);
    case Op::kMembar: case Op::kFence: return lower_fence(in);
    case Op::kNanosleep: return lower_nanosleep(in);
    case Op::kMbarrier: return lower_mbarrier(in);
    case Op::kPrefetch: case Op::kPrefetchu: case Op::kPmevent: case Op::kGriddepcontrol:
    case Op::kSetmaxnreg: case Op::kDiscard: case Op::kApplypriority: case Op::kCreatepolicy:
      return lower_hint(in);
    case Op::kCp: return lower_cp(in);
    case Op::kCopysign: return lower_copysign(in);
    case Op::kTestp: return lower_testp(in);
    default: return false;
  }
}

bool FnLowering::lower_mov(const Instr& in) {
  auto& A = in.args;
  const Ty t = type_suffix(in);
  if (A.size() != 2) fail("mov needs two operands");
  write(A[0], read(A[1], t), t);
  return true;
}

bool FnLowering::lower_prmt(const Instr& in) {
  auto& A = in.args;
  // Byte permute of {b, a} (8 bytes) by the selector c.
  Value* a = operand_value(in, 1, Ty::kB32);
  Value* bb = operand_value(in, 2, Ty::kB32);
  Value* c = operand_value(in, 3, Ty::kB32);
  llvm::Type* i64 = b.getInt64Ty();
  Value* both = b.CreateOr(b.CreateZExt(a, i64), b.CreateShl(b.CreateZExt(bb, i64), 32));
  std::string mode;
  for (auto& m : in.mods)
    if (m != "b32") mode = m;
  Value* r = b.getInt32(0);
  auto byte_at = [&](Value* sel) {  // sel: i32 0..7
    return b.CreateTrunc(b.CreateLShr(both, b.CreateZExt(b.CreateMul(sel, b.getInt32(8)), i64)), b.getInt32Ty());
  };
  for (uint32_t i = 0; i < 4; ++i) {
    Value* byte;
    if (mode.empty()) {
      Value* s = b.CreateAnd(b.CreateLShr(c, i * 4), 0xf);
      Value* v = b.CreateAnd(byte_at(b.CreateAnd(s, 7)), 0xff);
      // msb of the selector nibble: replicate the byte's sign bit.
      Value* sign = b.CreateSelect(b.CreateICmpNE(b.CreateAnd(v, 0x80), b.getInt32(0)), b.getInt32(0xff), b.getInt32(0));
      byte = b.CreateSelect(b.CreateICmpNE(b.CreateAnd(s, 8), b.getInt32(0)), sign, v);
    } else {
      Value* s2 = b.CreateAnd(c, 3);
      static const uint8_t kF4e[4][4] = {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}};
      static const uint8_t kB4e[4][4] = {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}};
      static const uint8_t kRc8[4][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}};
      static const uint8_t kEcl[4][4] = {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}};
      static const uint8_t kEcr[4][4] = {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}};
      static const uint8_t kRc16[4][4] = {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}};
      const uint8_t(*tab)[4] = mode == "f4e" ? kF4e : mode == "b4e" ? kB4e : mode == "rc8" ? kRc8
                               : mode == "ecl" ? kEcl : mode == "ecr" ? kEcr : mode == "rc16" ? kRc16 : nullptr;
      if (!tab) fail("unknown prmt mode '" + mode + "'");
      Value* sel = b.getInt32(tab[3][i]);
      for (int k = 2; k >= 0; --k) sel = b.CreateSelect(b.CreateICmpEQ(s2, b.getInt32(static_cast<uint32_t>(k))), b.getInt32(tab[k][i]), sel);
      byte = b.CreateAnd(byte_at(sel), 0xff);
    }
    r = b.CreateOr(r, b.CreateShl(byte, i * 8));
  }
  write(A[0], r, Ty::kB32);
  return true;
}

bool FnLowering::lower_shf(const Instr& in) {
  auto& A = in.args;
  Value* lo = operand_value(in, 1, Ty::kB32);
  Value* hi = operand_value(in, 2, Ty::kB32);
  Value* n = operand_value(in, 3, Ty::kU32);
  n = in.has("clamp") ? b.CreateSelect(b.CreateICmpUGT(n, b.getInt32(32)), b.getInt32(32), n) : b.CreateAnd(n, 31);
  llvm::Type* i64 = b.getInt64Ty();
  Value* both = b.CreateOr(b.CreateZExt(lo, i64), b.CreateShl(b.CreateZExt(hi, i64), 32));
  Value* n64 = b.CreateZExt(n, i64);
  Value* r = in.has("l") ? b.CreateTrunc(b.CreateLShr(b.CreateShl(both, n64), 32), b.getInt32Ty())
                         : b.CreateTrunc(b.CreateLShr(both, n64), b.getInt32Ty());
  write(A[0], r, Ty::kB32);
  return true;
}

bool FnLowering::lower_lop3(const Instr& in) {
  auto& A = in.args;
  Value* a = operand_value(in, 1, Ty::kB32);
  Value* bb = operand_value(in, 2, Ty::kB32);
  Value* c = operand_value(in, 3, Ty::kB32);
  if (A.size() < 5 || A[4].kind != Operand::Kind::kImm) fail("lop3 needs an immediate lookup table");
  const uint32_t lut = static_cast<uint32_t>(A[4].imm) & 0xff;
  Value* r = b.getInt32(0);
  for (uint32_t k = 0; k < 8; ++k) {
    if (!(lut >> k & 1)) continue;
    Value* term = b.getInt32(0xffffffffu);
    term = b.CreateAnd(term, (k & 4) ? a : b.CreateNot(a));
    term = b.CreateAnd(term, (k & 2) ? bb : b.CreateNot(bb));
    term = b.CreateAnd(term, (k & 1) ? c : b.CreateNot(c));
    r = b.CreateOr(r, term);
  }
  write(A[0], r, Ty::kB32);
  return true;
}

bool FnLowering::lower_dot_product(const Instr& in) {
  const Op op = in.op;
  auto& A = in.args;
  const Ty at = type_suffix(in, 0), bt = type_suffix(in, 1);
  Value* a = operand_value(in, 1, Ty::kB32);
  Value* bb = operand_value(in, 2, Ty::kB32);
  Value* acc = operand_value(in, 3, at == Ty::kS32 || bt == Ty::kS32 ? Ty::kS32 : Ty::kU32);
  auto part = [&](Value* v, uint32_t idx, uint32_t width, bool s) {
    Value* x = b.CreateLShr(v, idx * width);
    x = b.CreateTrunc(x, b.getIntNTy(width));
    return s ? b.CreateSExt(x, b.getInt32Ty()) : b.CreateZExt(x, b.getInt32Ty());
  };
  Value* sum = acc;
  if (op == Op::kDp4a) {
    for (uint32_t i = 0; i < 4; ++i)
      sum = b.CreateAdd(sum, b.CreateMul(part(a, i, 8, at == Ty::kS32), part(bb, i, 8, bt == Ty::kS32)));
  } else {
    const uint32_t base = in.has("hi") ? 2 : 0;
    for (uint32_t i = 0; i < 2; ++i)
      sum = b.CreateAdd(sum, b.CreateMul(part(a, i, 16, at == Ty::kS32), part(bb, base + i, 8, bt == Ty::kS32)));
  }
  write(A[0], sum, Ty::kB32);
  return true;
}

bool FnLowering::lower_bmsk(const Instr& in) {
  auto& A = in.args;
  // Mask of b bits starting at a.
  Value* a = operand_value(in, 1, Ty::kU32);
  Value* w = operand_value(in, 2, Ty::kU32);
  if (in.has("clamp")) {
    a = b.CreateSelect(b.CreateICmpUGT(a, b.getInt32(32)), b.getInt32(32), a);
    w = b.CreateSelect(b.CreateICmpUGT(w, b.getInt32(32)), b.getInt32(32), w);
  } else {
    a = b.CreateAnd(a, 31);
    w = b.CreateAnd(w, 31);
  }
  llvm::Type* i64 = b.getInt64Ty();
  Value* ones = b.CreateSub(b.CreateShl(b.getInt64(1), b.CreateZExt(w, i64)), b.getInt64(1));
  Value* m = b.CreateShl(ones, b.CreateZExt(a, i64));
  write(A[0], b.CreateTrunc(m, b.getInt32Ty()), Ty::kB32);
  return true;
}

bool FnLowering::lower_szext(const Instr& in) {
  auto& A = in.args;
  const Ty t = type_suffix(in);
  Value* a = operand_value(in, 1, Ty::kB32);
  Value* n = operand_value(in, 2, Ty::kU32);
  n = in.has("clamp") ? b.CreateSelect(b.CreateICmpUGT(n, b.getInt32(32)), b.getInt32(32), n) : b.CreateAnd(n, 31);
  Value* sh = b.CreateSub(b.getInt32(32), n);
  Value* safe = b.CreateSelect(b.CreateICmpUGE(sh, b.getInt32(32)), b.getInt32(0), sh);
  Value* r = t == Ty::kS32 ? b.CreateAShr(b.CreateShl(a, safe), safe) : b.CreateLShr(b.CreateShl(a, safe), safe);
  r = b.CreateSelect(b.CreateICmpEQ(n, b.getInt32(0)), b.getInt32(0), r);
  write(A[0], r, Ty::kB32);
  return true;
}

bool FnLowering::lower_fns(const Instr& in) {
  auto& A = in.args;
  // Position of the n-th set bit of mask at or after (or before) base.
  auto* ty = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt32Ty(), b.getInt32Ty(), b.getInt32Ty()}, false);
  Value* args[] = {operand_value(in, 1, Ty::kB32), operand_value(in, 2, Ty::kU32), operand_value(in, 3, Ty::kS32)};
  write(A[0], b.CreateCall(runtime("cucpu_rt_fns", ty), args), Ty::kB32);
  return true;
}

bool FnLowering::lower_fence(const Instr& in) {
  const bool cta = in.has("cta");
  if (in.has("proxy")) return true;  // proxy fences order nothing a CPU can reorder
  b.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent,
                cta ? ctx.getOrInsertSyncScopeID("singlethread") : static_cast<llvm::SyncScope::ID>(llvm::SyncScope::System));
  return true;
}

bool FnLowering::lower_nanosleep(const Instr& in) {
  auto* ty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty()}, false);
  b.CreateCall(runtime("cucpu_rt_nanosleep", ty), {operand_value(in, 0, Ty::kU32)});
  return true;
}

bool FnLowering::lower_mbarrier(const Instr& in) {
  auto& A = in.args;
  // A barrier object is one 64-bit word in shared (or generic) memory;
  // cucpu_rt_mbarrier (runtime.cpp) keeps its phase and counts. The
  // transaction counts of bulk copies (expect_tx, complete_tx) are not
  // implemented, nor are the bulk copies.
  if (in.mods.empty()) fail("mbarrier needs an operation");
  const std::string& what = in.mods[0];
  if (in.has("expect_tx") || in.has("complete_tx")) unsupported();
  auto u64_of = [&](size_t i) { return b.CreateZExt(operand_value(in, i, Ty::kU32), b.getInt64Ty()); };
  if (what == "pending_count") {  // pending_count.b64 count, state
    Value* count = b.CreateAnd(operand_value(in, 1, Ty::kB64), b.getInt64(kMbarrierCountMask));
    write(A[0], b.CreateTrunc(count, b.getInt32Ty()), Ty::kU32);
    return true;
  }
  if (what == "init") {  // init [addr], count
    mbarrier_call(mbarrier_object(in, 0), MbarrierOp::kInit, u64_of(1));
    return true;
  }
  if (what == "inval") {
    mbarrier_call(mbarrier_object(in, 0), MbarrierOp::kInval, b.getInt64(0));
    return true;
  }
  if (what == "arrive" || what == "arrive_drop") {  // arrive state|_, [addr] {, count}
    Value* count = A.size() >= 3 ? u64_of(2) : b.getInt64(1);
    const MbarrierOp code = what == "arrive" ? MbarrierOp::kArrive : MbarrierOp::kArriveDrop;
    Value* state = mbarrier_call(mbarrier_object(in, 1), code, count);
    if (A[0].kind != Operand::Kind::kSink) write(A[0], state, Ty::kB64);
    return true;
  }
  if (what == "test_wait" || what == "try_wait") {  // waitComplete, [addr], state|phaseParity {, hint}
    // try_wait may wait a while before it answers; answering at once is
    // one of its outcomes (the loop around it is a spin-wait: lower_spin.cpp).
    const bool parity = in.has("parity");
    const MbarrierOp code = parity ? MbarrierOp::kTestParity : MbarrierOp::kTestState;
    Value* done = mbarrier_call(mbarrier_object(in, 1), code, parity ? u64_of(2) : operand_value(in, 2, Ty::kB64));
    write(A[0], b.CreateICmpNE(done, b.getInt64(0)), Ty::kPred);
    return true;
  }
  unsupported();
}

bool FnLowering::lower_hint(const Instr& in) {
  const Op op = in.op;
  auto& A = in.args;
  if (op == Op::kCreatepolicy) write(A[0], b.getInt64(0), Ty::kB64);
  return true;
}

bool FnLowering::lower_cp(const Instr& in) {
  auto& A = in.args;
  // cp.async.{ca,cg}.shared.global [dst], [src], size[, src_size]: a plain
  // copy done at once (commit and wait then have nothing to wait for).
  if (in.mods.size() >= 2 && in.mods[0] == "async" &&
      (in.mods[1] == "commit_group" || in.mods[1] == "wait_group" || in.mods[1] == "wait_all"))
    return true;
  if (in.mods.size() >= 2 && in.mods[0] == "async" && in.mods[1] == "mbarrier") {
    // cp.async.mbarrier.arrive[.noinc] [addr]: an arrive once this
    // thread's earlier copies are done, which they are. Without .noinc
    // the pending count is raised by one first: no change at all.
    if (in.mods.size() < 3 || in.mods[2] != "arrive") unsupported();
    Value* object = mbarrier_object(in, 0);
    if (in.has("noinc")) mbarrier_call(object, MbarrierOp::kArrive, b.getInt64(1));
    return true;
  }
  if (in.mods.empty() || in.mods[0] != "async" || A.size() < 3) unsupported();
  if (in.has("bulk") || in.has("mbarrier")) unsupported();
  Value* dst = address(A[0], Space::kShared);
  Value* src = address(A[1], Space::kGlobal);
  if (A[2].kind != Operand::Kind::kImm) fail("cp.async needs an immediate size");
  const uint32_t size = static_cast<uint32_t>(A[2].imm);
  if (size != 4 && size != 8 && size != 16) fail("cp.async copies 4, 8 or 16 bytes");
  check_alignment(dst, size);
  check_alignment(src, size);
  // Operands after the size: src-size (a 32-bit value) or ignore-src (a
  // predicate), then with .L2::cache_hint a cache policy, which changes nothing here.
  size_t extra = A.size() - 3;
  if (in.has("L2::cache_hint") && extra > 0) --extra;
  const bool ignore_src = extra > 0 && A[3].kind == Operand::Kind::kReg &&
                          f.regs[static_cast<size_t>(A[3].reg)].ty == Ty::kPred;
  if (ignore_src) {
    // True: zeros, and the source is not read; false: the whole copy.
    Value* n = b.CreateSelect(read(A[3], Ty::kPred), b.getInt64(0), b.getInt64(size));
    b.CreateMemSet(dst, b.getInt8(0), size, llvm::MaybeAlign(1));
    b.CreateMemCpy(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), n);
  } else if (extra > 0 && A[3].kind != Operand::Kind::kList) {
    // src-size bytes come from src, the rest are zeros.
    Value* n = b.CreateZExt(read(A[3], Ty::kU32), b.getInt64Ty());
    n = b.CreateSelect(b.CreateICmpUGT(n, b.getInt64(size)), b.getInt64(size), n);
    b.CreateMemSet(dst, b.getInt8(0), size, llvm::MaybeAlign(1));
    b.CreateMemCpy(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), n);
  } else {
    b.CreateMemCpy(dst, llvm::MaybeAlign(size), src, llvm::MaybeAlign(size), size);
  }
  return true;
}

bool FnLowering::lower_copysign(const Instr& in) {
  auto& A = in.args;
  const Ty t = type_suffix(in);
  Value* a = operand_value(in, 1, t);
  Value* c = operand_value(in, 2, t);
  write(A[0], intrinsic(llvm::Intrinsic::copysign, {c->getType()}, {c, a}), t);
  return true;
}

bool FnLowering::lower_testp(const Instr& in) {
  auto& A = in.args;
  const Ty t = type_suffix(in);
  Value* a = operand_value(in, 1, t);
  llvm::Type* ft = a->getType();
  Value* fa = intrinsic(llvm::Intrinsic::fabs, {ft}, {a});
  Value* inf = llvm::ConstantFP::getInfinity(ft);
  Value* minnorm = llvm::ConstantFP::get(ft, ft->isFloatTy() ? 1.17549435e-38 : 2.2250738585072014e-308);
  Value* r;
  const std::string& k = in.mods.empty() ? std::string() : in.mods[0];
  if (k == "finite") r = b.CreateFCmpOLT(fa, inf);
  else if (k == "infinite") r = b.CreateFCmpOEQ(fa, inf);
  else if (k == "number") r = b.CreateFCmpORD(a, a);
  else if (k == "notanumber") r = b.CreateFCmpUNO(a, a);
  else if (k == "normal") r = b.CreateAnd(b.CreateFCmpOGE(fa, minnorm), b.CreateFCmpOLT(fa, inf));
  else if (k == "subnormal") r = b.CreateAnd(b.CreateFCmpOLT(fa, minnorm), b.CreateFCmpONE(fa, llvm::ConstantFP::get(ft, 0.0)));
  else fail("unknown testp class '" + k + "'");
  write(A[0], r, Ty::kPred);
  return true;
}

}  // namespace cucpu::ptx
