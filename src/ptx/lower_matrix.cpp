// Warp matrix instructions: ldmatrix and mma.sync (cuts: the runner
// gathers the warp's fragments, warp_matrix.cpp), and wmma.
//
// wmma fragments are opaque to programs, so cucpu picks their layout:
// lane l holds elements l*8 .. l*8+7 of the 16x16 tile in row-major order
// (A and B: two halves per register in registers 0-3, repeated in 4-7;
// f32 accumulators: one per register; f16 accumulators: two per register).
// wmma.load and wmma.store are then each lane's own accesses; wmma.mma is a cut.
#include "ptx/lower.h"

namespace cucpu::ptx {

using llvm::Value;

namespace {

const Operand& vec_arg(FnLowering& L, const Instr& in, size_t i) {
  if (i >= in.args.size() || in.args[i].kind != Operand::Kind::kVec) L.fail("expected a {...} register list");
  return in.args[i];
}

}  // namespace

bool FnLowering::lower_matrix(const Instr& in, size_t index) {
  const std::string& op = in.op;
  if (op != "ldmatrix" && op != "mma" && op != "wmma") return false;
  if (!is_kernel) fail("'" + op + "' inside a called function is not supported");
  auto& A = in.args;
  Value* ops[kExchangeInSlots] = {};
  CutSite site;
  site.line = in.line;
  // Packs b32 words into the exchange slots, two per slot.
  auto pack = [&](const std::vector<Value*>& words) {
    if (words.size() > 2 * kExchangeInSlots) fail("too many fragment registers");
    for (size_t i = 0; i < words.size(); ++i) {
      Value* w = b.CreateZExt(words[i], b.getInt64Ty());
      if (i % 2) w = b.CreateShl(w, 32);
      ops[i / 2] = ops[i / 2] ? b.CreateOr(ops[i / 2], w) : w;
    }
  };
  auto words_of = [&](const Operand& v, std::vector<Value*>& out) {
    for (const Operand& e : v.elems) out.push_back(read(e, Ty::kB32));
  };
  auto unpack = [&](const Operand& d) {
    for (size_t j = 0; j < d.elems.size(); ++j) {
      Value* slot = exchange_out(static_cast<int>(j / 2), b.getInt64Ty());
      write(d.elems[j], b.CreateTrunc(j % 2 ? b.CreateLShr(slot, 32) : slot, b.getInt32Ty()), Ty::kB32);
    }
  };
  if (op == "ldmatrix") {
    // ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 {d...}, [addr]
    if (!in.has("m8n8") || !in.has("b16")) unsupported();
    site.kind = CutKind::kLdmatrix;
    site.mode = in.has("x4") ? 4 : in.has("x2") ? 2 : 1;
    site.wide = in.has("trans");
    const Operand& d = vec_arg(*this, in, 0);
    if (d.elems.size() != site.mode || A.size() < 2) fail("ldmatrix needs one register per matrix");
    ops[0] = b.CreatePtrToInt(address(A[1], space_of(in) == Space::kGeneric ? Space::kGeneric : Space::kShared), b.getInt64Ty());
    emit_cut(site, index, ops);
    for (size_t j = 0; j < d.elems.size(); ++j)
      write(d.elems[j], exchange_out(static_cast<int>(j), b.getInt32Ty()), Ty::kB32);
    return true;
  }
  if (op == "mma") {
    // mma.sync.aligned.m16n8k{8,16}.row.col.dtype.atype.btype.ctype d, a, b, c
    const bool k16 = in.has("m16n8k16"), k8 = in.has("m16n8k8");
    if ((!k16 && !k8) || !in.has("row") || !in.has("col") || type_count(in) != 4) unsupported();
    const Ty dt = type_suffix(in, 0), at = type_suffix(in, 1), ct = type_suffix(in, 3);
    if ((at != Ty::kF16 && at != Ty::kBF16) || type_suffix(in, 2) != at || (dt != Ty::kF32 && dt != Ty::kF16) || ct != dt)
      unsupported();
    site.kind = CutKind::kMma;
    site.mode = k16 ? kMmaM16N8K16 : kMmaM16N8K8;
    site.is_signed = at == Ty::kBF16;
    site.wide = dt == Ty::kF32;
    std::vector<Value*> words;
    words_of(vec_arg(*this, in, 1), words);
    words_of(vec_arg(*this, in, 2), words);
    words_of(vec_arg(*this, in, 3), words);
    const size_t expect = (k16 ? 4 + 2 : 2 + 1) + (site.wide ? 4 : 2);
    if (words.size() != expect) fail("mma fragments have the wrong number of registers");
    pack(words);
    emit_cut(site, index, ops);
    unpack(vec_arg(*this, in, 0));
    return true;
  }
  // wmma.{load,store,mma}
  if (!in.has("m16n16k16")) unsupported();
  const bool col = in.has("col") && !in.has("row");
  if (in.mods.empty()) unsupported();
  const std::string& what = in.mods[0];
  if (what == "load" || what == "store") {
    // load: wmma.load.{a,b,c}.sync.aligned.layout.m16n16k16[.space].type {r...}, [p][, stride]
    // store: wmma.store.d.sync.aligned.layout.m16n16k16[.space].type [p], {r...}[, stride]
    const bool load = what == "load";
    const Ty t = type_suffix(in);
    if (t != Ty::kF16 && t != Ty::kBF16 && t != Ty::kF32) unsupported();
    const Operand& regs = vec_arg(*this, in, load ? 0 : 1);
    const Operand& addr = A[load ? 1 : 0];
    Value* stride = A.size() >= 3 ? b.CreateZExt(read(A[2], Ty::kU32), b.getInt64Ty()) : b.getInt64(16);
    const uint64_t esize = t == Ty::kF32 ? 4 : 2;
    Value* base = address(addr, space_of(in));
    Value* lane = b.CreateZExt(b.CreateAnd(tid, 31), b.getInt64Ty());
    const bool halves = t != Ty::kF32;
    for (uint64_t j = 0; j < 8; ++j) {
      Value* e = b.CreateAdd(b.CreateMul(lane, b.getInt64(8)), b.getInt64(j));
      Value* row = b.CreateLShr(e, 4);
      Value* colv = b.CreateAnd(e, 15);
      Value* off = col ? b.CreateAdd(b.CreateMul(colv, stride), row) : b.CreateAdd(b.CreateMul(row, stride), colv);
      Value* p = b.CreateGEP(b.getInt8Ty(), base, b.CreateMul(off, b.getInt64(esize)));
      note_alignment(p, static_cast<uint32_t>(esize));
      const size_t reg = halves ? j / 2 : j;
      if (reg >= regs.elems.size()) fail("wmma fragment has too few registers");
      if (load) {
        Value* v = b.CreateAlignedLoad(b.getIntNTy(static_cast<unsigned>(esize * 8)), p, llvm::Align(esize));
        if (halves) {
          // Two halves per register: element j even in the low half.
          Value* cur = j % 2 ? read(regs.elems[reg], Ty::kB32) : b.getInt32(0);
          Value* w = b.CreateZExt(v, b.getInt32Ty());
          if (j % 2) w = b.CreateOr(b.CreateAnd(cur, 0xffff), b.CreateShl(w, 16));
          write(regs.elems[reg], w, Ty::kB32);
          if (reg + 4 < regs.elems.size() && j % 2) write(regs.elems[reg + 4], w, Ty::kB32);  // the repeat
        } else {
          write(regs.elems[reg], v, Ty::kB32);
        }
      } else {
        Value* w = read(regs.elems[reg], Ty::kB32);
        Value* v = halves ? b.CreateTrunc(j % 2 ? b.CreateLShr(w, 16) : w, b.getInt16Ty()) : w;
        b.CreateAlignedStore(v, p, llvm::Align(esize));
      }
    }
    return true;
  }
  if (what == "mma") {
    // wmma.mma.sync.aligned.alayout.blayout.m16n16k16[.dtype.atype.btype].dtype.ctype or .dtype.ctype (f16 inputs)
    const int n = type_count(in);
    const Ty dt = type_suffix(in, 0), ct = type_suffix(in, n - 1);
    const Ty at = n == 4 ? type_suffix(in, 1) : Ty::kF16;
    if ((at != Ty::kF16 && at != Ty::kBF16) || (dt != Ty::kF32 && dt != Ty::kF16) || ct != dt) unsupported();
    if (in.mods.size() < 5 || in.mods[3] != "row" || in.mods[4] != "col") {
      // The fragments hold row-major tiles whatever layout they were loaded with, so any layout pair computes A*B.
    }
    site.kind = CutKind::kMma;
    site.mode = kWmmaM16N16K16;
    site.is_signed = at == Ty::kBF16;
    site.wide = dt == Ty::kF32;
    std::vector<Value*> words;
    const Operand& a = vec_arg(*this, in, 1);
    const Operand& bm = vec_arg(*this, in, 2);
    const Operand& c = vec_arg(*this, in, 3);
    if (a.elems.size() < 4 || bm.elems.size() < 4) fail("wmma fragments have too few registers");
    for (size_t j = 0; j < 4; ++j) words.push_back(read(a.elems[j], Ty::kB32));
    for (size_t j = 0; j < 4; ++j) words.push_back(read(bm.elems[j], Ty::kB32));
    words_of(c, words);
    if (words.size() != 8 + (site.wide ? 8u : 4u)) fail("wmma accumulator has the wrong number of registers");
    pack(words);
    emit_cut(site, index, ops);
    unpack(vec_arg(*this, in, 0));
    return true;
  }
  unsupported();
}

}  // namespace cucpu::ptx
