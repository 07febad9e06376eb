// f32/f64 arithmetic: IEEE operations with their rounding modes, .ftz and
// .sat, and the approximate functions (within the PTX ISA's bounds).
//
// Round-to-nearest operations are LLVM's own (bit-exact). The directed
// modes (.rz/.rm/.rp) call runtime helpers that switch the rounding mode
// around one operation: rare in real kernels, and exact.
#include "ptx/lower.h"

namespace cucpu::ptx {

using llvm::Value;

namespace {

int rounding_of(const Instr& in) {
  for (auto& m : in.mods) {
    if (m == "rn") return 0;
    if (m == "rz") return 1;
    if (m == "rm") return 2;
    if (m == "rp") return 3;
  }
  return -1;  // none given
}

}  // namespace

// Flushes a subnormal f32 to a zero of the same sign.
Value* flush_subnormal(FnLowering& L, Value* v) {
  if (!v->getType()->isFloatTy()) return v;
  auto& b = L.b;
  Value* tiny = b.CreateFCmpOLT(L.intrinsic(llvm::Intrinsic::fabs, {v->getType()}, {v}),
                                llvm::ConstantFP::get(v->getType(), 1.17549435e-38));
  Value* zero = L.intrinsic(llvm::Intrinsic::copysign, {v->getType()}, {llvm::ConstantFP::get(v->getType(), 0.0), v});
  return b.CreateSelect(tiny, zero, v);
}

Value* saturate01(FnLowering& L, Value* v) {
  auto& b = L.b;
  llvm::Type* t = v->getType();
  Value* one = llvm::ConstantFP::get(t, 1.0);
  Value* zero = llvm::ConstantFP::get(t, 0.0);
  return b.CreateSelect(b.CreateFCmpOGT(v, zero), b.CreateSelect(b.CreateFCmpOLT(v, one), v, one), zero);
}

// min/max with the GPU's rules: a NaN operand yields the other; -0 < +0.
// (.NaN: a NaN operand gives the canonical NaN. Built from minnum and a
// select rather than llvm.minimum, whose vector lowering on x86 in LLVM 19
// returned the other operand for some lanes.)
Value* float_minmax(FnLowering& L, bool is_min, Value* a, Value* c, bool nan_propagates) {
  auto& b = L.b;
  llvm::Type* t = a->getType();
  Value* r = L.intrinsic(is_min ? llvm::Intrinsic::minnum : llvm::Intrinsic::maxnum, {t}, {a, c});
  llvm::Type* it = b.getIntNTy(t->getPrimitiveSizeInBits());
  Value* ai = b.CreateBitCast(a, it);
  Value* ci = b.CreateBitCast(c, it);
  Value* zeros = b.CreateFCmpOEQ(a, c);
  Value* fixed = b.CreateBitCast(is_min ? b.CreateOr(ai, ci) : b.CreateAnd(ai, ci), t);
  r = b.CreateSelect(zeros, fixed, r);
  if (nan_propagates) r = b.CreateSelect(b.CreateFCmpUNO(a, c), llvm::ConstantFP::getNaN(t), r);
  return r;
}

bool FnLowering::lower_float(const Instr& in) {
  const Ty t = type_suffix(in);
  if (t != Ty::kF32 && t != Ty::kF64) return false;
  const Op op = in.op;
  auto& A = in.args;
  const bool ftz = in.has("ftz") && t == Ty::kF32;
  auto arg = [&](size_t i) -> Value* {
    if (i >= A.size()) fail("missing operand");
    Value* v = read(A[i], t);
    return ftz ? flush_subnormal(*this, v) : v;
  };
  auto finish = [&](Value* r) {
    if (ftz) r = flush_subnormal(*this, r);
    if (in.has("sat")) r = saturate01(*this, r);
    write(A[0], r, t);
    return true;
  };
  llvm::Type* ft = llty(t);
  const int rnd = rounding_of(in);
  auto directed = [&](const char* name, std::vector<Value*> args) -> Value* {
    std::vector<llvm::Type*> tys(args.size(), ft);
    tys.push_back(b.getInt32Ty());
    args.push_back(b.getInt32(static_cast<uint32_t>(rnd)));
    std::string full = std::string("cucpu_rt_") + name + (t == Ty::kF32 ? "_f32" : "_f64");
    return b.CreateCall(runtime(full.c_str(), llvm::FunctionType::get(ft, tys, false)), args);
  };
  if (op == Op::kAdd || op == Op::kSub || op == Op::kMul) {
    Value* a = arg(1);
    Value* c = arg(2);
    if (rnd > 0) return finish(directed(op_name(op).c_str(), {a, c}));
    Value* r = op == Op::kAdd ? b.CreateFAdd(a, c) : op == Op::kSub ? b.CreateFSub(a, c) : b.CreateFMul(a, c);
    // Without a rounding suffix ptxas may contract mul and add into fma; so may we.
    // (Two constants fold to a constant, which carries no flags.)
    if (auto* i = llvm::dyn_cast<llvm::Instruction>(r); i && rnd < 0) i->setHasAllowContract(true);
    return finish(r);
  }
  if (op == Op::kFma || op == Op::kMad) {
    Value* a = arg(1);
    Value* c = arg(2);
    Value* d = arg(3);
    if (rnd > 0) return finish(directed("fma", {a, c, d}));
    return finish(intrinsic(llvm::Intrinsic::fma, {ft}, {a, c, d}));
  }
  if (op == Op::kDiv) {
    Value* a = arg(1);
    Value* c = arg(2);
    if (rnd > 0) return finish(directed("div", {a, c}));
    return finish(b.CreateFDiv(a, c));  // .rn, .full and .approx: the exact quotient is within every bound
  }
  if (op == Op::kRcp) {
    Value* a = arg(1);
    if (rnd > 0) return finish(directed("div", {llvm::ConstantFP::get(ft, 1.0), a}));
    return finish(b.CreateFDiv(llvm::ConstantFP::get(ft, 1.0), a));
  }
  if (op == Op::kSqrt) {
    Value* a = arg(1);
    if (rnd > 0) return finish(directed("sqrt", {a}));
    return finish(intrinsic(llvm::Intrinsic::sqrt, {ft}, {a}));
  }
  if (op == Op::kRsqrt) {
    Value* a = arg(1);
    return finish(b.CreateFDiv(llvm::ConstantFP::get(ft, 1.0), intrinsic(llvm::Intrinsic::sqrt, {ft}, {a})));
  }
  if (op == Op::kAbs) return finish(intrinsic(llvm::Intrinsic::fabs, {ft}, {arg(1)}));
  if (op == Op::kNeg) return finish(b.CreateFNeg(arg(1)));
  if (op == Op::kMin || op == Op::kMax) {
    Value* r = float_minmax(*this, op == Op::kMin, arg(1), arg(2), in.has("NaN"));
    if (A.size() > 3) r = float_minmax(*this, op == Op::kMin, r, arg(3), in.has("NaN"));
    if (in.has("relu")) r = float_minmax(*this, false, r, llvm::ConstantFP::get(ft, 0.0), true);
    return finish(r);
  }
  if (op == Op::kSin || op == Op::kCos) return finish(intrinsic(op == Op::kSin ? llvm::Intrinsic::sin : llvm::Intrinsic::cos, {ft}, {arg(1)}));
  if (op == Op::kEx2) return finish(intrinsic(llvm::Intrinsic::exp2, {ft}, {arg(1)}));
  if (op == Op::kLg2) return finish(intrinsic(llvm::Intrinsic::log2, {ft}, {arg(1)}));
  if (op == Op::kTanh) {
    auto* ty = llvm::FunctionType::get(ft, {ft}, false);
    return finish(b.CreateCall(runtime(t == Ty::kF32 ? "tanhf" : "tanh", ty), {arg(1)}));
  }
  return false;
}

}  // namespace cucpu::ptx
