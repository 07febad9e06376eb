// Warp matrix instructions: ldmatrix and mma.sync (cuts: the runner
// gathers the warp's fragments, warp_matrix.cpp), and wmma.
//
// wmma fragments are opaque to programs, so cucpu picks their layout
// (warp_matrix.h): wmma.load and wmma.store are then each lane's own
// accesses; wmma.mma is a cut.
#include "ptx/lower.h"
#include "devrt/warp_matrix.h"

namespace cucpu::ptx {

using llvm::Value;

namespace {

// One warp matrix instruction being lowered: the exchange slots and cut
// site its forms fill, and the helpers they share (fragments go into the
// exchange slots two b32 words a slot, abi.h). One member per form.
struct MatrixForm {
  FnLowering& L;
  const Instr& in;
  size_t index;
  llvm::IRBuilder<>& b;
  const std::vector<Operand>& A;
  Value* ops[kExchangeInSlots] = {};
  CutSite site;

  [[noreturn]] void fail(const std::string& why) const { L.fail(why); }
  [[noreturn]] void unsupported() const { L.unsupported(); }
  const Operand& vec_arg(size_t k) const {
    if (k >= A.size() || A[k].kind != Operand::Kind::kVec) fail("expected a {...} register list");
    return A[k];
  }
  // Packs b32 words into 64-bit slots, two per slot.
  void pack_into(const std::vector<Value*>& words, Value** slots) const {
    for (size_t i = 0; i < words.size(); ++i) {
      Value* w = b.CreateZExt(words[i], b.getInt64Ty());
      if (i % 2) w = b.CreateShl(w, 32);
      slots[i / 2] = slots[i / 2] ? b.CreateOr(slots[i / 2], w) : w;
    }
  }
  // Packs b32 words into the exchange slots.
  void pack(const std::vector<Value*>& words) {
    if (words.size() > 2 * kExchangeInSlots) fail("too many fragment registers");
    pack_into(words, ops);
  }
  void words_of(const Operand& v, std::vector<Value*>& out) const {
    for (const Operand& e : v.elems) out.push_back(L.read(e, Ty::kB32));
  }
  // Writes the result slots' b32 words to the registers of `d`.
  void unpack(const Operand& d) const {
    for (size_t j = 0; j < d.elems.size(); ++j) {
      Value* slot = L.exchange_out(static_cast<int>(j / 2), b.getInt64Ty());
      L.write(d.elems[j], b.CreateTrunc(j % 2 ? b.CreateLShr(slot, 32) : slot, b.getInt32Ty()), Ty::kB32);
    }
  }
  void emit_cut(Value* const* results = nullptr) { L.emit_cut(site, index, ops, results); }

