// Loads, stores, address conversion and atomics in every state space.
//
// Address model: global, const, local and param addresses are host
// addresses; shared addresses are offsets into the block's arena (so they
// fit 32-bit registers), and cvta adds or removes the arena's base.
#include "ptx/lower.h"
#include "devrt/check_rt.h"
#include "ptx/red_combine.h"

namespace cucpu::ptx {

using llvm::Value;

namespace {

int vector_width(const Instr& in) {
  for (auto& m : in.mods) {
    if (m == "v2") return 2;
    if (m == "v4") return 4;
    if (m == "v8") return 8;
  }
  return 1;
}

llvm::AtomicOrdering ordering_of(const Instr& in, bool is_load, bool is_store) {
  if (in.has("acquire")) return llvm::AtomicOrdering::Acquire;
  if (in.has("release")) return llvm::AtomicOrdering::Release;
  if (in.has("acq_rel")) return is_load ? llvm::AtomicOrdering::Acquire : is_store ? llvm::AtomicOrdering::Release
                                                                                 : llvm::AtomicOrdering::AcquireRelease;
  if (in.has("sc")) return llvm::AtomicOrdering::SequentiallyConsistent;
  return llvm::AtomicOrdering::Monotonic;
}

}  // namespace

// A vector register (.reg .v4 .b32 %v) where a {...} operand may stand:
// the operand of its elements, kept in `spelled` (which it refers to).
const Operand& FnLowering::vector_elements(const Operand& o, int vec) {
  if (vec <= 1 || o.kind != Operand::Kind::kReg || o.elem >= 0 || f.regs[static_cast<size_t>(o.reg)].vec != vec) return o;
  Operand& v = spelled.emplace_back();
  v.kind = Operand::Kind::kVec;
  for (int i = 0; i < vec; ++i) {
    Operand& e = v.elems.emplace_back(o);
    e.elem = i;
  }
  return v;
}

bool FnLowering::lower_memory(const Instr& in) {
  const Op op = in.op;
  auto& A = in.args;
  if (op == Op::kLd || op == Op::kLdu || op == Op::kSt) {
    const bool load = op != Op::kSt;
    if (A.size() < 2) fail(op_name(op) + " needs two operands");
    const Space space = space_of(in);
    const Ty t = type_suffix(in);
    if (t == Ty::kNone) fail(op_name(op) + " needs a type");
    const int vec = vector_width(in);
    const uint32_t esize = static_cast<uint32_t>(type_bits(t) / 8);
    const Operand& addr = load ? A[1] : A[0];
    const Operand& val = vector_elements(load ? A[0] : A[1], vec);
    Value* p = address(addr, space);
    const bool vol = in.has("volatile") || in.has("mmio");
    const bool atomic = in.has("relaxed") || in.has("acquire") || in.has("release");
    if (space != Space::kLocal && space != Space::kParam) {
      if (atomic || vol) check_alignment(p, esize * static_cast<uint32_t>(vec));
      else note_alignment(p, esize * static_cast<uint32_t>(vec));
    }
    check_access(p, esize * static_cast<uint32_t>(vec), (load ? 0u : kAccessWrite) | (atomic ? kAccessAtomic : 0u), space);
    llvm::Type* et = b.getIntNTy(esize * 8);
    if (t == Ty::kF32) et = b.getFloatTy();
    if (t == Ty::kF64) et = b.getDoubleTy();
    const Ty as = t == Ty::kF32 || t == Ty::kF64 ? t : (is_signed(t) ? t : (esize == 1 ? Ty::kU8 : esize == 2 ? Ty::kU16 : esize == 4 ? Ty::kU32 : esize == 8 ? Ty::kU64 : Ty::kB128));
    auto elem_ptr = [&](int i) { return i == 0 ? p : b.CreateConstGEP1_64(b.getInt8Ty(), p, static_cast<uint64_t>(i) * esize); };
    const llvm::Align align(vec == 1 ? esize : esize * static_cast<uint32_t>(vec) > 16 ? 16 : esize * static_cast<uint32_t>(vec));
    const llvm::Align ealign(esize);
    if (vec > 1 && val.kind != Operand::Kind::kVec) fail("a vector access needs a {...} operand");
    for (int i = 0; i < vec; ++i) {
      const Operand& o = vec > 1 ? val.elems[static_cast<size_t>(i)] : val;
      if (load) {
        // A kernel's 64-bit parameters are loaded as pointers: the optimizer
        // then sees addresses derived from them as pointer arithmetic.
        const bool ptr_param = space == Space::kParam && vec == 1 && esize == 8 && t != Ty::kF64 &&
                               addr.kind == Operand::Kind::kAddr && entry_params.count(addr.sym);
        if (ptr_param) {
          auto* pl = b.CreateAlignedLoad(llvm::PointerType::get(ctx, 0), p, llvm::Align(1));
          pl->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx, {}));
          write(o, b.CreatePtrToInt(pl, b.getInt64Ty()), as);
          continue;
        }
        auto* ld = b.CreateAlignedLoad(et, elem_ptr(i), i == 0 ? align : ealign, vol);
        if (atomic && vec == 1) ld->setAtomic(ordering_of(in, true, false));
        if (space == Space::kGlobal && !atomic && !vol) ld->setMetadata(kGlobalLoadTag, llvm::MDNode::get(ctx, {}));
        if (space == Space::kGlobal && !atomic && !vol && in.has("nc")) nc_loads.push_back(ld);
        // A kernel's own parameters never change while it runs.
        if (space == Space::kParam && addr.kind == Operand::Kind::kAddr && entry_params.count(addr.sym))
          ld->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx, {}));
        write(o, ld, as);
      } else {
        if (o.kind == Operand::Kind::kSink) continue;
        auto* st = b.CreateAlignedStore(read(o, as == Ty::kB128 ? Ty::kB128 : as), elem_ptr(i), i == 0 ? align : ealign, vol);
        if (atomic && vec == 1) st->setAtomic(ordering_of(in, false, true));
      }
    }
    return true;
  }
  if (op == Op::kCvta) {
    // cvta.space.size d, a (window -> generic); cvta.to.space.size d, a (generic -> window).
    const bool to = in.has("to");
    const Space space = space_of(in);
    const Ty t = type_suffix(in);
    Value* a;
    if (A[1].kind == Operand::Kind::kSym) {
      Space s;
      a = symbol_address(A[1].sym, &s);
    } else {
      a = b.CreateZExtOrTrunc(read(A[1], t == Ty::kU32 ? Ty::kU32 : Ty::kU64), b.getInt64Ty());
    }
    if (space == Space::kShared) {
      Value* base = b.CreatePtrToInt(shared_base(), b.getInt64Ty());
      a = to ? b.CreateSub(a, base) : b.CreateAdd(a, base);
    }
    write(A[0], a, t == Ty::kU32 ? Ty::kU32 : Ty::kU64);
    return true;
  }
  if (op == Op::kIsspacep) {
    const Space space = space_of(in);
    Value* a = read(A[1], Ty::kU64);
    Value* r;
    if (space == Space::kShared) {
      Value* base = b.CreatePtrToInt(shared_base(), b.getInt64Ty());
      Value* size = b.CreateZExt(env_field(9, b.getInt32Ty()), b.getInt64Ty());
      r = b.CreateICmpULT(b.CreateSub(a, base), size);
    } else if (space == Space::kGlobal) {
      // Anything not in the block's arena (local memory is reported as not global).
      Value* base = b.CreatePtrToInt(shared_base(), b.getInt64Ty());
      Value* size = b.CreateZExt(env_field(9, b.getInt32Ty()), b.getInt64Ty());
      r = b.CreateICmpUGE(b.CreateSub(a, base), size);
    } else {
      r = b.getFalse();
    }
    write(A[0], r, Ty::kPred);
    return true;
  }
  return false;
}

