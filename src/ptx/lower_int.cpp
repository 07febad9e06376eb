// Integer, bit and predicate instructions; comparisons and selection.
#include "ptx/lower.h"

namespace cucpu::ptx {

using llvm::Value;

// setp/set comparison of a and b under `cmp` for type t.
static Value* compare(FnLowering& L, const std::string& cmp, Value* a, Value* b, Ty t) {
  auto& B = L.b;
  if (is_float(t)) {
    using P = llvm::CmpInst::Predicate;
    P p;
    if (cmp == "eq") p = P::FCMP_OEQ;
    else if (cmp == "ne") p = P::FCMP_ONE;
    else if (cmp == "lt") p = P::FCMP_OLT;
    else if (cmp == "le") p = P::FCMP_OLE;
    else if (cmp == "gt") p = P::FCMP_OGT;
    else if (cmp == "ge") p = P::FCMP_OGE;
    else if (cmp == "equ") p = P::FCMP_UEQ;
    else if (cmp == "neu") p = P::FCMP_UNE;
    else if (cmp == "ltu") p = P::FCMP_ULT;
    else if (cmp == "leu") p = P::FCMP_ULE;
    else if (cmp == "gtu") p = P::FCMP_UGT;
    else if (cmp == "geu") p = P::FCMP_UGE;
    else if (cmp == "num") p = P::FCMP_ORD;
    else if (cmp == "nan") p = P::FCMP_UNO;
    else L.fail("unknown comparison '" + cmp + "'");
    return B.CreateFCmp(p, a, b);
  }
  const bool s = is_signed(t);
  if (cmp == "eq") return B.CreateICmpEQ(a, b);
  if (cmp == "ne") return B.CreateICmpNE(a, b);
  if (cmp == "lt") return s ? B.CreateICmpSLT(a, b) : B.CreateICmpULT(a, b);
  if (cmp == "le") return s ? B.CreateICmpSLE(a, b) : B.CreateICmpULE(a, b);
  if (cmp == "gt") return s ? B.CreateICmpSGT(a, b) : B.CreateICmpUGT(a, b);
  if (cmp == "ge") return s ? B.CreateICmpSGE(a, b) : B.CreateICmpUGE(a, b);
  if (cmp == "lo") return B.CreateICmpULT(a, b);
  if (cmp == "ls") return B.CreateICmpULE(a, b);
  if (cmp == "hi") return B.CreateICmpUGT(a, b);
  if (cmp == "hs") return B.CreateICmpUGE(a, b);
  L.fail("unknown comparison '" + cmp + "'");
}

Value* compare_values(FnLowering& L, const std::string& cmp, Value* a, Value* b, Ty t) { return compare(L, cmp, a, b, t); }

// The condition-code carry (add.cc, addc, sub.cc, subc, mad.cc, madc): a
// hidden i1 slot of the function, false at its entry.
llvm::AllocaInst* FnLowering::carry_slot() {
  static const char* kCarry = "cucpu.carry";
  for (auto& I : *entry_block)
    if (auto* al = llvm::dyn_cast<llvm::AllocaInst>(&I))
      if (al->getName() == kCarry) return al;
  llvm::IRBuilder<> eb(entry_block, entry_block->begin());
  llvm::AllocaInst* cc = eb.CreateAlloca(b.getInt1Ty(), nullptr, kCarry);
  eb.CreateStore(b.getFalse(), cc);
  return cc;
}

namespace {

// An integer instruction being lowered, with one function per form.
struct IntForm {
  FnLowering& L;
  const Instr& in;
  Op op;
  Ty t;      // its (first) type suffix
  int bits;  // t's width
  const std::vector<Operand>& A;
  llvm::IRBuilder<>& b;
  Value* arg(size_t i, Ty as) const {
    if (i >= A.size()) L.fail("missing operand");
    return L.read(A[i], as);
  }
  bool lower_compare() const;
  bool lower_selp() const;
  bool lower_slct() const;
  bool lower_add_sub() const;
  bool lower_mul_mad() const;
  bool lower_sad() const;
  bool lower_div_rem() const;
  bool lower_abs_neg() const;
  bool lower_min_max() const;
  bool lower_logic() const;
  bool lower_not() const;
  bool lower_cnot() const;
  bool lower_shift() const;
  bool lower_count_bits() const;
  bool lower_brev() const;
  bool lower_bfind() const;
  bool lower_bfe() const;
  bool lower_bfi() const;
};

bool IntForm::lower_compare() const {
  // setp.cmp[.bool].type p[|q], a, b[, {!}c]; set.cmp[.bool].dtype.stype d, a, b[, {!}c]
  const Ty st = op == Op::kSet ? L.type_suffix(in, 1) : t;
  if (st == Ty::kF16 || st == Ty::kF16x2 || st == Ty::kBF16 || st == Ty::kBF16x2) return false;  // lower_half
  if (in.mods.empty() || A.size() < 3) L.fail("malformed " + op_name(op));
  const std::string cmp = in.mods[0];
  Value* a = arg(1, st);
  Value* bb = arg(2, st);
  if (is_float(st) && in.has("ftz") && st == Ty::kF32) {
    auto flush = [&](Value* v) {
      Value* tiny = b.CreateFCmpOLT(L.intrinsic(llvm::Intrinsic::fabs, {v->getType()}, {v}),
                                    llvm::ConstantFP::get(v->getType(), 1.17549435e-38));
      return b.CreateSelect(tiny, L.intrinsic(llvm::Intrinsic::copysign, {v->getType()}, {llvm::ConstantFP::get(v->getType(), 0.0), v}), v);
    };
    a = flush(a);
    bb = flush(bb);
  }
  Value* p = compare(L, cmp, a, bb, st);
  Value* q = b.CreateNot(p);
  if (A.size() >= 4) {
    Value* c = arg(3, Ty::kPred);
    std::string bop = in.mods.size() > 1 ? in.mods[1] : "";
    auto combine = [&](Value* x) {
      if (bop == "and") return b.CreateAnd(x, c);
      if (bop == "or") return b.CreateOr(x, c);
      if (bop == "xor") return b.CreateXor(x, c);
      L.fail("set with a predicate operand needs .and, .or or .xor");
    };
    p = combine(p);
    q = combine(q);
  }
  if (op == Op::kSetp) {
    L.write(A[0], p, Ty::kPred);
    L.write_pair(A[0], q);
  } else {
    // An f16 destination of a wider comparison gets 0x0001 for true, as
    // driver 580 writes it (isa_edges_probe), not f16's 1.0.
    Value* r = t == Ty::kF32   ? b.CreateSelect(p, llvm::ConstantFP::get(b.getFloatTy(), 1.0), llvm::ConstantFP::get(b.getFloatTy(), 0.0))
               : t == Ty::kF16 ? b.CreateZExt(p, L.llty(t))
                               : b.CreateSExt(p, L.llty(t));
    L.write(A[0], r, t);
  }
  return true;
}

bool IntForm::lower_selp() const {
  L.write(A[0], b.CreateSelect(arg(3, Ty::kPred), arg(1, t), arg(2, t)), t);
  return true;
}

bool IntForm::lower_slct() const {
  const Ty ct = L.type_suffix(in, 1);
  Value* c = arg(3, ct);
  Value* ge = ct == Ty::kF32 ? b.CreateFCmpOGE(c, llvm::ConstantFP::get(b.getFloatTy(), 0.0)) : b.CreateICmpSGE(c, b.getInt32(0));
  L.write(A[0], b.CreateSelect(ge, arg(1, t), arg(2, t)), t);
  return true;
}

bool IntForm::lower_add_sub() const {
  if (t == Ty::kS16x2 || t == Ty::kU16x2) {
    Value* a = b.CreateBitCast(arg(1, Ty::kB32), llvm::FixedVectorType::get(b.getInt16Ty(), 2));
    Value* c = b.CreateBitCast(arg(2, Ty::kB32), llvm::FixedVectorType::get(b.getInt16Ty(), 2));
    Value* r = op == Op::kAdd ? b.CreateAdd(a, c) : b.CreateSub(a, c);
    L.write(A[0], b.CreateBitCast(r, b.getInt32Ty()), Ty::kB32);
    return true;
  }
  Value* a = arg(1, t);
  Value* c = arg(2, t);
  const bool is_add = op == Op::kAdd || op == Op::kAddc;
  if (in.has("sat")) {
    L.write(A[0], L.intrinsic(is_add ? llvm::Intrinsic::sadd_sat : llvm::Intrinsic::ssub_sat, {a->getType()}, {a, c}), t);
    return true;
  }
  const bool with_carry_in = op == Op::kAddc || op == Op::kSubc;
  const bool carry_out = in.has("cc");
  if (!with_carry_in && !carry_out) {
    L.write(A[0], is_add ? b.CreateAdd(a, c) : b.CreateSub(a, c), t);
    return true;
  }
  llvm::AllocaInst* cc = L.carry_slot();
  llvm::Type* wt = b.getIntNTy(static_cast<unsigned>(bits * 2));
  Value* wa = b.CreateZExt(a, wt);
  Value* wc = b.CreateZExt(c, wt);
  Value* w = is_add ? b.CreateAdd(wa, wc) : b.CreateSub(wa, wc);
  if (with_carry_in) {
    Value* cin = b.CreateZExt(b.CreateLoad(b.getInt1Ty(), cc), wt);
    w = is_add ? b.CreateAdd(w, cin) : b.CreateSub(w, cin);
  }
  L.write(A[0], b.CreateTrunc(w, a->getType()), t);
  if (carry_out) b.CreateStore(b.CreateTrunc(b.CreateLShr(w, static_cast<uint64_t>(bits)), b.getInt1Ty()), cc);
  return true;
}

bool IntForm::lower_mul_mad() const {
  const bool wide = in.has("wide"), hi = in.has("hi");
  const bool s = is_signed(t);
  Value* a = arg(1, t);
  Value* c = arg(2, t);
  const bool is_mad = op == Op::kMad || op == Op::kMad24 || op == Op::kMadc;
  if (op == Op::kMul24 || op == Op::kMad24) {
    // 24-bit operands: hi takes bits 16..47 of the 48-bit product.
    llvm::Type* i64 = b.getInt64Ty();
    Value* a24 = s ? b.CreateAShr(b.CreateShl(b.CreateSExt(a, i64), 40), 40) : b.CreateAnd(b.CreateZExt(a, i64), 0xffffff);
    Value* c24 = s ? b.CreateAShr(b.CreateShl(b.CreateSExt(c, i64), 40), 40) : b.CreateAnd(b.CreateZExt(c, i64), 0xffffff);
    Value* p = b.CreateMul(a24, c24);
    Value* r = b.CreateTrunc(hi ? b.CreateLShr(p, 16) : p, b.getInt32Ty());
    if (is_mad) r = b.CreateAdd(r, arg(3, t));
    L.write(A[0], r, t);
    return true;
  }
  if (wide) {
    llvm::Type* wt = b.getIntNTy(static_cast<unsigned>(bits * 2));
    Value* p = b.CreateMul(s ? b.CreateSExt(a, wt) : b.CreateZExt(a, wt), s ? b.CreateSExt(c, wt) : b.CreateZExt(c, wt));
    if (is_mad) p = b.CreateAdd(p, L.read(A[3], bits == 32 ? (s ? Ty::kS64 : Ty::kU64) : (s ? Ty::kS32 : Ty::kU32)));
    L.write(A[0], p, bits == 32 ? Ty::kB64 : Ty::kB32);
    return true;
  }
  if (is_mad && (op == Op::kMadc || in.has("cc"))) {
    // mad.cc / madc (the extended-precision forms): the product's low or
    // high half plus c plus, for madc, the carry in; .cc keeps the carry out.
    llvm::Type* wt = b.getIntNTy(static_cast<unsigned>(bits * 2));
    Value* half = b.CreateMul(a, c);
    if (hi) {
      Value* p = b.CreateMul(s ? b.CreateSExt(a, wt) : b.CreateZExt(a, wt), s ? b.CreateSExt(c, wt) : b.CreateZExt(c, wt));
      half = b.CreateTrunc(b.CreateLShr(p, static_cast<uint64_t>(bits)), a->getType());
    }
    llvm::AllocaInst* cc = L.carry_slot();
    Value* w = b.CreateAdd(b.CreateZExt(half, wt), b.CreateZExt(arg(3, t), wt));
    if (op == Op::kMadc) w = b.CreateAdd(w, b.CreateZExt(b.CreateLoad(b.getInt1Ty(), cc), wt));
    L.write(A[0], b.CreateTrunc(w, a->getType()), t);
    if (in.has("cc")) b.CreateStore(b.CreateTrunc(b.CreateLShr(w, static_cast<uint64_t>(bits)), b.getInt1Ty()), cc);
    return true;
  }
  if (hi) {
    llvm::Type* wt = b.getIntNTy(static_cast<unsigned>(bits * 2));
    Value* p = b.CreateMul(s ? b.CreateSExt(a, wt) : b.CreateZExt(a, wt), s ? b.CreateSExt(c, wt) : b.CreateZExt(c, wt));
    Value* h = b.CreateTrunc(b.CreateLShr(p, static_cast<uint64_t>(bits)), a->getType());
    if (is_mad) {
      Value* d = arg(3, t);
      h = in.has("sat") ? L.intrinsic(llvm::Intrinsic::sadd_sat, {h->getType()}, {h, d}) : b.CreateAdd(h, d);
    }
    L.write(A[0], h, t);
    return true;
  }
  Value* p = b.CreateMul(a, c);
  if (is_mad) p = b.CreateAdd(p, arg(3, t));
  L.write(A[0], p, t);
  return true;
}

bool IntForm::lower_sad() const {
  Value* a = arg(1, t);
  Value* c = arg(2, t);
  Value* gt = is_signed(t) ? b.CreateICmpSGT(a, c) : b.CreateICmpUGT(a, c);
  Value* d = b.CreateSelect(gt, b.CreateSub(a, c), b.CreateSub(c, a));
  L.write(A[0], b.CreateAdd(d, arg(3, t)), t);
  return true;
}

bool IntForm::lower_div_rem() const {
  Value* a = arg(1, t);
  Value* c = arg(2, t);
  Value* zero = llvm::ConstantInt::get(a->getType(), 0);
  Value* is0 = b.CreateICmpEQ(c, zero);
  // Division by zero and INT_MIN / -1 do not trap on the GPU; LLVM must not see them.
  Value* safe_c = b.CreateSelect(is0, llvm::ConstantInt::get(a->getType(), 1), c);
  Value* r;
  if (is_signed(t)) {
    Value* ovf = b.CreateAnd(b.CreateICmpEQ(a, llvm::ConstantInt::get(a->getType(), llvm::APInt::getSignedMinValue(static_cast<unsigned>(bits)))),
                             b.CreateICmpEQ(c, llvm::ConstantInt::get(a->getType(), static_cast<uint64_t>(-1), true)));
    safe_c = b.CreateSelect(ovf, llvm::ConstantInt::get(a->getType(), 1), safe_c);
    r = op == Op::kDiv ? b.CreateSDiv(a, safe_c) : b.CreateSRem(a, safe_c);
    if (op == Op::kRem) r = b.CreateSelect(ovf, zero, r);
  } else {
    r = op == Op::kDiv ? b.CreateUDiv(a, safe_c) : b.CreateURem(a, safe_c);
  }
  r = b.CreateSelect(is0, op == Op::kDiv ? llvm::ConstantInt::get(a->getType(), static_cast<uint64_t>(-1), true) : a, r);
  L.write(A[0], r, t);
  return true;
}

bool IntForm::lower_abs_neg() const {
  Value* a = arg(1, t);
  Value* r = op == Op::kNeg ? b.CreateNeg(a) : L.intrinsic(llvm::Intrinsic::abs, {a->getType()}, {a, b.getFalse()});
  L.write(A[0], r, t);
  return true;
}

bool IntForm::lower_min_max() const {
  if (t == Ty::kS16x2 || t == Ty::kU16x2) {
    auto* vt = llvm::FixedVectorType::get(b.getInt16Ty(), 2);
    Value* a = b.CreateBitCast(arg(1, Ty::kB32), vt);
    Value* c = b.CreateBitCast(arg(2, Ty::kB32), vt);
    const bool s = t == Ty::kS16x2;
    auto id = op == Op::kMin ? (s ? llvm::Intrinsic::smin : llvm::Intrinsic::umin) : (s ? llvm::Intrinsic::smax : llvm::Intrinsic::umax);
    Value* r = L.intrinsic(id, {vt}, {a, c});
    if (in.has("relu")) r = L.intrinsic(llvm::Intrinsic::smax, {vt}, {r, llvm::Constant::getNullValue(vt)});
    L.write(A[0], b.CreateBitCast(r, b.getInt32Ty()), Ty::kB32);
    return true;
  }
  Value* a = arg(1, t);
  Value* c = arg(2, t);
  const bool s = is_signed(t);
  auto id = op == Op::kMin ? (s ? llvm::Intrinsic::smin : llvm::Intrinsic::umin) : (s ? llvm::Intrinsic::smax : llvm::Intrinsic::umax);
  Value* r = L.intrinsic(id, {a->getType()}, {a, c});
  if (in.has("relu")) r = L.intrinsic(llvm::Intrinsic::smax, {a->getType()}, {r, llvm::ConstantInt::get(a->getType(), 0)});
  L.write(A[0], r, t);
  return true;
}

bool IntForm::lower_logic() const {
  Value* a = arg(1, t);
  Value* c = arg(2, t);
  Value* r = op == Op::kAnd ? b.CreateAnd(a, c) : op == Op::kOr ? b.CreateOr(a, c) : b.CreateXor(a, c);
  L.write(A[0], r, t);
  return true;
}

bool IntForm::lower_not() const {
  L.write(A[0], b.CreateNot(arg(1, t)), t);
  return true;
}

bool IntForm::lower_cnot() const {
  Value* a = arg(1, t);
  L.write(A[0], b.CreateZExt(b.CreateICmpEQ(a, llvm::ConstantInt::get(a->getType(), 0)), a->getType()), t);
  return true;
}

bool IntForm::lower_shift() const {
  Value* a = arg(1, t);
  Value* n = b.CreateZExtOrTrunc(arg(2, Ty::kU32), a->getType());
  Value* w = llvm::ConstantInt::get(a->getType(), static_cast<uint64_t>(bits));
  Value* big = b.CreateICmpUGE(n, w);
  Value* sn = b.CreateSelect(big, llvm::ConstantInt::get(a->getType(), static_cast<uint64_t>(bits - 1)), n);
  Value* r;
  if (op == Op::kShl) r = b.CreateSelect(big, llvm::ConstantInt::get(a->getType(), 0), b.CreateShl(a, sn));
  else if (is_signed(t)) r = b.CreateAShr(a, sn);
  else r = b.CreateSelect(big, llvm::ConstantInt::get(a->getType(), 0), b.CreateLShr(a, sn));
  L.write(A[0], r, t);
  return true;
}

bool IntForm::lower_count_bits() const {
  Value* a = arg(1, t);
  Value* r = op == Op::kPopc ? L.intrinsic(llvm::Intrinsic::ctpop, {a->getType()}, {a})
                          : L.intrinsic(llvm::Intrinsic::ctlz, {a->getType()}, {a, b.getFalse()});
  L.write(A[0], b.CreateZExtOrTrunc(r, b.getInt32Ty()), Ty::kU32);
  return true;
}

bool IntForm::lower_brev() const {
  Value* a = arg(1, t);
  L.write(A[0], L.intrinsic(llvm::Intrinsic::bitreverse, {a->getType()}, {a}), t);
  return true;
}

bool IntForm::lower_bfind() const {
  // Position of the most significant non-sign bit; 0xffffffff when none.
  Value* a = arg(1, t);
  Value* x = is_signed(t) ? b.CreateSelect(b.CreateICmpSLT(a, llvm::ConstantInt::get(a->getType(), 0)), b.CreateNot(a), a) : a;
  Value* lz = b.CreateZExtOrTrunc(L.intrinsic(llvm::Intrinsic::ctlz, {a->getType()}, {x, b.getFalse()}), b.getInt32Ty());
  Value* pos = b.CreateSub(b.getInt32(static_cast<uint32_t>(bits - 1)), lz);
  if (in.has("shiftamt")) pos = b.CreateSub(b.getInt32(static_cast<uint32_t>(bits - 1)), pos);
  Value* none = b.CreateICmpEQ(x, llvm::ConstantInt::get(a->getType(), 0));
  L.write(A[0], b.CreateSelect(none, b.getInt32(0xffffffffu), pos), Ty::kU32);
  return true;
}

bool IntForm::lower_bfe() const {
  // d = a[pos, pos+len) (sign-extended for .s types); pos and len are bytes 0 of b and c.
  Value* a = arg(1, t);
  llvm::Type* at = a->getType();
  Value* pos = b.CreateZExt(b.CreateAnd(arg(2, Ty::kU32), 0xff), at);
  Value* len = b.CreateZExt(b.CreateAnd(arg(3, Ty::kU32), 0xff), at);
  Value* W = llvm::ConstantInt::get(at, static_cast<uint64_t>(bits));
  Value* shifted = b.CreateSelect(b.CreateICmpUGE(pos, W), is_signed(t) ? b.CreateAShr(a, static_cast<uint64_t>(bits - 1)) : llvm::ConstantInt::get(at, 0),
                                  is_signed(t) ? b.CreateAShr(a, b.CreateSelect(b.CreateICmpUGE(pos, W), llvm::ConstantInt::get(at, 0), pos))
                                               : b.CreateLShr(a, b.CreateSelect(b.CreateICmpUGE(pos, W), llvm::ConstantInt::get(at, 0), pos)));
  Value* lenc = b.CreateSelect(b.CreateICmpUGT(len, W), W, len);
  Value* r;
  if (is_signed(t)) {
    // Sign bit: bit min(pos+len-1, W-1) of a.
    Value* keep = b.CreateSub(W, lenc);
    Value* safe_keep = b.CreateSelect(b.CreateICmpUGE(keep, W), llvm::ConstantInt::get(at, 0), keep);
    r = b.CreateAShr(b.CreateShl(shifted, safe_keep), safe_keep);
    Value* sbitpos = b.CreateAdd(pos, b.CreateSub(lenc, llvm::ConstantInt::get(at, 1)));
    sbitpos = b.CreateSelect(b.CreateICmpUGE(sbitpos, W), b.CreateSub(W, llvm::ConstantInt::get(at, 1)), sbitpos);
    Value* sbit = b.CreateAnd(b.CreateLShr(a, sbitpos), llvm::ConstantInt::get(at, 1));
    Value* fill = b.CreateNeg(sbit);
    r = b.CreateSelect(b.CreateICmpUGE(pos, W), fill, r);
    r = b.CreateSelect(b.CreateICmpEQ(lenc, llvm::ConstantInt::get(at, 0)), llvm::ConstantInt::get(at, 0), r);
  } else {
    Value* mask = b.CreateSelect(b.CreateICmpUGE(lenc, W), llvm::ConstantInt::getAllOnesValue(at),
                                 b.CreateSub(b.CreateShl(llvm::ConstantInt::get(at, 1), b.CreateSelect(b.CreateICmpUGE(lenc, W), llvm::ConstantInt::get(at, 0), lenc)), llvm::ConstantInt::get(at, 1)));
    r = b.CreateAnd(shifted, mask);
  }
  L.write(A[0], r, t);
  return true;
}

bool IntForm::lower_bfi() const {
  // d = a inserted into b at [pos, pos+len).
  Value* a = arg(1, t);
  Value* base = arg(2, t);
  llvm::Type* at = a->getType();
  Value* pos = b.CreateZExt(b.CreateAnd(arg(3, Ty::kU32), 0xff), at);
  Value* len = b.CreateZExt(b.CreateAnd(arg(4, Ty::kU32), 0xff), at);
  Value* W = llvm::ConstantInt::get(at, static_cast<uint64_t>(bits));
  Value* lenc = b.CreateSelect(b.CreateICmpUGT(len, W), W, len);
  Value* ones = b.CreateSelect(b.CreateICmpUGE(lenc, W), llvm::ConstantInt::getAllOnesValue(at),
                               b.CreateSub(b.CreateShl(llvm::ConstantInt::get(at, 1), b.CreateSelect(b.CreateICmpUGE(lenc, W), llvm::ConstantInt::get(at, 0), lenc)), llvm::ConstantInt::get(at, 1)));
  Value* safe_pos = b.CreateSelect(b.CreateICmpUGE(pos, W), llvm::ConstantInt::get(at, 0), pos);
  Value* mask = b.CreateShl(ones, safe_pos);
  Value* r = b.CreateOr(b.CreateAnd(base, b.CreateNot(mask)), b.CreateAnd(b.CreateShl(a, safe_pos), mask));
  L.write(A[0], b.CreateSelect(b.CreateICmpUGE(pos, W), base, r), t);
  return true;
}

}  // namespace

// The instructions of this family, each by its own function (above). The
// arithmetic forms take integer types alone: a float type goes to lower_float.
bool FnLowering::lower_int(const Instr& in) {
  const Ty t = type_suffix(in);
  const bool integer = !is_float(t) && t != Ty::kF16x2 && t != Ty::kBF16x2;
  const IntForm form{*this, in, in.op, t, integer ? type_bits(t) : 0, in.args, b};
  switch (in.op) {
    case Op::kSetp: case Op::kSet: return form.lower_compare();
    case Op::kSelp: return form.lower_selp();
    case Op::kSlct: return form.lower_slct();
    case Op::kAdd: case Op::kSub: case Op::kAddc: case Op::kSubc: return integer && form.lower_add_sub();
    case Op::kMul: case Op::kMad: case Op::kMul24: case Op::kMad24: case Op::kMadc: return integer && form.lower_mul_mad();
    case Op::kSad: return integer && form.lower_sad();
    case Op::kDiv: case Op::kRem: return integer && form.lower_div_rem();
    case Op::kAbs: case Op::kNeg: return integer && form.lower_abs_neg();
    case Op::kMin: case Op::kMax: return integer && form.lower_min_max();
    case Op::kAnd: case Op::kOr: case Op::kXor: return integer && form.lower_logic();
    case Op::kNot: return integer && form.lower_not();
    case Op::kCnot: return integer && form.lower_cnot();
    case Op::kShl: case Op::kShr: return integer && form.lower_shift();
    case Op::kPopc: case Op::kClz: return integer && form.lower_count_bits();
    case Op::kBrev: return integer && form.lower_brev();
    case Op::kBfind: return integer && form.lower_bfind();
    case Op::kBfe: return integer && form.lower_bfe();
    case Op::kBfi: return integer && form.lower_bfi();
    default: return false;
  }
}

}  // namespace cucpu::ptx
