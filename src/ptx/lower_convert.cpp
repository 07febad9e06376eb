// cvt: integer resizing with saturation, float <-> integer with every
// rounding, float <-> float (f64, f32, f16, bf16, tf32, fp8).
#include "ptx/lower.h"

namespace cucpu::ptx {

using llvm::Value;

Value* flush_subnormal(FnLowering& L, Value* v);
Value* saturate01(FnLowering& L, Value* v);

namespace {

// Integer rounding suffix: 0 rni, 1 rzi, 2 rmi, 3 rpi; -1 none.
int int_rounding(const Instr& in) {
  for (auto& m : in.mods) {
    if (m == "rni") return 0;
    if (m == "rzi") return 1;
    if (m == "rmi") return 2;
    if (m == "rpi") return 3;
  }
  return -1;
}
int float_rounding(const Instr& in) {
  for (auto& m : in.mods) {
    if (m == "rn") return 0;
    if (m == "rz") return 1;
    if (m == "rm") return 2;
    if (m == "rp") return 3;
    if (m == "rna") return 4;
    if (m == "rs") return 5;
  }
  return -1;
}

}  // namespace

// f32 -> bf16 bits, round to nearest even (NaN stays NaN).
Value* f32_to_bf16(FnLowering& L, Value* f) {
  auto& b = L.b;
  Value* x = b.CreateBitCast(f, b.getInt32Ty());
  Value* lsb = b.CreateAnd(b.CreateLShr(x, 16), 1);
  Value* rounded = b.CreateLShr(b.CreateAdd(x, b.CreateAdd(b.getInt32(0x7fff), lsb)), 16);
  Value* nan = b.CreateFCmpUNO(f, f);
  Value* qnan = b.CreateOr(b.CreateLShr(x, 16), b.getInt32(0x40));
  return b.CreateTrunc(b.CreateSelect(nan, qnan, rounded), b.getInt16Ty());
}

Value* bf16_to_f32(FnLowering& L, Value* h) {
  auto& b = L.b;
  return b.CreateBitCast(b.CreateShl(b.CreateZExt(h, b.getInt32Ty()), 16), b.getFloatTy());
}

Value* f16_to_f32(FnLowering& L, Value* h) { return L.b.CreateFPExt(L.b.CreateBitCast(h, L.b.getHalfTy()), L.b.getFloatTy()); }

Value* f32_to_f16(FnLowering& L, Value* f) { return L.b.CreateBitCast(L.b.CreateFPTrunc(f, L.b.getHalfTy()), L.b.getInt16Ty()); }

// An f64 rounded once to f16/bf16 bits with rounding mode `mode` (0 rn .. 3 rp).
Value* to_half(FnLowering& L, Value* d, int mode, bool bf) {
  auto* ty = llvm::FunctionType::get(L.b.getInt16Ty(), {L.b.getDoubleTy(), L.b.getInt32Ty(), L.b.getInt32Ty()}, false);
  return L.b.CreateCall(L.runtime("cucpu_rt_to_half", ty), {d, L.b.getInt32(static_cast<uint32_t>(mode)), L.b.getInt32(bf ? 1 : 0)});
}

// An f64 rounded to f32 with round-to-odd: rounding that once more to a
// format of at most 22 bits is the same as rounding the f64 itself.
Value* round_to_odd_f32(FnLowering& L, Value* d) {
  auto& b = L.b;
  Value* f = b.CreateFPTrunc(d, b.getFloatTy());
  Value* back = b.CreateFPExt(f, b.getDoubleTy());
  Value* inexact = b.CreateFCmpONE(back, d);
  Value* bits = b.CreateBitCast(f, b.getInt32Ty());
  Value* away = b.CreateFCmpOGT(L.intrinsic(llvm::Intrinsic::fabs, {b.getDoubleTy()}, {back}),
                                L.intrinsic(llvm::Intrinsic::fabs, {b.getDoubleTy()}, {d}));
  Value* toward = b.CreateSelect(away, b.CreateSub(bits, b.getInt32(1)), bits);
  return b.CreateBitCast(b.CreateSelect(inexact, b.CreateOr(toward, b.getInt32(1)), bits), b.getFloatTy());
}

// A source value of type t as f32 or f64 (half types widen exactly).
static Value* widen(FnLowering& L, Value* v, Ty t) {
  if (t == Ty::kF16) return f16_to_f32(L, v);
  if (t == Ty::kBF16) return bf16_to_f32(L, v);
  return v;
}

// cvt.pack.sat.{u16,s16}.s32 d, a, b: d = sat(a) << 16 | sat(b);
// cvt.pack.sat.{u8,s8,u4,s4,u2,s2}.s32.b32 d, a, b, c: d = c << 2w |
// sat(a) << w | sat(b), each source saturated to the w-bit type.
void FnLowering::lower_cvt_pack(const Instr& in) {
  auto& A = in.args;
  unsigned w = 0;
  bool sgn = false;
  for (const std::string& m : in.mods) {
    if (m.size() < 2 || (m[0] != 'u' && m[0] != 's')) continue;
    const std::string_view bits(m.c_str() + 1);
    w = bits == "16" ? 16 : bits == "8" ? 8 : bits == "4" ? 4 : bits == "2" ? 2 : 0;
    if (w) {
      sgn = m[0] == 's';
      break;
    }
  }
  if (!w || A.size() != (w == 16 ? 3u : 4u)) fail("malformed cvt.pack");
  const int64_t lo = sgn ? -(int64_t{1} << (w - 1)) : 0, hi = sgn ? (int64_t{1} << (w - 1)) - 1 : (int64_t{1} << w) - 1;
  auto narrow = [&](const Operand& o) {
    Value* v = read(o, Ty::kS32);
    v = b.CreateSelect(b.CreateICmpSLT(v, b.getInt32(static_cast<uint32_t>(lo))), b.getInt32(static_cast<uint32_t>(lo)), v);
    v = b.CreateSelect(b.CreateICmpSGT(v, b.getInt32(static_cast<uint32_t>(hi))), b.getInt32(static_cast<uint32_t>(hi)), v);
    return b.CreateAnd(v, b.getInt32((1u << w) - 1));
  };
  Value* d = b.CreateOr(b.CreateShl(narrow(A[1]), w), narrow(A[2]));
  if (w < 16) d = b.CreateOr(d, b.CreateShl(read(A[3], Ty::kB32), 2 * w));
  write(A[0], d, Ty::kB32);
}

bool FnLowering::lower_convert(const Instr& in) {
  if (in.op != Op::kCvt) return false;
  if (in.has("pack")) return lower_cvt_pack(in), true;
  auto& A = in.args;
  if (A.size() < 2 || type_count(in) < 2) fail("cvt needs a destination and a source type");
  const Ty dt = type_suffix(in, 0), st = type_suffix(in, 1);
  const bool ftz = in.has("ftz"), sat = in.has("sat");
  const int irnd = int_rounding(in), frnd = float_rounding(in);

  // Packed and narrow float destinations.
  if (dt == Ty::kF16x2 || dt == Ty::kBF16x2) {
    if (st == Ty::kE4M3x2 || st == Ty::kE5M2x2) {
      auto* ty = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt16Ty(), b.getInt32Ty()}, false);
      write(A[0], b.CreateCall(runtime("cucpu_rt_fp8x2_to_f16x2", ty), {read(A[1], Ty::kB16), b.getInt32(st == Ty::kE4M3x2 ? 0 : 1)}), Ty::kB32);
      return true;
    }
    if (st != Ty::kF32 || A.size() < 3) fail("cvt to a packed type takes two f32 sources");
    auto one = [&](const Operand& o) {
      Value* f = read(o, Ty::kF32);
      if (in.has("relu")) f = b.CreateSelect(b.CreateFCmpOLT(f, llvm::ConstantFP::get(b.getFloatTy(), 0.0)), llvm::ConstantFP::get(b.getFloatTy(), 0.0), f);
      return b.CreateZExt(dt == Ty::kF16x2 ? f32_to_f16(*this, f) : f32_to_bf16(*this, f), b.getInt32Ty());
    };
    // d = {cvt(a) in the upper half, cvt(b) in the lower}.
    write(A[0], b.CreateOr(b.CreateShl(one(A[1]), 16), one(A[2])), Ty::kB32);
    return true;
  }
  if (dt == Ty::kE4M3x2 || dt == Ty::kE5M2x2) {
    auto* ty = llvm::FunctionType::get(b.getInt16Ty(), {b.getFloatTy(), b.getFloatTy(), b.getInt32Ty()}, false);
    Value* hi;
    Value* lo;
    if (st == Ty::kF16x2 || st == Ty::kBF16x2) {  // one packed source: its upper half becomes the upper byte
      Value* v = read(A[1], Ty::kB32);
      Value* h = b.CreateTrunc(b.CreateLShr(v, 16), b.getInt16Ty());
      Value* l = b.CreateTrunc(v, b.getInt16Ty());
      hi = st == Ty::kF16x2 ? f16_to_f32(*this, h) : bf16_to_f32(*this, h);
      lo = st == Ty::kF16x2 ? f16_to_f32(*this, l) : bf16_to_f32(*this, l);
    } else {
      if (A.size() < 3) fail("cvt to fp8x2 takes two sources");
      hi = widen(*this, read(A[1], st), st);
      lo = widen(*this, read(A[2], st), st);
    }
    write(A[0], b.CreateCall(runtime("cucpu_rt_f32x2_to_fp8x2", ty), {hi, lo, b.getInt32(dt == Ty::kE4M3x2 ? 0 : 1)}), Ty::kB16);
    return true;
  }

  const bool dfloat = is_float(dt), sfloat = is_float(st);
  if (!dfloat && !sfloat) {
    // Integer to integer: resize, saturating to the destination's range with .sat.
    Value* v = read(A[1], st);
    const unsigned sb = static_cast<unsigned>(type_bits(st)), db = static_cast<unsigned>(type_bits(dt));
    if (sat) {
      const bool ss = is_signed(st), ds = is_signed(dt);
      llvm::Type* wt = b.getIntNTy(std::max(sb, db) + 1);
      Value* w = ss ? b.CreateSExt(v, wt) : b.CreateZExt(v, wt);
      llvm::APInt lo = ds ? llvm::APInt::getSignedMinValue(db).sext(wt->getIntegerBitWidth()) : llvm::APInt(wt->getIntegerBitWidth(), 0);
      llvm::APInt hi = ds ? llvm::APInt::getSignedMaxValue(db).sext(wt->getIntegerBitWidth()) : llvm::APInt::getMaxValue(db).zext(wt->getIntegerBitWidth());
      w = b.CreateSelect(b.CreateICmpSLT(w, llvm::ConstantInt::get(wt, lo)), llvm::ConstantInt::get(wt, lo), w);
      w = b.CreateSelect(b.CreateICmpSGT(w, llvm::ConstantInt::get(wt, hi)), llvm::ConstantInt::get(wt, hi), w);
      write(A[0], b.CreateTrunc(w, b.getIntNTy(db)), dt);
      return true;
    }
    Value* r = db < sb ? b.CreateTrunc(v, b.getIntNTy(db)) : db > sb ? (is_signed(st) ? b.CreateSExt(v, b.getIntNTy(db)) : b.CreateZExt(v, b.getIntNTy(db))) : v;
    write(A[0], r, dt);
    return true;
  }
  if (sfloat && !dfloat) {
    // Float to integer: round as told, saturate, NaN to 0.
    Value* f = widen(*this, read(A[1], st), st);
    if (ftz) f = flush_subnormal(*this, f);
    llvm::Type* ft = f->getType();
    switch (irnd < 0 ? 1 : irnd) {
      case 0: f = intrinsic(llvm::Intrinsic::roundeven, {ft}, {f}); break;
      case 1: f = intrinsic(llvm::Intrinsic::trunc, {ft}, {f}); break;
      case 2: f = intrinsic(llvm::Intrinsic::floor, {ft}, {f}); break;
      case 3: f = intrinsic(llvm::Intrinsic::ceil, {ft}, {f}); break;
    }
    llvm::Type* it = b.getIntNTy(static_cast<unsigned>(type_bits(dt)));
    Value* r = intrinsic(is_signed(dt) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat, {it, ft}, {f});
    // NaN gives 0 from f32 to a 32-bit integer, else the sign bit alone
    // (measured on the H200: f64 -> u32 too gives 0x80000000).
    if (type_bits(dt) == 64 || ft->isDoubleTy()) {
      const uint64_t nan_value = type_bits(dt) == 64 ? 0x8000000000000000ull : 0x80000000ull;
      r = b.CreateSelect(b.CreateFCmpUNO(f, f), llvm::ConstantInt::get(it, nan_value), r);
    }
    write(A[0], r, dt);
    return true;
  }
  if (!sfloat && dfloat) {
    // Integer to float.
    Value* v = read(A[1], st);
    llvm::Type* target = dt == Ty::kF64 ? b.getDoubleTy() : b.getFloatTy();
    Value* f;
    if (frnd > 0) {
      auto* ty = llvm::FunctionType::get(target, {b.getInt64Ty(), b.getInt32Ty(), b.getInt32Ty()}, false);
      Value* wide = is_signed(st) ? b.CreateSExt(v, b.getInt64Ty()) : b.CreateZExt(v, b.getInt64Ty());
      // 64-bit unsigned sources above INT64_MAX pass through as their bits with the flag.
      f = b.CreateCall(runtime(dt == Ty::kF64 ? "cucpu_rt_i2f_f64" : "cucpu_rt_i2f_f32", ty),
                       {wide, b.getInt32(is_signed(st) ? 1 : 0), b.getInt32(static_cast<uint32_t>(frnd))});
    } else {
      f = is_signed(st) ? b.CreateSIToFP(v, target) : b.CreateUIToFP(v, target);
    }
    if (dt == Ty::kF16 || dt == Ty::kBF16) {
      // Through f64 (exact for 32-bit sources), rounded once as told.
      Value* d = is_signed(st) ? b.CreateSIToFP(v, b.getDoubleTy()) : b.CreateUIToFP(v, b.getDoubleTy());
      f = to_half(*this, d, frnd < 0 ? 0 : frnd, dt == Ty::kBF16);
    }
    write(A[0], f, dt);
    return true;
  }
  // Float to float.
  Value* f = widen(*this, read(A[1], st), st);
  if (ftz) f = flush_subnormal(*this, f);
  llvm::Type* ft = f->getType();
  if (irnd >= 0) {  // round to an integral value in the same format
    static const llvm::Intrinsic::ID kIds[] = {llvm::Intrinsic::roundeven, llvm::Intrinsic::trunc, llvm::Intrinsic::floor, llvm::Intrinsic::ceil};
    f = intrinsic(kIds[irnd], {ft}, {f});
  }
  Value* r;
  if (dt == Ty::kF64) {
    r = ft->isDoubleTy() ? f : b.CreateFPExt(f, b.getDoubleTy());
  } else if (dt == Ty::kF32) {
    if (ft->isDoubleTy()) {
      if (frnd > 0) {
        auto* ty = llvm::FunctionType::get(b.getFloatTy(), {b.getDoubleTy(), b.getInt32Ty()}, false);
        r = b.CreateCall(runtime("cucpu_rt_d2f", ty), {f, b.getInt32(static_cast<uint32_t>(frnd))});
      } else {
        r = b.CreateFPTrunc(f, b.getFloatTy());
      }
    } else {
      r = f;
    }
    if (ftz) r = flush_subnormal(*this, r);
  } else if (dt == Ty::kF16) {
    if (ft->isDoubleTy() || frnd > 0) r = to_half(*this, ft->isDoubleTy() ? f : b.CreateFPExt(f, b.getDoubleTy()), frnd < 0 ? 0 : frnd, false);
    else r = f32_to_f16(*this, f);
    if (sat) r = f32_to_f16(*this, saturate01(*this, f16_to_f32(*this, r)));
    write(A[0], r, dt);
    return true;
  } else if (dt == Ty::kBF16) {
    if (ft->isDoubleTy() || frnd > 0) r = to_half(*this, ft->isDoubleTy() ? f : b.CreateFPExt(f, b.getDoubleTy()), frnd < 0 ? 0 : frnd, true);
    else r = f32_to_bf16(*this, f);
    write(A[0], r, dt);
    return true;
  } else if (dt == Ty::kTF32) {
    // Round to 10 mantissa bits (nearest, ties away), kept in an f32 container.
    Value* x = b.CreateBitCast(f, b.getInt32Ty());
    Value* rounded = b.CreateAnd(b.CreateAdd(x, b.getInt32(0x1000)), b.getInt32(0xffffe000u));
    Value* special = b.CreateFCmpUNO(f, f);
    write(A[0], b.CreateSelect(special, x, rounded), Ty::kB32);
    return true;
  } else {
    fail("unsupported cvt destination ." + std::string(type_name(dt)));
  }
  if (sat) r = saturate01(*this, r);
  write(A[0], r, dt);
  return true;
}

}  // namespace cucpu::ptx
