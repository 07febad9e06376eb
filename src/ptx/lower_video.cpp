// The video instructions: scalar (vadd, vsub, vabsdiff, vmin, vmax, vshl,
// vshr, vmad, vset, with byte and half-word operand selectors, saturation,
// a secondary operation or a merge into c) and SIMD on packed halves or
// bytes (vadd2 ... vset4). Scalar ones compute in 64 bits, wide enough for
// every intermediate the ISA defines (34 bits; vmad's product, 64).
#include "ptx/lower.h"

namespace cucpu::ptx {

using llvm::Value;

Value* compare_values(FnLowering& L, const std::string& cmp, Value* a, Value* b, Ty t);

namespace {

bool scalar_video(Op op) {
  return op == Op::kVadd || op == Op::kVsub || op == Op::kVabsdiff || op == Op::kVmin || op == Op::kVmax || op == Op::kVshl ||
         op == Op::kVshr || op == Op::kVmad || op == Op::kVset;
}

// The selected byte (sel 0-3) or half-word (4-5) of a 32-bit value, or all
// of it (-1), sign- or zero-extended to 64 bits.
Value* select_part(llvm::IRBuilder<>& b, Value* v32, int sel, bool is_signed) {
  Value* part = v32;
  if (sel >= 0) {
    const unsigned w = sel < 4 ? 8 : 16, shift = sel < 4 ? 8u * static_cast<unsigned>(sel) : 16u * static_cast<unsigned>(sel - 4);
    part = b.CreateTrunc(b.CreateLShr(v32, shift), b.getIntNTy(w));
  }
  return is_signed ? b.CreateSExt(part, b.getInt64Ty()) : b.CreateZExt(part, b.getInt64Ty());
}

Value* clamp(llvm::IRBuilder<>& b, Value* v, int64_t lo, int64_t hi) {
  Value* l = b.getInt64(static_cast<uint64_t>(lo));
  Value* h = b.getInt64(static_cast<uint64_t>(hi));
  v = b.CreateSelect(b.CreateICmpSLT(v, l), l, v);
  return b.CreateSelect(b.CreateICmpSGT(v, h), h, v);
}

}  // namespace

bool FnLowering::lower_video(const Instr& in) {
  if (scalar_video(in.op)) return lower_scalar_video(in), true;
  return lower_simd_video(in);
}

void FnLowering::lower_scalar_video(const Instr& in) {
  const Op op = in.op;
  auto& A = in.args;
  const bool vset = op == Op::kVset, vmad = op == Op::kVmad, shift = op == Op::kVshl || op == Op::kVshr;
  if (A.size() < 3 || A[0].kind != Operand::Kind::kReg) fail("malformed " + op_name(op));
  // Types: vop.dtype.atype.btype; vset.atype.btype (its result is 0 or 1).
  const Ty dt = vset ? Ty::kU32 : type_suffix(in, 0);
  const Ty at = type_suffix(in, vset ? 0 : 1), bt = type_suffix(in, vset ? 1 : 2);
  if (dt == Ty::kNone || at == Ty::kNone || bt == Ty::kNone) fail(op_name(op) + " needs its operand types");
  std::string op2, cmp, mode, scale;
  for (const std::string& m : in.mods) {
    if (m == "add" || m == "min" || m == "max") op2 = m;
    if (m == "eq" || m == "ne" || m == "lt" || m == "le" || m == "gt" || m == "ge") cmp = m;
    if (m == "clamp" || m == "wrap") mode = m;
    if (m == "shr7" || m == "shr15") scale = m;
  }
  const bool sat = in.has("sat");
  const int dsel = A[0].sel;
  if ((dsel >= 0 || !op2.empty()) && A.size() < 4) fail(op_name(op) + " with a merge or a secondary operation needs c");
  if (dsel >= 0 && !op2.empty()) fail(op_name(op) + " takes a merge or a secondary operation, not both");
  auto part = [&](size_t k, Ty t) {
    Operand whole = A[k];
    whole.sel = -1;
    whole.neg = false;
    return select_part(b, read(whole, Ty::kB32), A[k].sel, is_signed(t));
  };
  // vmad takes a whole 32-bit operand as signed whatever its type (driver
  // 580: vmad.u32.u32.u32.sat of 0x80000000, 1 and 0 is 0, and of
  // 0xffffffff, 1 and 0 with .shr15 is 0xffffffff); a selected byte or half
  // follows its type (0xfffe.h0 squared is 0xfffc0004).
  auto vmad_type = [&](size_t k, Ty t) { return vmad && A[k].sel < 0 ? Ty::kS32 : t; };
  Value* ta = part(1, vmad_type(1, at));
  Value* tb = part(2, shift ? Ty::kU32 : vmad_type(2, bt));
  Value* tmp;
  bool signed_result = is_signed(dt);
  if (vmad) {
    // d = a * b + c, with operand negation (+1 after a complement) or .po
    // (plus one), an optional right shift, and saturation to 32 bits.
    const bool neg_ab = A[1].neg != A[2].neg, neg_c = A.size() > 3 && A[3].neg, po = in.has("po");
    signed_result = is_signed(at) || is_signed(bt) || neg_ab || neg_c;
    Operand c = A[3];
    c.neg = false;
    // c is sign-extended whatever the types (driver 580: vmad.u32.u32.u32.shr15
    // of 0x7f, 0 and 0xe6984080 is 0xffffcd30).
    Value* c64 = b.CreateSExt(read(c, Ty::kB32), b.getInt64Ty());
    Value* prod = b.CreateMul(ta, tb);
    uint64_t lsb = 0;
    if (po) {
      lsb = 1;
    } else if (neg_ab) {
      prod = b.CreateNot(prod);
      lsb = 1;
    } else if (neg_c) {
      c64 = b.CreateNot(c64);
      lsb = 1;
    }
    tmp = b.CreateAdd(b.CreateAdd(prod, c64), b.getInt64(lsb));
    if (!scale.empty()) tmp = b.CreateAShr(tmp, scale == "shr7" ? 7 : 15);
    if (sat) tmp = signed_result ? clamp(b, tmp, INT32_MIN, INT32_MAX) : clamp(b, tmp, 0, UINT32_MAX);
    write(A[0], b.CreateTrunc(tmp, b.getInt32Ty()), Ty::kB32);
    return;
  }
  if (op == Op::kVadd) tmp = b.CreateAdd(ta, tb);
  else if (op == Op::kVsub) tmp = b.CreateSub(ta, tb);
  else if (op == Op::kVabsdiff) tmp = intrinsic(llvm::Intrinsic::abs, {b.getInt64Ty()}, {b.CreateSub(ta, tb), b.getFalse()});
  else if (op == Op::kVmin) tmp = b.CreateSelect(b.CreateICmpSLT(ta, tb), ta, tb);
  else if (op == Op::kVmax) tmp = b.CreateSelect(b.CreateICmpSGT(ta, tb), ta, tb);
  else if (vset) tmp = b.CreateZExt(compare_values(*this, cmp.empty() ? "eq" : cmp, ta, tb, Ty::kS64), b.getInt64Ty());
  else {
    if (mode == "wrap") tb = b.CreateAnd(tb, b.getInt64(31));
    else tb = b.CreateSelect(b.CreateICmpUGT(tb, b.getInt64(32)), b.getInt64(32), tb);  // .clamp, the default
    tmp = op == Op::kVshl ? b.CreateShl(ta, tb) : b.CreateAShr(ta, tb);  // ta is extended by its type
  }
  // The intermediate has 34 bits (driver 580: vshl.s32 of 127 by 32, saturated, is INT_MIN).
  tmp = b.CreateAShr(b.CreateShl(tmp, 30), 30);
  if (sat && !vset) {
    const bool s = is_signed(dt);
    if (dsel >= 0 && dsel < 4) tmp = s ? clamp(b, tmp, INT8_MIN, INT8_MAX) : clamp(b, tmp, 0, UINT8_MAX);
    else if (dsel >= 4) tmp = s ? clamp(b, tmp, INT16_MIN, INT16_MAX) : clamp(b, tmp, 0, UINT16_MAX);
    else tmp = s ? clamp(b, tmp, INT32_MIN, INT32_MAX) : clamp(b, tmp, 0, UINT32_MAX);
  }
  Value* d;
  if (!op2.empty()) {
    Operand c = A[3];
    Value* c32 = read(c, Ty::kB32);
    Value* c64 = signed_result ? b.CreateSExt(c32, b.getInt64Ty()) : b.CreateZExt(c32, b.getInt64Ty());
    if (op2 == "add") d = b.CreateAdd(tmp, c64);
    else if (op2 == "min") d = b.CreateSelect(b.CreateICmpSLT(tmp, c64), tmp, c64);
    else d = b.CreateSelect(b.CreateICmpSGT(tmp, c64), tmp, c64);
    d = b.CreateTrunc(d, b.getInt32Ty());
  } else if (dsel >= 0) {
    // Merge: the selected byte or half-word of c is the result's low part.
    const unsigned w = dsel < 4 ? 8 : 16, at_bit = dsel < 4 ? 8u * static_cast<unsigned>(dsel) : 16u * static_cast<unsigned>(dsel - 4);
    const uint32_t field = (w == 8 ? 0xffu : 0xffffu) << at_bit;
    Value* c32 = read(A[3], Ty::kB32);
    Value* low = b.CreateShl(b.CreateAnd(b.CreateTrunc(tmp, b.getInt32Ty()), b.getInt32(w == 8 ? 0xffu : 0xffffu)), at_bit);
    d = b.CreateOr(b.CreateAnd(c32, b.getInt32(~field)), low);
  } else {
    d = b.CreateTrunc(tmp, b.getInt32Ty());
  }
  Operand dst = A[0];
  dst.sel = -1;
  write(dst, d, Ty::kB32);
}

bool FnLowering::lower_simd_video(const Instr& in) {
  auto& A = in.args;
  auto arg = [&](size_t i, Ty as) -> Value* {
    if (i >= A.size()) fail("missing operand");
    return read(A[i], as);
  };
  // SIMD video instructions on packed halves (vadd2...) or bytes
  // (vadd4...): vop.dtype.atype.btype[.sat][.add] d, a, b, c (lane
  // selectors and masks are refused by the parser). The lane count is
  // the name's last character.
  const std::string name = op_name(in.op);
  if (name.back() != '2' && name.back() != '4') return false;
  const std::string base = name.substr(0, name.size() - 1);
  const unsigned lanes = name.back() == '2' ? 2 : 4, w = 32 / lanes;
  if (A.size() < 4 || A[0].kind != Operand::Kind::kReg || A[1].kind == Operand::Kind::kNone) fail("malformed " + name);
  const bool vset = base == "vset";
  const Ty dt = type_suffix(in, 0), at = type_suffix(in, vset ? 0 : 1), bt = type_suffix(in, vset ? 1 : 2);
  Value* a = arg(1, Ty::kB32);
  Value* bb = arg(2, Ty::kB32);
  Value* c = arg(3, Ty::kB32);
  const bool add = in.has("add"), sat = in.has("sat");
  std::string cmp;
  if (vset)
    for (auto& m : in.mods)
      if (m == "eq" || m == "ne" || m == "lt" || m == "le" || m == "gt" || m == "ge") cmp = m;
  llvm::Type* i32t = b.getInt32Ty();
  Value* packed = b.getInt32(0);
  Value* sum = c;
  for (unsigned k = 0; k < lanes; ++k) {
    auto lane = [&](Value* v, Ty t) {
      Value* x = b.CreateTrunc(b.CreateLShr(v, k * w), b.getIntNTy(w));
      return is_signed(t) ? b.CreateSExt(x, i32t) : b.CreateZExt(x, i32t);
    };
    Value* x = lane(a, at);
    Value* y = lane(bb, bt);
    Value* r;
    if (base == "vadd") r = b.CreateAdd(x, y);
    else if (base == "vsub") r = b.CreateSub(x, y);
    else if (base == "vabsdiff") r = intrinsic(llvm::Intrinsic::abs, {i32t}, {b.CreateSub(x, y), b.getFalse()});
    else if (base == "vmin") r = b.CreateSelect(b.CreateICmpSLT(x, y), x, y);
    else if (base == "vmax") r = b.CreateSelect(b.CreateICmpSGT(x, y), x, y);
    else if (base == "vavrg") {
      // Halves round up for a sum >= 0 and down (toward -inf) below it.
      Value* s = b.CreateAdd(x, y);
      r = b.CreateAShr(b.CreateAdd(s, b.CreateZExt(b.CreateICmpSGE(s, b.getInt32(0)), i32t)), 1);
    }
    else r = b.CreateZExt(compare_values(*this, cmp.empty() ? "eq" : cmp, x, y, Ty::kS32), i32t);
    if (sat && !vset) {
      const int64_t lo = is_signed(dt) ? -(int64_t{1} << (w - 1)) : 0;
      const int64_t hi = is_signed(dt) ? (int64_t{1} << (w - 1)) - 1 : (int64_t{1} << w) - 1;
      r = b.CreateSelect(b.CreateICmpSLT(r, b.getInt32(static_cast<uint32_t>(lo))), b.getInt32(static_cast<uint32_t>(lo)), r);
      r = b.CreateSelect(b.CreateICmpSGT(r, b.getInt32(static_cast<uint32_t>(hi))), b.getInt32(static_cast<uint32_t>(hi)), r);
    }
    sum = b.CreateAdd(sum, r);
    const uint32_t mask = w == 8 ? 0xffu : 0xffffu;
    packed = b.CreateOr(packed, b.CreateShl(b.CreateAnd(r, mask), k * w));
  }
  write(A[0], add ? sum : packed, Ty::kB32);
  return true;
}

}  // namespace cucpu::ptx
