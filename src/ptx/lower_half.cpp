// f16, bf16 and their packed x2 forms: computed in f32 (exact for one add,
// mul or fma result, rounded once), then rounded back.
#include "ptx/lower.h"

namespace cucpu::ptx {

using llvm::Value;

Value* f32_to_bf16(FnLowering& L, Value* f);
Value* bf16_to_f32(FnLowering& L, Value* h);
Value* f16_to_f32(FnLowering& L, Value* h);
Value* f32_to_f16(FnLowering& L, Value* f);
Value* saturate01(FnLowering& L, Value* v);
Value* float_minmax(FnLowering& L, bool is_min, Value* a, Value* c, bool nan_propagates);
Value* compare_values(FnLowering& L, const std::string& cmp, Value* a, Value* b, Ty t);
Value* round_to_odd_f32(FnLowering& L, Value* d);

bool FnLowering::lower_half(const Instr& in) {
  const Ty t = type_suffix(in, in.op == Op::kSet ? 1 : 0);
  const bool bf = t == Ty::kBF16 || t == Ty::kBF16x2;
  const bool packed = t == Ty::kF16x2 || t == Ty::kBF16x2;
  if (t != Ty::kF16 && t != Ty::kBF16 && !packed) return false;
  const Op op = in.op;
  auto& A = in.args;
  // Lane k (0: low half) of operand i, as f32.
  auto lane = [&](size_t i, int k) -> Value* {
    if (i >= A.size()) fail("missing operand");
    Value* v = read(A[i], packed ? Ty::kB32 : Ty::kB16);
    if (packed) v = b.CreateTrunc(b.CreateLShr(v, static_cast<uint64_t>(16 * k)), b.getInt16Ty());
    return bf ? bf16_to_f32(*this, v) : f16_to_f32(*this, v);
  };
  auto narrow = [&](Value* f) { return bf ? f32_to_bf16(*this, f) : f32_to_f16(*this, f); };
  const bool ftz = in.has("ftz");
  auto flush = [&](Value* f) {
    if (!ftz) return f;
    // The half format's smallest normal.
    Value* tiny = b.CreateFCmpOLT(intrinsic(llvm::Intrinsic::fabs, {f->getType()}, {f}),
                                  llvm::ConstantFP::get(f->getType(), bf ? 1.17549435e-38 : 6.103515625e-05));
    return b.CreateSelect(tiny, intrinsic(llvm::Intrinsic::copysign, {f->getType()}, {llvm::ConstantFP::get(f->getType(), 0.0), f}), f);
  };
  const int lanes = packed ? 2 : 1;
  auto emit = [&](auto&& fn) {
    Value* out = packed ? static_cast<Value*>(b.getInt32(0)) : nullptr;
    for (int k = 0; k < lanes; ++k) {
      Value* r = fn(k);
      Value* h = r->getType()->isIntegerTy(16) ? r : narrow(flush(r));
      if (ftz && !r->getType()->isIntegerTy(16)) h = narrow(flush(bf ? bf16_to_f32(*this, h) : f16_to_f32(*this, h)));
      if (packed) out = b.CreateOr(out, b.CreateShl(b.CreateZExt(h, b.getInt32Ty()), static_cast<uint64_t>(16 * k)));
      else out = h;
    }
    write(A[0], out, packed ? Ty::kB32 : Ty::kB16);
    return true;
  };
  auto sat = [&](Value* f) { return in.has("sat") ? saturate01(*this, f) : f; };
  if (op == Op::kAdd || op == Op::kSub || op == Op::kMul) {
    return emit([&](int k) {
      Value* x = flush(lane(1, k));
      Value* y = flush(lane(2, k));
      Value* r = op == Op::kAdd ? b.CreateFAdd(x, y) : op == Op::kSub ? b.CreateFSub(x, y) : b.CreateFMul(x, y);
      return sat(r);
    });
  }
  if (op == Op::kFma) {
    return emit([&](int k) {
      // In f64: the product of two halves is exact there, so the sum rounds once more only.
      // a*b+c rounded once: the product of two halves is exact in f64, the
      // sum is made round-to-odd there (its exact error by TwoSum), then
      // round-to-odd into f32 and to nearest into the half format.
      Value* x = b.CreateFPExt(flush(lane(1, k)), b.getDoubleTy());
      Value* y = b.CreateFPExt(flush(lane(2, k)), b.getDoubleTy());
      Value* z = b.CreateFPExt(flush(lane(3, k)), b.getDoubleTy());
      Value* p = b.CreateFMul(x, y);
      Value* sum = b.CreateFAdd(p, z);
      Value* bb = b.CreateFSub(sum, p);
      Value* e = b.CreateFAdd(b.CreateFSub(p, b.CreateFSub(sum, bb)), b.CreateFSub(z, bb));
      Value* zero = llvm::ConstantFP::get(b.getDoubleTy(), 0.0);
      Value* inexact = b.CreateFCmpONE(e, zero);
      Value* bits = b.CreateBitCast(sum, b.getInt64Ty());
      Value* opposite = b.CreateXor(b.CreateFCmpOLT(e, zero), b.CreateFCmpOLT(sum, zero));
      Value* toward = b.CreateSelect(opposite, b.CreateSub(bits, b.getInt64(1)), bits);
      Value* odd = b.CreateBitCast(b.CreateSelect(inexact, b.CreateOr(toward, b.getInt64(1)), bits), b.getDoubleTy());
      Value* r = round_to_odd_f32(*this, odd);
      if (in.has("relu")) r = float_minmax(*this, false, r, llvm::ConstantFP::get(b.getFloatTy(), 0.0), true);
      return sat(r);
    });
  }
  if (op == Op::kNeg || op == Op::kAbs) {
    // Sign-bit operations: exact on the bits, NaNs included.
    Value* v = read(A[1], packed ? Ty::kB32 : Ty::kB16);
    const uint32_t sign = packed ? 0x80008000u : 0x8000u;
    Value* m = packed ? static_cast<Value*>(b.getInt32(sign)) : static_cast<Value*>(b.getInt16(static_cast<uint16_t>(sign)));
    Value* r = op == Op::kNeg ? b.CreateXor(v, m) : b.CreateAnd(v, b.CreateNot(m));
    write(A[0], r, packed ? Ty::kB32 : Ty::kB16);
    return true;
  }
  if (op == Op::kMin || op == Op::kMax) {
    return emit([&](int k) {
      Value* r = float_minmax(*this, op == Op::kMin, flush(lane(1, k)), flush(lane(2, k)), in.has("NaN"));
      if (in.has("relu")) r = float_minmax(*this, false, r, llvm::ConstantFP::get(b.getFloatTy(), 0.0), true);
      return r;
    });
  }
  if (op == Op::kEx2 || op == Op::kTanh) {
    return emit([&](int k) {
      Value* x = lane(1, k);
      if (op == Op::kEx2) return intrinsic(llvm::Intrinsic::exp2, {b.getFloatTy()}, {x});
      auto* ty = llvm::FunctionType::get(b.getFloatTy(), {b.getFloatTy()}, false);
      return static_cast<Value*>(b.CreateCall(runtime("tanhf", ty), {x}));
    });
  }
  if (op == Op::kSetp || op == Op::kSet) {
    if (in.mods.empty()) fail("malformed setp");
    const std::string cmp = in.mods[0];
    Value* p[2];
    for (int k = 0; k < lanes; ++k) p[k] = compare_values(*this, cmp, flush(lane(1, k)), flush(lane(2, k)), Ty::kF32);
    if (A.size() >= 4) {
      Value* c = read(A[3], Ty::kPred);
      const std::string bop = in.mods.size() > 1 ? in.mods[1] : "";
      for (int k = 0; k < lanes; ++k)
        p[k] = bop == "and" ? b.CreateAnd(p[k], c) : bop == "or" ? b.CreateOr(p[k], c) : b.CreateXor(p[k], c);
    }
    if (op == Op::kSetp) {
      write(A[0], p[0], Ty::kPred);
      write_pair(A[0], packed ? p[1] : b.CreateNot(p[0]));
      return true;
    }
    // set.cmp.dtype.f16x2: each lane 0x3c00 (1.0) / 0xffff. A scalar f16
    // compare fills a 32-bit integer (all ones) or f32 (1.0) destination whole.
    const Ty dt = type_suffix(in, 0);
    if (!packed && type_bits(dt) == 32 && dt != Ty::kF16x2 && dt != Ty::kBF16x2) {
      const uint32_t one = dt == Ty::kF32 ? 0x3f800000u : 0xffffffffu;
      write(A[0], b.CreateSelect(p[0], b.getInt32(one), b.getInt32(0)), Ty::kB32);
      return true;
    }
    Value* out = b.getInt32(0);
    for (int k = 0; k < lanes; ++k) {
      Value* one = (dt == Ty::kF16 || dt == Ty::kF16x2) ? b.getInt32(0x3c00) : b.getInt32(0xffff);
      out = b.CreateOr(out, b.CreateShl(b.CreateSelect(p[k], one, b.getInt32(0)), static_cast<uint64_t>(16 * k)));
    }
    write(A[0], out, packed ? Ty::kB32 : Ty::kB16);
    return true;
  }
  return false;
}

}  // namespace cucpu::ptx