// What atomicrmw `k` does, as a plain load, operation and store at `at`;
// returns the old value.
Value* FnLowering::plain_rmw(llvm::AtomicRMWInst::BinOp k, Value* at, Value* v, llvm::Align align) {
  using Bin = llvm::AtomicRMWInst::BinOp;
  Value* old = b.CreateAlignedLoad(v->getType(), at, align);
  Value* r = nullptr;
  switch (k) {
    case Bin::Add: r = b.CreateAdd(old, v); break;
    case Bin::FAdd: r = b.CreateFAdd(old, v); break;
    case Bin::Min: r = b.CreateSelect(b.CreateICmpSLT(v, old), v, old); break;
    case Bin::Max: r = b.CreateSelect(b.CreateICmpSGT(v, old), v, old); break;
    case Bin::UMin: r = b.CreateSelect(b.CreateICmpULT(v, old), v, old); break;
    case Bin::UMax: r = b.CreateSelect(b.CreateICmpUGT(v, old), v, old); break;
    case Bin::FMin: r = intrinsic(llvm::Intrinsic::minnum, {v->getType()}, {old, v}); break;
    case Bin::FMax: r = intrinsic(llvm::Intrinsic::maxnum, {v->getType()}, {old, v}); break;
    case Bin::UIncWrap:  // old >= v ? 0 : old + 1
      r = b.CreateSelect(b.CreateICmpUGE(old, v), llvm::ConstantInt::get(v->getType(), 0),
                         b.CreateAdd(old, llvm::ConstantInt::get(v->getType(), 1)));
      break;
    case Bin::UDecWrap:  // old == 0 || old > v ? v : old - 1
      r = b.CreateSelect(b.CreateOr(b.CreateICmpEQ(old, llvm::ConstantInt::get(v->getType(), 0)), b.CreateICmpUGT(old, v)), v,
                         b.CreateSub(old, llvm::ConstantInt::get(v->getType(), 1)));
      break;
    case Bin::And: r = b.CreateAnd(old, v); break;
    case Bin::Or: r = b.CreateOr(old, v); break;
    case Bin::Xor: r = b.CreateXor(old, v); break;
    default: r = v; break;  // Xchg
  }
  b.CreateAlignedStore(r, at, align);
  return old;
}