  bool lower_ldmatrix();
  bool lower_mma_sync();
  bool lower_mma_sync_other_inputs(Ty at, Ty bt, Ty dt, Ty ct, const uint8_t fp8[2], int fp8_count);
  bool lower_wmma();
  bool lower_wmma_access(const WmmaDims& dims);
  bool lower_wmma_mma(const WmmaDims& dims, uint8_t shape);
};

bool MatrixForm::lower_ldmatrix() {
  // ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 {d...}, [addr]
  if (!in.has("m8n8") || !in.has("b16")) unsupported();
  site.kind = CutKind::kLdmatrix;
  site.mode = in.has("x4") ? 4 : in.has("x2") ? 2 : 1;
  site.wide = in.has("trans");
  const Operand& d = vec_arg(0);
  if (d.elems.size() != site.mode || A.size() < 2) fail("ldmatrix needs one register per matrix");
  ops[0] = b.CreatePtrToInt(L.address(A[1], L.space_of(in) == Space::kGeneric ? Space::kGeneric : Space::kShared), b.getInt64Ty());
  emit_cut();
  for (size_t j = 0; j < d.elems.size(); ++j)
    L.write(d.elems[j], L.exchange_out(static_cast<int>(j), b.getInt32Ty()), Ty::kB32);
  return true;
}

bool MatrixForm::lower_mma_sync() {
  // mma.sync.aligned.shape.row.col[.satfinite].dtype.atype.btype.ctype d, a, b, c
  if (!in.has("row") || !in.has("col")) unsupported();
  // fp8 inputs (e4m3, e5m2) are not register types: A's and B's, in order.
  uint8_t fp8[2];
  int fp8_count = 0;
  for (const std::string& m : in.mods)
    if ((m == "e4m3" || m == "e5m2") && fp8_count < 2) fp8[fp8_count++] = m == "e4m3" ? kMmaE4M3 : kMmaE5M2;
  if (L.type_count(in) != (fp8_count == 2 ? 2 : 4) || fp8_count == 1) unsupported();
  const Ty dt = L.type_suffix(in, 0), ct = L.type_suffix(in, fp8_count ? 1 : 3);
  const Ty at = fp8_count ? Ty::kNone : L.type_suffix(in, 1), bt = fp8_count ? Ty::kNone : L.type_suffix(in, 2);
  std::vector<Value*> words;
  if (at == Ty::kF16 || at == Ty::kBF16) {
    const bool k16 = in.has("m16n8k16"), k8 = in.has("m16n8k8");
    if ((!k16 && !k8) || bt != at || (dt != Ty::kF32 && dt != Ty::kF16) || ct != dt) unsupported();
    site.kind = CutKind::kMma;
    site.mode = k16 ? kMmaM16N8K16 : kMmaM16N8K8;
    site.is_signed = at == Ty::kBF16;
    site.wide = dt == Ty::kF32;
    words_of(vec_arg(1), words);
    words_of(vec_arg(2), words);
    words_of(vec_arg(3), words);
    const size_t expect = (k16 ? 4 + 2 : 2 + 1) + (site.wide ? 4 : 2);
    if (words.size() != expect) fail("mma fragments have the wrong number of registers");
    pack(words);
    emit_cut();
    unpack(vec_arg(0));
    return true;
  }
  return lower_mma_sync_other_inputs(at, bt, dt, ct, fp8, fp8_count);
}

// mma.sync of inputs other than f16 and bf16: tf32 (m16n8k8, m16n8k4), f64
// (m8n8k4), s8 and u8 (m16n8k16, m16n8k32), e4m3 and e5m2 (m16n8k32), in
// the ISA's fragment layouts (warp_matrix.cpp).
bool MatrixForm::lower_mma_sync_other_inputs(Ty at, Ty bt, Ty dt, Ty ct, const uint8_t fp8[2], int fp8_count) {
  std::vector<Value*> words;
  uint8_t input, mode;
  const bool integer = (at == Ty::kS8 || at == Ty::kU8) && (bt == Ty::kS8 || bt == Ty::kU8);
  if (at == Ty::kTF32 && bt == at && dt == Ty::kF32 && ct == dt && (in.has("m16n8k8") || in.has("m16n8k4"))) {
    input = kMmaTF32;
    mode = in.has("m16n8k8") ? kMmaM16N8K8 : kMmaM16N8K4;
  } else if (at == Ty::kF64 && bt == at && dt == Ty::kF64 && ct == dt && in.has("m8n8k4")) {
    input = kMmaF64;
    mode = kMmaM8N8K4;
  } else if (integer && dt == Ty::kS32 && ct == dt && (in.has("m16n8k16") || in.has("m16n8k32"))) {
    input = at == Ty::kS8 ? kMmaS8 : kMmaU8;
    mode = in.has("m16n8k16") ? kMmaM16N8K16 : kMmaM16N8K32;
  } else if (fp8_count == 2 && dt == Ty::kF32 && ct == dt && in.has("m16n8k32")) {
    input = fp8[0];
    mode = kMmaM16N8K32;
  } else {
    unsupported();
  }
  site.kind = CutKind::kMma;
  site.mode = mode;
  site.mma_types = input;
  if ((integer && bt != at) || (fp8_count == 2 && fp8[1] != fp8[0])) site.mma_types |= kMmaBOtherSign;
  if (in.has("satfinite")) site.mma_types |= kMmaSatfinite;
  const bool f64 = input == kMmaF64;
  for (int i = 1; i <= 3; ++i)
    for (const Operand& e : vec_arg(static_cast<size_t>(i)).elems) {
      if (!f64) {
        words.push_back(L.read(e, Ty::kB32));
        continue;
      }
      Value* r = L.read(e, Ty::kB64);
      words.push_back(b.CreateTrunc(r, b.getInt32Ty()));
      words.push_back(b.CreateTrunc(b.CreateLShr(r, 32), b.getInt32Ty()));
    }
  const MmaFragments fr = mma_fragments(mode, input);
  if (static_cast<int>(words.size()) != fr.a_words + fr.b_words + fr.c_words)
    fail("mma fragments have the wrong number of registers");
  pack(words);
  emit_cut();
  const Operand& d = vec_arg(0);
  if (static_cast<int>(d.elems.size()) * (f64 ? 2 : 1) != fr.c_words) fail("mma fragments have the wrong number of registers");
  for (size_t j = 0; j < d.elems.size(); ++j) {
    if (f64) {
      L.write(d.elems[j], L.exchange_out(static_cast<int>(j), b.getInt64Ty()), Ty::kB64);
      continue;
    }
    Value* slot = L.exchange_out(static_cast<int>(j / 2), b.getInt64Ty());
    L.write(d.elems[j], b.CreateTrunc(j % 2 ? b.CreateLShr(slot, 32) : slot, b.getInt32Ty()), Ty::kB32);
  }
  return true;
}

bool MatrixForm::lower_wmma() {
  static const struct {
    const char* name;
    uint8_t mode;
  } kShapes[] = {{"m16n16k16", kWmmaM16N16K16}, {"m32n8k16", kWmmaM32N8K16}, {"m8n32k16", kWmmaM8N32K16},
                 {"m16n16k8", kWmmaM16N16K8},   {"m8n8k4", kWmmaM8N8K4}};
  int shape = -1;
  for (const auto& sh : kShapes)
    if (in.has(sh.name)) shape = sh.mode;
  if (shape < 0 || in.mods.empty()) unsupported();
  const WmmaDims dims = wmma_dims(static_cast<uint8_t>(shape));
  const std::string& what = in.mods[0];
  if (what == "load" || what == "store") return lower_wmma_access(dims);
  if (what == "mma") return lower_wmma_mma(dims, static_cast<uint8_t>(shape));
  unsupported();
}

// wmma.load and wmma.store: each lane's own accesses in cucpu's layout.
bool MatrixForm::lower_wmma_access(const WmmaDims& dims) {
  // load: wmma.load.{a,b,c}.sync.aligned.layout.shape[.space].type {r...}, [p][, stride]
  // store: wmma.store.d.sync.aligned.layout.shape[.space].type [p], {r...}[, stride]
  const bool load = in.mods[0] == "load";
  if (in.mods.size() < 2) unsupported();
  const std::string& matrix = in.mods[1];
  const int rows = matrix == "a" ? dims.m : matrix == "b" ? dims.k : dims.m;
  const int cols = matrix == "a" ? dims.k : dims.n;
  const Ty t = L.type_suffix(in);
  int bits;
  switch (t) {
    case Ty::kS8: case Ty::kU8: bits = 8; break;
    case Ty::kF16: case Ty::kBF16: bits = 16; break;
    case Ty::kTF32: case Ty::kF32: case Ty::kS32: bits = 32; break;
    case Ty::kF64: bits = 64; break;
    default: unsupported();
  }
  const bool col = in.has("col") && !in.has("row");
  const Operand& regs = vec_arg(load ? 0 : 1);
  const Operand& addr = A[load ? 1 : 0];
  const int per_lane = rows * cols / 32;
  const int per_reg = bits == 64 ? 1 : 32 / bits;
  const int used = (per_lane + per_reg - 1) / per_reg;
  if (static_cast<int>(regs.elems.size()) < used) fail("wmma fragment has too few registers");
  const Ty reg_ty = bits == 64 ? Ty::kB64 : Ty::kB32;
  llvm::Type* reg_llvm = b.getIntNTy(bits == 64 ? 64 : 32);
  llvm::Type* elem_llvm = b.getIntNTy(static_cast<unsigned>(bits));
  Value* stride = A.size() >= 3 ? b.CreateZExt(L.read(A[2], Ty::kU32), b.getInt64Ty()) : b.getInt64(col ? rows : cols);
  const uint64_t esize = static_cast<uint64_t>(bits / 8);
  Value* base = L.address(addr, L.space_of(in));
  Value* lane = b.CreateZExt(b.CreateAnd(L.tid, 31), b.getInt64Ty());
  std::vector<Value*> words(static_cast<size_t>(used), nullptr);
  for (int j = 0; j < per_lane; ++j) {
    Value* e = b.CreateAdd(b.CreateMul(lane, b.getInt64(static_cast<uint64_t>(per_lane))), b.getInt64(static_cast<uint64_t>(j)));
    Value* row = b.CreateUDiv(e, b.getInt64(static_cast<uint64_t>(cols)));
    Value* colv = b.CreateURem(e, b.getInt64(static_cast<uint64_t>(cols)));
    Value* off = col ? b.CreateAdd(b.CreateMul(colv, stride), row) : b.CreateAdd(b.CreateMul(row, stride), colv);
    Value* p = b.CreateGEP(b.getInt8Ty(), base, b.CreateMul(off, b.getInt64(esize)));
    L.note_alignment(p, static_cast<uint32_t>(esize));
    const int reg = j / per_reg;
    const unsigned shift = static_cast<unsigned>(bits * (j % per_reg));
    if (load) {
      Value* v = b.CreateZExt(b.CreateAlignedLoad(elem_llvm, p, llvm::Align(esize)), reg_llvm);
      if (shift) v = b.CreateShl(v, shift);
      words[static_cast<size_t>(reg)] = words[static_cast<size_t>(reg)] ? b.CreateOr(words[static_cast<size_t>(reg)], v) : v;
    } else {
      Value* w = L.read(regs.elems[static_cast<size_t>(reg)], reg_ty);
      if (shift) w = b.CreateLShr(w, shift);
      b.CreateAlignedStore(b.CreateTrunc(w, elem_llvm), p, llvm::Align(esize));
    }
  }
  if (load)
    for (size_t i = 0; i < regs.elems.size(); ++i) L.write(regs.elems[i], words[i % static_cast<size_t>(used)], reg_ty);
  return true;
}

// wmma.mma: a cut; the runner multiplies the warp's fragments.
bool MatrixForm::lower_wmma_mma(const WmmaDims& dims, uint8_t shape) {
  // f16 inputs: wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype;
  // others: ....shape[.rnd].dtype.atype.btype.ctype[.satfinite]. The
  // fragments hold row-major tiles whatever layout loaded them, so the
  // layouts change nothing here.
  const int n = L.type_count(in);
  const Ty dt = L.type_suffix(in, 0), ct = L.type_suffix(in, n - 1);
  const Ty at = n == 4 ? L.type_suffix(in, 1) : Ty::kF16;
  uint8_t input;
  switch (at) {
    case Ty::kF16: input = kMmaF16; break;
    case Ty::kBF16: input = kMmaBF16; break;
    case Ty::kTF32: input = kMmaTF32; break;
    case Ty::kF64: input = kMmaF64; break;
    case Ty::kS8: input = kMmaS8; break;
    case Ty::kU8: input = kMmaU8; break;
    default: unsupported();
  }
  uint8_t types = input;
  const bool f16_inputs = input == kMmaF16;
  auto acc_ok = [&](Ty t) {
    switch (input) {
      case kMmaF16: return t == Ty::kF16 || t == Ty::kF32;
      case kMmaBF16: case kMmaTF32: return t == Ty::kF32;
      case kMmaF64: return t == Ty::kF64;
      default: return t == Ty::kS32;
    }
  };
  if (!acc_ok(dt) || !acc_ok(ct)) unsupported();
  if (f16_inputs && ct == Ty::kF32) types |= kMmaCF32;
  if (f16_inputs && dt == Ty::kF32) types |= kMmaDF32;
  if (in.has("satfinite")) types |= kMmaSatfinite;
  site.kind = CutKind::kMma;
  site.mode = static_cast<uint8_t>(shape);
  site.mma_types = types;
  const int in_bits = wmma_input_bits(input);
  auto acc_bits = [&](Ty t) { return t == Ty::kF16 ? 16 : t == Ty::kF64 ? 64 : 32; };
  // The words of a fragment the layout uses, in order (a 64-bit register is two).
  std::vector<Value*> words;
  auto take = [&](const Operand& v, int elems, int bits) {
    const int nwords = (elems * bits + 31) / 32;
    if (bits == 64) {
      if (static_cast<int>(v.elems.size()) < nwords / 2) fail("wmma fragment has too few registers");
      for (int i = 0; i < nwords / 2; ++i) {
        Value* r = L.read(v.elems[static_cast<size_t>(i)], Ty::kB64);
        words.push_back(b.CreateTrunc(r, b.getInt32Ty()));
        words.push_back(b.CreateTrunc(b.CreateLShr(r, 32), b.getInt32Ty()));
      }
      return;
    }
    if (static_cast<int>(v.elems.size()) < nwords) fail("wmma fragment has too few registers");
    for (int i = 0; i < nwords; ++i) words.push_back(L.read(v.elems[static_cast<size_t>(i)], Ty::kB32));
  };
  take(vec_arg(1), dims.m * dims.k / 32, in_bits);
  take(vec_arg(2), dims.k * dims.n / 32, in_bits);
  pack(words);
  // C goes in the result slots (abi.h), two words a slot.
  words.clear();
  take(vec_arg(3), dims.m * dims.n / 32, acc_bits(ct));
  if (words.size() > 2 * kExchangeOutSlots) fail("wmma accumulator has too many registers");
  Value* results[kExchangeOutSlots] = {};
  pack_into(words, results);
  emit_cut(results);
  const Operand& d = vec_arg(0);
  const int d_words = (dims.m * dims.n / 32 * acc_bits(dt) + 31) / 32;
  if (acc_bits(dt) == 64) {
    if (static_cast<int>(d.elems.size()) * 2 < d_words) fail("wmma accumulator has too few registers");
    for (int i = 0; i < d_words / 2; ++i) {
      Value* slot = L.exchange_out(i, b.getInt64Ty());
      L.write(d.elems[static_cast<size_t>(i)], slot, Ty::kB64);
    }
  } else {
    if (static_cast<int>(d.elems.size()) < d_words) fail("wmma accumulator has too few registers");
    for (int j = 0; j < d_words; ++j) {
      Value* slot = L.exchange_out(j / 2, b.getInt64Ty());
      L.write(d.elems[static_cast<size_t>(j)], b.CreateTrunc(j % 2 ? b.CreateLShr(slot, 32) : slot, b.getInt32Ty()),
            Ty::kB32);
    }
  }
  return true;
}

}  // namespace

bool FnLowering::lower_matrix(const Instr& in, size_t index) {
  const Op op = in.op;
  if (op != Op::kLdmatrix && op != Op::kMma && op != Op::kWmma) return false;
  if (!is_kernel) fail("'" + op_name(op) + "' inside a called function is not supported");
  MatrixForm form{*this, in, index, b, in.args, {}, {}};
  form.site.line = in.line;
  switch (op) {
    case Op::kLdmatrix: return form.lower_ldmatrix();
    case Op::kMma: return form.lower_mma_sync();
    default: return form.lower_wmma();
  }
}

}  // namespace cucpu::ptx