bool FnLowering::lower_atomic(const Instr& in) {
  const Op op = in.op;
  if (op != Op::kAtom && op != Op::kRed) return false;
  auto& A = in.args;
  const bool has_dest = op == Op::kAtom;
  const size_t base = has_dest ? 1 : 0;
  if (A.size() < base + 2) fail(op_name(op) + " needs an address and a value");
  const Space space = space_of(in);
  const Ty t = type_suffix(in);
  if (t == Ty::kNone) fail(op_name(op) + " needs a type");
  std::string what;
  static const char* const kOps[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"};
  for (auto& m : in.mods)
    for (const char* k : kOps)
      if (m == k) what = k;
  if (what.empty()) fail(op_name(op) + " needs an operation");
  // Vector atomics (sm_90: add, min and max over .v2/.v4/.v8): each element
  // is an atomic of its own, as the PTX ISA promises nothing for the vector
  // as a whole.
  const int vec = vector_width(in);
  if (vec > 1) {
    if (what != "add" && what != "min" && what != "max") unsupported();
    const auto v = static_cast<size_t>(vec);
    if (A[base + 1].kind != Operand::Kind::kVec || A[base + 1].elems.size() != v ||
        (has_dest && (A[0].kind != Operand::Kind::kVec || A[0].elems.size() != v)))
      fail(op_name(op) + ".v" + std::to_string(vec) + " needs {...} operands of " + std::to_string(vec) + " elements");
  }
  const uint32_t bytes = static_cast<uint32_t>(type_bits(t) / 8);
  Value* p = address(A[base], space);
  check_alignment(p, bytes * static_cast<uint32_t>(vec));
  check_access(p, bytes * static_cast<uint32_t>(vec), kAccessWrite | kAccessAtomic, space);
  if (combine_reds && (space == Space::kGlobal || space == Space::kGeneric)) {
    llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
    if (vec == 1 && (!has_dest || result_unused(f, in, reg_mentions))) {
      if (std::optional<uint32_t> code = combined_code(in)) {
        Value* v = read(A[base + 1], t);
        Value* bits = b.CreateZExt(b.CreateBitCast(v, b.getIntNTy(bytes * 8)), b.getInt64Ty());
        auto* ty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, b.getInt64Ty(), b.getInt32Ty()}, false);
        b.CreateCall(runtime("cucpu_rt_red", ty), {env, p, bits, b.getInt32(*code)});
        return true;
      }
    }
    // Any other atomic on memory a combined reduction may target comes after them.
    b.CreateCall(runtime("cucpu_rt_red_apply", llvm::FunctionType::get(b.getVoidTy(), {ptr}, false)), {env});
  }
  const llvm::AtomicOrdering ord = ordering_of(in, false, false);
  const llvm::Align align(bytes);
  // A block's shared memory is touched by its own threads alone, and they
  // all run on one OS thread, one at a time: its atomics are plain
  // read-modify-writes there (no lock prefix, and loops around them stay
  // open to the optimizer). Generic addresses may be global: they stay atomic.
  const bool plain = space == Space::kShared;
  if (what == "cas") {
    if (A.size() < base + 3) fail("atom.cas needs a compare and a new value");
    llvm::Type* it = b.getIntNTy(bytes * 8);
    Value* cmp = read(A[base + 1], bytes == 16 ? Ty::kB128 : bytes == 8 ? Ty::kB64 : bytes == 2 ? Ty::kB16 : Ty::kB32);
    Value* nv = read(A[base + 2], bytes == 16 ? Ty::kB128 : bytes == 8 ? Ty::kB64 : bytes == 2 ? Ty::kB16 : Ty::kB32);
    if (plain) {
      Value* was = b.CreateAlignedLoad(it, p, align);
      b.CreateAlignedStore(b.CreateSelect(b.CreateICmpEQ(was, b.CreateBitCast(cmp, it)), b.CreateBitCast(nv, it), was), p, align);
      if (has_dest) write(A[0], was, t);
      return true;
    }
    auto* cx = b.CreateAtomicCmpXchg(p, b.CreateBitCast(cmp, it), b.CreateBitCast(nv, it), align,
                                     ord == llvm::AtomicOrdering::Monotonic ? llvm::AtomicOrdering::Monotonic : llvm::AtomicOrdering::SequentiallyConsistent,
                                     llvm::AtomicOrdering::Monotonic);
    if (has_dest) write(A[0], b.CreateExtractValue(cx, 0), t);
    return true;
  }
  // One element's atomic at `at`: its value operand, and its destination (null for red).
  auto element = [&](Value* at, const Operand& value, const Operand* dest) {
    const bool half = t == Ty::kF16 || t == Ty::kBF16 || t == Ty::kF16x2 || t == Ty::kBF16x2;
    if (half) {
      // No native half atomics: a compare-exchange loop computing in f32.
      if (what != "add" && what != "min" && what != "max") unsupported();
      llvm::Type* it = b.getIntNTy(bytes * 8);
      Value* v = read(value, bytes == 4 ? Ty::kB32 : Ty::kB16);
      auto* ty = llvm::FunctionType::get(it, {llvm::PointerType::get(ctx, 0), it, b.getInt32Ty()}, false);
      const uint32_t code = (t == Ty::kBF16 || t == Ty::kBF16x2 ? 1u : 0u) | (bytes == 4 ? 2u : 0u) |
                            (what == "add" ? 0u : what == "min" ? 4u : 8u);
      Value* old = b.CreateCall(runtime(bytes == 4 ? "cucpu_rt_atomic_half2" : "cucpu_rt_atomic_half", ty), {at, v, b.getInt32(code)});
      if (dest) write(*dest, old, t);
      return;
    }
    using Bin = llvm::AtomicRMWInst::BinOp;
    Bin k;
    const bool fl = t == Ty::kF32 || t == Ty::kF64;
    if (what == "add") k = fl ? Bin::FAdd : Bin::Add;
    else if (what == "min") k = fl ? Bin::FMin : is_signed(t) ? Bin::Min : Bin::UMin;
    else if (what == "max") k = fl ? Bin::FMax : is_signed(t) ? Bin::Max : Bin::UMax;
    else if (what == "inc") k = Bin::UIncWrap;
    else if (what == "dec") k = Bin::UDecWrap;
    else if (what == "and") k = Bin::And;
    else if (what == "or") k = Bin::Or;
    else if (what == "xor") k = Bin::Xor;
    else k = Bin::Xchg;
    Value* v = read(value, t == Ty::kB128 ? Ty::kB128 : t);
    if (bytes == 16) {
      if (what != "exch") unsupported();
      v = b.CreateBitCast(v, b.getInt128Ty());
    }
    if (what == "exch" && fl) v = b.CreateBitCast(v, b.getIntNTy(bytes * 8));
    Value* old = plain ? plain_rmw(k, at, v, align) : b.CreateAtomicRMW(k, at, v, align, ord);
    if (dest) write(*dest, old, t);
  };
  if (vec == 1) {
    element(p, A[base + 1], has_dest ? &A[0] : nullptr);
    return true;
  }
  for (size_t i = 0; i < static_cast<size_t>(vec); ++i) {
    Value* at = i == 0 ? p : b.CreateConstGEP1_64(b.getInt8Ty(), p, i * bytes);
    const Operand* dest = has_dest && A[0].elems[i].kind != Operand::Kind::kSink ? &A[0].elems[i] : nullptr;
    element(at, A[base + 1].elems[i], dest);
  }
  return true;
}

}  // namespace cucpu::ptx
