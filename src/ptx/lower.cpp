// Lowering driver and the operand machinery every instruction family uses.
#include "ptx/lower.h"

#include "devrt/check_rt.h"
#include "ptx/jit.h"
#include "ptx/red_combine.h"

#include <chrono>
#include <cstring>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace cucpu::ptx {

using llvm::Value;

namespace {

// Names the kernel (transitively) calls, in a stable order.
void collect_callees(const Module& m, int fi, std::vector<int>& order, std::set<int>& seen) {
  if (!seen.insert(fi).second) return;
  order.push_back(fi);
  // Called functions, and those whose address is taken (indirect calls).
  for (const Instr& in : m.funcs[static_cast<size_t>(fi)].body)
    for (const Operand& o : in.args)
      if (o.kind == Operand::Kind::kSym) {
        auto it = m.func_index.find(o.sym);
        // The device runtime's calls are cucpu's, even where the PTX brings its own bodies.
        if (it != m.func_index.end() && !m.funcs[static_cast<size_t>(it->second)].is_entry && !find_device_call(o.sym))
          collect_callees(m, it->second, order, seen);
      }
}

void collect_symbols(const Operand& o, std::set<std::string>& out) {
  if (!o.sym.empty()) out.insert(o.sym);
  for (const Operand& e : o.elems) collect_symbols(e, out);
}

// The functions called through pointers: those a module variable's
// initializer names (Program compiles them once, with lower_functions), and
// what they call.
std::vector<int> pointer_callees(const Module& m) {
  std::vector<int> order;
  std::set<int> seen;
  for (const VarDecl& v : m.vars)
    for (const auto& init : v.sym_inits) {
      auto it = m.func_index.find(init.second.substr(0, init.second.rfind('+')));
      if (it != m.func_index.end() && !m.funcs[static_cast<size_t>(it->second)].is_entry)
        collect_callees(m, it->second, order, seen);
    }
  return order;
}

// Module-scope .shared variables in a block's arena, in declaration order,
// each at its alignment from `*off`: those named by a function of `order`
// (that are not placed yet).
void place_module_shared(const Module& m, const std::vector<int>& order, std::map<std::string, uint32_t>& shared,
                         uint64_t* off) {
  std::set<std::string> named;
  for (int fi : order)
    for (const Instr& in : m.funcs[static_cast<size_t>(fi)].body)
      for (const Operand& o : in.args) collect_symbols(o, named);
  for (const VarDecl& v : m.vars) {
    if (v.space != Space::kShared || v.unsized || v.is_extern || !named.count(v.name) || shared.count(v.name)) continue;
    const uint64_t a = v.align ? v.align : 1;
    *off = (*off + a - 1) / a * a;
    shared[v.name] = static_cast<uint32_t>(*off);
    *off += v.size;
  }
}

bool is_runtime_extern(const std::string& name) {
  return name == "vprintf" || name == "__assertfail" || name == "malloc" || name == "free" || find_device_call(name);
}

}  // namespace

std::unique_ptr<llvm::Module> lower_kernel(const Module& original, int entry, const std::string& prefix,
                                           llvm::LLVMContext& ctx, KernelLayout* layout, bool big_grid) {
  // Functions with cuts are lowered as part of the kernel's body: a copy of
  // the module whose kernel has them inlined (rare; the copy is the cost).
  std::optional<Module> inlined;
  if (std::optional<Function> f = inline_cut_calls(original, original.funcs[static_cast<size_t>(entry)])) {
    inlined = original;
    inlined->funcs[static_cast<size_t>(entry)] = std::move(*f);
  }
  const Module& m = inlined ? *inlined : original;
  const Function& kf = m.funcs[static_cast<size_t>(entry)];
  auto mod = std::make_unique<llvm::Module>(prefix, ctx);
  std::vector<int> order;
  std::set<int> seen;
  collect_callees(m, entry, order, seen);

  // Shared layout: the module's static .shared variables that functions
  // called through pointers name (at the offsets lower_functions gives them,
  // in every kernel), then those the kernel's own calls name, then each
  // function's own, in order; dynamic (unsized extern) ones are not laid
  // out. A kernel's arena holds what it can reach, not every .shared
  // variable of the program (-rdc moves functions' __shared__ variables to
  // module scope).
  std::map<std::string, uint32_t> shared;
  uint64_t off = 0;
  place_module_shared(m, pointer_callees(m), shared, &off);
  place_module_shared(m, order, shared, &off);
  auto place = [&](const std::string& key, const VarDecl& v) {
    if (v.unsized || v.is_extern) return;
    const uint64_t a = v.align ? v.align : 1;
    off = (off + a - 1) / a * a;
    shared[key] = static_cast<uint32_t>(off);
    off += v.size;
  };
  for (int fi : order)
    for (const VarDecl& v : m.funcs[static_cast<size_t>(fi)].vars)
      if (v.space == Space::kShared) place(m.funcs[static_cast<size_t>(fi)].name + "/" + v.name, v);
  if (off > (uint64_t{1} << 31)) throw LowerError{kf.line, 1, "static shared memory too large"};
  layout->static_shared = static_cast<uint32_t>(off);

  // Declarations first, so calls can refer to any function.
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  layout->step_name = prefix + "_step";
  layout->range_name = prefix + "_run";
  auto* step_ty = llvm::FunctionType::get(i32, {ptr, ptr, i32, i32, i32, i32, i32, ptr, llvm::Type::getInt64Ty(ctx)}, false);
  llvm::Function* step = llvm::Function::Create(step_ty, llvm::Function::InternalLinkage, layout->step_name, *mod);
  step->addFnAttr(llvm::Attribute::AlwaysInline);
  // No noalias on the step's pointers: the range functions it is inlined
  // into say it of theirs, and an inlined noalias scope would keep loads
  // (the shared base...) from being hoisted out of their loops.
  step->addDereferenceableParamAttr(1, sizeof(BlockEnv));
  step->addParamAttr(1, llvm::Attribute::getWithAlignment(ctx, llvm::Align(alignof(BlockEnv))));
  for (size_t k = 1; k < order.size(); ++k) {
    const Function& f = m.funcs[static_cast<size_t>(order[k])];
    if (f.is_entry) throw LowerError{f.line, 1, "a kernel calls the entry '" + f.name + "'"};
    if (!f.has_body) {
      if (is_runtime_extern(f.name)) continue;
      throw LowerError{f.line, 1, "the function '" + f.name + "' is declared but not defined (linking is not supported)"};
    }
    std::vector<llvm::Type*> args = {ptr, i32};
    for (size_t i = 0; i < f.rets.size() + f.params.size(); ++i) args.push_back(ptr);
    auto* fty = llvm::FunctionType::get(i32, args, false);
    llvm::Function::Create(fty, llvm::Function::InternalLinkage, prefix + "_f_" + f.name, *mod);
  }
  const bool instrument = instrument_accesses();
  const bool combine = !instrument && combining_kernel(m, order);
  for (size_t k = 1; k < order.size(); ++k) {
    const Function& f = m.funcs[static_cast<size_t>(order[k])];
    if (!f.has_body) continue;
    for (const Instr& in : f.body)
      if (is_cut_instruction(in))
        throw LowerError{in.line, in.col,
                         "'" + op_name(in.op) + "' inside the function '" + f.name +
                             "', which the kernel reaches through a pointer, is not supported (direct calls of "
                             "functions with barriers and warp collectives are inlined)"};
    FnLowering fl(m, f, *mod, mod->getFunction(prefix + "_f_" + f.name), *layout, shared, prefix, false);
    fl.combine_reds = combine;
    fl.instrument = instrument;
    fl.lower_body();
  }
  FnLowering kl(m, kf, *mod, step, *layout, shared, prefix, true);
  kl.big_grid = big_grid;
  kl.combine_reds = combine;
  kl.instrument = instrument;
  kl.lower_body();

  dump_stage("lowered", *mod);
  const auto ranges_start = std::chrono::steady_clock::now();
  make_ranges(*mod, step, *layout, kl.specialize);
  dump_stage("ranges", *mod);
  if (compile_times_wanted())
    report_compile_time(kf.name, "range functions", ms_since(ranges_start));
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*mod, &os)) throw LowerError{kf.line, 1, "internal error: invalid IR for '" + kf.name + "': " + os.str().substr(0, 400)};
  return mod;
}

std::unique_ptr<llvm::Module> lower_functions(const Module& m, const std::vector<int>& funcs, const std::string& prefix,
                                              llvm::LLVMContext& ctx) {
  auto mod = std::make_unique<llvm::Module>(prefix, ctx);
  std::vector<int> order;
  std::set<int> seen;
  for (int fi : funcs) collect_callees(m, fi, order, seen);
  std::map<std::string, uint32_t> shared;  // module-scope shared variables, laid out as in every kernel
  uint64_t off = 0;
  place_module_shared(m, pointer_callees(m), shared, &off);
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  for (int fi : order) {
    const Function& f = m.funcs[static_cast<size_t>(fi)];
    if (!f.has_body) {
      if (is_runtime_extern(f.name)) continue;
      throw LowerError{f.line, 1, "the function '" + f.name + "' is declared but not defined"};
    }
    std::vector<llvm::Type*> args = {ptr, i32};
    for (size_t i = 0; i < f.rets.size() + f.params.size(); ++i) args.push_back(ptr);
    llvm::Function::Create(llvm::FunctionType::get(i32, args, false), llvm::Function::ExternalLinkage,
                           prefix + "_f_" + f.name, *mod);
  }
  KernelLayout unused;
  for (int fi : order) {
    const Function& f = m.funcs[static_cast<size_t>(fi)];
    if (!f.has_body) continue;
    for (const Instr& in : f.body)
      if (is_cut_instruction(in))
        throw LowerError{in.line, in.col, "'" + op_name(in.op) + "' inside the function '" + f.name + "', called through a pointer"};
    FnLowering fl(m, f, *mod, mod->getFunction(prefix + "_f_" + f.name), unused, shared, prefix, false);
    fl.lower_body();
  }
  return mod;
}

FnLowering::FnLowering(const Module& m_, const Function& f_, llvm::Module& mod_, llvm::Function* fn_,
                       KernelLayout& layout_, const std::map<std::string, uint32_t>& shared_, const std::string& prefix_,
                       bool is_kernel_)
    : m(m_), f(f_), mod(mod_), ctx(mod_.getContext()), fn(fn_), b(mod_.getContext()), layout(layout_),
      shared_offsets(shared_), prefix(prefix_), is_kernel(is_kernel_) {
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  env_ty = llvm::StructType::getTypeByName(ctx, "cucpu.env");
  if (!env_ty) {
    llvm::Type* i32 = b.getInt32Ty();
    llvm::Type* a3 = llvm::ArrayType::get(i32, 3);
    env_ty = llvm::StructType::create(ctx, {a3, a3, a3, i32, ptr, ptr, ptr, i32, i32, i32, i32, ptr, b.getInt64Ty(), ptr, ptr}, "cucpu.env");
  }
}

void FnLowering::fail(const std::string& why) const {
  throw LowerError{cur ? cur->line : f.line, cur ? cur->col : 1, why};
}

Value* FnLowering::operand_value(const Instr& in, size_t i, Ty as) {
  if (i >= in.args.size()) fail("missing operand");
  return read(in.args[i], as);
}

void FnLowering::unsupported() const {
  std::string name = op_name(cur->op);
  for (auto& x : cur->mods) name += "." + x;
  // What the opcode's row says of the forms cucpu runs.
  std::string why;
  switch (op_info(cur->op).family) {
    case Family::kMissing: why = " (cucpu compiles no form of '" + op_name(cur->op) + "': README lists these)"; break;
    case Family::kTexture:
      why = " (cucpu runs the bindless texture and surface forms: tex, tld4, txq on texture objects; "
            "suld.b, sust.b, suq on surface objects)";
      break;
    default: break;
  }
  fail("unsupported instruction '" + name + "'" + why);
}

llvm::Type* FnLowering::llty(Ty t) const {
  switch (t) {
    case Ty::kPred: return llvm::Type::getInt1Ty(ctx);
    case Ty::kF32: return llvm::Type::getFloatTy(ctx);
    case Ty::kF64: return llvm::Type::getDoubleTy(ctx);
    case Ty::kNone: return llvm::Type::getInt32Ty(ctx);
    default: return llvm::Type::getIntNTy(ctx, static_cast<unsigned>(type_bits(t)));
  }
}

void FnLowering::check_access(Value* p, uint32_t bytes, uint32_t flags, Space space) {
  if (!instrument) return;
  if (space != Space::kGlobal && space != Space::kGeneric && space != Space::kShared) return;
  if (space == Space::kGeneric) flags |= kAccessGeneric;
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i32 = b.getInt32Ty();
  auto* ty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, i32, i32, i32, i32}, false);
  b.CreateCall(runtime(space == Space::kShared ? "cucpu_rt_check_shared" : "cucpu_rt_check_access", ty),
               {env, p, b.getInt32(bytes), b.getInt32(flags), b.getInt32(static_cast<uint32_t>(cur ? cur->line : 0)), tid});
}

llvm::Function* FnLowering::runtime(const char* name, llvm::FunctionType* ty) {
  llvm::Function* f2 = mod.getFunction(name);
  if (!f2) f2 = llvm::Function::Create(ty, llvm::Function::ExternalLinkage, name, mod);
  return f2;
}

Value* FnLowering::intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type*> tys, llvm::ArrayRef<Value*> args) {
  llvm::Function* decl = llvm::Intrinsic::getDeclaration(&mod, id, tys);
  return b.CreateCall(decl, args);
}

Value* FnLowering::env_field(int index, llvm::Type* ty) {
  auto* ld = b.CreateLoad(ty, b.CreateStructGEP(env_ty, env, static_cast<unsigned>(index)));
  ld->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx, {}));
  return ld;
}

Value* FnLowering::shared_base() {
  // The runner aligns the arena to 16 bytes.
  auto* ld = llvm::cast<llvm::LoadInst>(env_field(4, llvm::PointerType::get(ctx, 0)));
  ld->setMetadata(llvm::LLVMContext::MD_align, llvm::MDNode::get(ctx, {llvm::ConstantAsMetadata::get(b.getInt64(16))}));
  return ld;
}

// Converts `v` to `to`: same-width reinterpretation, integer resizing
// (sign-extending when `sign`), predicates to and from integers.
static Value* convert_bits(llvm::IRBuilder<>& b, Value* v, llvm::Type* to, bool sign) {
  llvm::Type* from = v->getType();
  if (from == to) return v;
  auto& ctx = b.getContext();
  if (to->isIntegerTy(1)) {
    if (from->isFloatingPointTy()) v = b.CreateBitCast(v, llvm::Type::getIntNTy(ctx, from->getPrimitiveSizeInBits()));
    return b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (from->isFloatingPointTy()) {
    v = b.CreateBitCast(v, llvm::Type::getIntNTy(ctx, from->getPrimitiveSizeInBits()));
    from = v->getType();
  }
  const unsigned fw = from->getPrimitiveSizeInBits(), tw = to->getPrimitiveSizeInBits();
  llvm::Type* ti = to->isFloatingPointTy() ? llvm::Type::getIntNTy(ctx, tw) : to;
  if (fw != tw) {
    if (fw > tw) v = b.CreateTrunc(v, ti);
    else if (sign && fw > 1) v = b.CreateSExt(v, ti);
    else v = b.CreateZExt(v, ti);
  }
  if (to->isFloatingPointTy()) v = b.CreateBitCast(v, to);
  return v;
}

Value* FnLowering::read(const Operand& o, Ty as) {
  llvm::Type* t = llty(as);
  switch (o.kind) {
    case Operand::Kind::kReg: {
      if (o.sel >= 0) fail("operand selectors (.b0 ... .h1) belong to video instructions");
      llvm::AllocaInst* a = regs[static_cast<size_t>(o.reg)];
      Value* v;
      if (o.elem >= 0) {
        // An element of a vector register: its bits of the register's.
        const unsigned w = static_cast<unsigned>(type_bits(f.regs[static_cast<size_t>(o.reg)].ty));
        v = b.CreateLoad(a->getAllocatedType(), a);
        v = b.CreateTrunc(b.CreateLShr(v, static_cast<uint64_t>(o.elem) * w), b.getIntNTy(w));
      } else if (const int k = cuts.any ? cuts.remat.konst[static_cast<size_t>(o.reg)] : -1; k >= 0) {
        // Its only write is a mov of an immediate: the value that mov stores
        // (so that the operands of a cut are seen to be known).
        const Instr& mv = f.body[static_cast<size_t>(k)];
        const Ty mt = type_suffix(mv);
        v = convert_bits(b, read(mv.args[1], mt), a->getAllocatedType(), is_signed(mt));
      } else {
        v = b.CreateLoad(a->getAllocatedType(), a);
      }
      v = convert_bits(b, v, t, is_signed(as));
      if (o.neg) {
        if (!t->isIntegerTy(1)) fail("'!' applies to predicates only");
        v = b.CreateNot(v);
      }
      return v;
    }
    case Operand::Kind::kImm:
      if (t->isFloatingPointTy()) return llvm::ConstantFP::get(t, static_cast<double>(o.imm));
      return llvm::ConstantInt::get(t, static_cast<uint64_t>(o.imm), true);
    case Operand::Kind::kFloat: {
      if (o.fwidth == 0) {
        if (t->isFloatingPointTy()) return llvm::ConstantFP::get(t, o.fvalue);
        if (t->getPrimitiveSizeInBits() == 32) {
          float fv = static_cast<float>(o.fvalue);
          uint32_t bits;
          std::memcpy(&bits, &fv, 4);
          return b.getInt32(bits);
        }
        uint64_t bits;
        std::memcpy(&bits, &o.fvalue, 8);
        return llvm::ConstantInt::get(t, bits);
      }
      if (o.fwidth == 32) {
        const uint32_t bits = static_cast<uint32_t>(o.fbits);
        float fv;
        std::memcpy(&fv, &bits, 4);
        if (t->isDoubleTy()) return llvm::ConstantFP::get(t, static_cast<double>(fv));
        if (t->isFloatTy()) return llvm::ConstantFP::get(t, fv);
        return llvm::ConstantInt::get(t, bits);
      }
      double dv;
      std::memcpy(&dv, &o.fbits, 8);
      if (t->isFloatTy()) return llvm::ConstantFP::get(t, static_cast<float>(dv));
      if (t->isDoubleTy()) return llvm::ConstantFP::get(t, dv);
      return llvm::ConstantInt::get(t, o.fbits);
    }
    case Operand::Kind::kSym: {
      Space s;
      Value* a = symbol_address(o.sym, &s);
      return convert_bits(b, a, t, false);
    }
    case Operand::Kind::kSpecial: return convert_bits(b, special(o), t, false);
    case Operand::Kind::kVec: {
      // {a, b}: packed into one value, first element in the low bits.
      const unsigned total = t->getPrimitiveSizeInBits();
      const unsigned n = static_cast<unsigned>(o.elems.size());
      if (n == 0 || total % n) fail("malformed vector operand");
      const unsigned ew = total / n;
      llvm::Type* it = llvm::Type::getIntNTy(ctx, total);
      Value* acc = llvm::ConstantInt::get(it, 0);
      for (unsigned i = 0; i < n; ++i) {
        Value* e = read(o.elems[i], ew == 8 ? Ty::kB8 : ew == 16 ? Ty::kB16 : ew == 32 ? Ty::kB32 : Ty::kB64);
        acc = b.CreateOr(acc, b.CreateShl(b.CreateZExt(e, it), i * ew));
      }
      return convert_bits(b, acc, t, false);
    }
    case Operand::Kind::kAddr: fail("an address where a value is expected");
    default: fail("malformed operand");
  }
}

void FnLowering::write(const Operand& o, Value* v, Ty as) {
  if (o.kind == Operand::Kind::kSink) return;
  if (o.kind == Operand::Kind::kVec) {
    // {a, b} = v: split, first element from the low bits.
    const unsigned total = v->getType()->getPrimitiveSizeInBits();
    const unsigned n = static_cast<unsigned>(o.elems.size());
    if (n == 0 || total % n) fail("malformed vector operand");
    const unsigned ew = total / n;
    Value* iv = convert_bits(b, v, llvm::Type::getIntNTy(ctx, total), false);
    for (unsigned i = 0; i < n; ++i) {
      Value* e = b.CreateTrunc(b.CreateLShr(iv, i * ew), llvm::Type::getIntNTy(ctx, ew));
      write(o.elems[i], e, ew == 8 ? Ty::kB8 : ew == 16 ? Ty::kB16 : ew == 32 ? Ty::kB32 : Ty::kB64);
    }
    return;
  }
  if (o.kind != Operand::Kind::kReg) fail("the destination must be a register");
  if (o.sel >= 0) fail("operand selectors (.b0 ... .h1) belong to video instructions");
  llvm::AllocaInst* a = regs[static_cast<size_t>(o.reg)];
  if (o.elem >= 0) {
    // An element of a vector register: the others keep their bits.
    const unsigned w = static_cast<unsigned>(type_bits(f.regs[static_cast<size_t>(o.reg)].ty));
    llvm::Type* wide = a->getAllocatedType();
    const unsigned shift = static_cast<unsigned>(o.elem) * w;
    Value* e = b.CreateShl(b.CreateZExt(convert_bits(b, v, b.getIntNTy(w), is_signed(as)), wide), shift);
    const llvm::APInt keep = ~llvm::APInt::getBitsSet(wide->getIntegerBitWidth(), shift, shift + w);
    b.CreateStore(b.CreateOr(b.CreateAnd(b.CreateLoad(wide, a), llvm::ConstantInt::get(wide, keep)), e), a);
    return;
  }
  b.CreateStore(convert_bits(b, v, a->getAllocatedType(), is_signed(as)), a);
}

void FnLowering::write_pair(const Operand& d, Value* p) {
  if (d.pair < 0) return;
  Operand q;
  q.kind = Operand::Kind::kReg;
  q.reg = d.pair;
  write(q, p, Ty::kPred);
}

Value* FnLowering::guard_of(const Instr& in) {
  Operand g;
  g.kind = Operand::Kind::kReg;
  g.reg = in.guard;
  g.neg = in.guard_neg;
  return read(g, Ty::kPred);
}

Value* FnLowering::symbol_address(const std::string& sym, Space* space) {
  llvm::Type* i64 = b.getInt64Ty();
  if (auto it = entry_params.find(sym); it != entry_params.end()) {
    *space = Space::kParam;
    auto* p = llvm::cast<llvm::LoadInst>(env_field(5, llvm::PointerType::get(ctx, 0)));
    // The buffer holds every parameter: loads from it may be hoisted anywhere.
    if (is_kernel && !entry_params.empty()) {
      llvm::Metadata* n = llvm::ConstantAsMetadata::get(b.getInt64(param_bytes ? param_bytes : 1));
      p->setMetadata(llvm::LLVMContext::MD_dereferenceable, llvm::MDNode::get(ctx, {n}));
      p->setMetadata(llvm::LLVMContext::MD_align, llvm::MDNode::get(ctx, {llvm::ConstantAsMetadata::get(b.getInt64(8))}));
    }
    return b.CreatePtrToInt(b.CreateConstGEP1_64(b.getInt8Ty(), p, it->second), i64);
  }
  if (auto it = param_ptrs.find(sym); it != param_ptrs.end()) {
    *space = Space::kParam;
    return b.CreatePtrToInt(it->second, i64);
  }
  if (auto it = local_vars.find(sym); it != local_vars.end()) {
    *space = Space::kLocal;
    return b.CreatePtrToInt(it->second, i64);
  }
  if (auto it = shared_offsets.find(f.name + "/" + sym); it != shared_offsets.end()) {
    *space = Space::kShared;
    return b.getInt64(it->second);
  }
  if (auto it = m.var_index.find(sym); it != m.var_index.end()) {
    const VarDecl& v = m.vars[static_cast<size_t>(it->second)];
    if (v.space == Space::kShared) {
      *space = Space::kShared;
      if (auto so = shared_offsets.find(sym); so != shared_offsets.end()) return b.getInt64(so->second);
      return b.CreateZExt(env_field(7, b.getInt32Ty()), i64);  // dynamic shared memory
    }
    *space = v.space;
    const int slot = m.global_slot[static_cast<size_t>(it->second)];
    if (slot < 0) fail("the module variable '" + sym + "' has no storage the kernel can address");
    Value* table = env_field(6, llvm::PointerType::get(ctx, 0));
    auto* ld = b.CreateLoad(i64, b.CreateConstGEP1_64(i64, table, static_cast<uint64_t>(slot)));
    ld->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx, {}));
    return ld;
  }
  for (const VarDecl& v : f.vars)
    if (v.name == sym && v.space == Space::kShared) {
      *space = Space::kShared;
      return b.CreateZExt(env_field(7, b.getInt32Ty()), i64);
    }
  if (llvm::Function* callee = mod.getFunction(prefix + "_f_" + sym)) {
    *space = Space::kGeneric;
    return b.CreatePtrToInt(callee, i64);
  }
  if (auto it = m.func_index.find(sym); it != m.func_index.end() && m.funcs[static_cast<size_t>(it->second)].is_entry) {
    // A kernel's address, for the device runtime (dynamic parallelism).
    *space = Space::kGeneric;
    return b.getInt64(kEntryAddressTag | m.entry_ordinal(it->second));
  }
  fail("unknown symbol '" + sym + "'");
}

Value* FnLowering::address(const Operand& o, Space space) {
  if (o.kind != Operand::Kind::kAddr && o.kind != Operand::Kind::kSym && o.kind != Operand::Kind::kReg)
    fail("expected an address");
  llvm::Type* i64 = b.getInt64Ty();
  Value* a;
  Space sym_space = space;
  if (o.kind == Operand::Kind::kReg || o.reg >= 0) {
    Operand r;
    r.kind = Operand::Kind::kReg;
    r.reg = o.reg;
    const int bits = type_bits(f.regs[static_cast<size_t>(o.reg)].ty);
    a = read(r, bits == 32 ? Ty::kU32 : Ty::kU64);
    // A 32-bit address wraps: [%r+imm] is (r + imm) mod 2^32, and a
    // register may hold a "negative" offset that the immediate brings back
    // into the window. Shared and local windows are far below 2^31, so
    // sign-extending gives every in-window address and keeps the sum in
    // 64 bits, where accesses at different immediates share one base.
    if (bits == 32) a = space == Space::kShared || space == Space::kLocal ? b.CreateSExt(a, i64) : b.CreateZExt(a, i64);
  } else if (!o.sym.empty()) {
    a = symbol_address(o.sym, &sym_space);
  } else {
    a = b.getInt64(0);
  }
  if (o.kind == Operand::Kind::kAddr && o.imm) a = b.CreateAdd(a, b.getInt64(static_cast<uint64_t>(o.imm)));
  if (space == Space::kShared || (space == Space::kGeneric && sym_space == Space::kShared && !o.sym.empty()))
    return b.CreateGEP(b.getInt8Ty(), shared_base(), a);
  return b.CreateIntToPtr(a, llvm::PointerType::get(ctx, 0));
}

void FnLowering::emit_fault(uint32_t kind, Value* address) {
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  auto* ty = llvm::FunctionType::get(b.getVoidTy(), {ptr, b.getInt32Ty(), b.getInt64Ty()}, false);
  llvm::Function* rt = runtime("cucpu_rt_fault", ty);
  rt->setDoesNotReturn();
  Value* a = address ? (address->getType()->isPointerTy() ? b.CreatePtrToInt(address, b.getInt64Ty()) : address)
                     : b.getInt64(0);
  b.CreateStore(tid, b.CreateStructGEP(env_ty, env, 10));
  b.CreateCall(rt, {env, b.getInt32(kind), a});
  b.CreateUnreachable();
}

// What decides whether `ptr` is aligned to `bytes`: an offset from an
// aligned base (shared memory: the optimizer then sees the usual offsets
// are aligned), else the address itself, as the integer it was computed
// as where it was one (the optimizer then sees that adding a multiple of
// `bytes` leaves the low bits as they were: one test for a loop's accesses).
Value* FnLowering::alignment_operand(Value* ptr, uint32_t bytes) {
  if (auto* cast = llvm::dyn_cast<llvm::IntToPtrInst>(ptr)) return cast->getOperand(0);
  if (auto* g = llvm::dyn_cast<llvm::GetElementPtrInst>(ptr); g && g->getNumIndices() == 1 &&
                                                             g->getSourceElementType()->isIntegerTy(8))
    if (auto* base = llvm::dyn_cast<llvm::LoadInst>(g->getPointerOperand()))
      if (llvm::MDNode* md = base->getMetadata(llvm::LLVMContext::MD_align))
        if (llvm::mdconst::extract<llvm::ConstantInt>(md->getOperand(0))->getZExtValue() >= bytes)
          return b.CreateZExtOrTrunc(g->getOperand(1), b.getInt64Ty());
  return b.CreatePtrToInt(ptr, b.getInt64Ty());
}

void FnLowering::check_alignment(Value* ptr, uint32_t bytes) {
  if (bytes <= 1) return;
  Value* a = alignment_operand(ptr, bytes);
  Value* bad = b.CreateICmpNE(b.CreateAnd(a, b.getInt64(bytes - 1)), b.getInt64(0));
  auto* fault_bb = llvm::BasicBlock::Create(ctx, "misaligned", fn);
  auto* ok_bb = llvm::BasicBlock::Create(ctx, "aligned", fn);
  auto* br = b.CreateCondBr(bad, fault_bb, ok_bb);
  br->setMetadata(llvm::LLVMContext::MD_prof, llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 20));
  b.SetInsertPoint(fault_bb);
  emit_fault(static_cast<uint32_t>(FaultKind::kMisalignedAddress), a);
  b.SetInsertPoint(ok_bb);
}

void FnLowering::note_alignment(Value* ptr, uint32_t bytes) {
  if (bytes <= 1) return;
  if (!misaligned) {
    llvm::IRBuilder<> eb(entry_block, entry_block->begin());
    misaligned = eb.CreateAlloca(b.getInt8Ty(), nullptr, "cucpu.misaligned");
    eb.CreateStore(b.getInt8(0), misaligned);
  }
  // Plain loads and stores go on (x86 does not fault on them): the low
  // bits of their addresses are or-ed together and reported, as a fault
  // without its address, when the thread next stops. An or over the
  // threads' loop widens to one vector or, and for consecutive accesses
  // from one base the optimizer sees it is the base's alone. (`cucpu
  // check` reports each misaligned access with its address and line.)
  // The low bits alone, in a byte: an i8 or keeps the widened loop's vectors as wide as its floats'.
  Value* a = alignment_operand(ptr, bytes);
  Value* cur = b.CreateLoad(b.getInt8Ty(), misaligned);
  b.CreateStore(b.CreateOr(cur, b.CreateTrunc(b.CreateAnd(a, b.getInt64(bytes - 1)), b.getInt8Ty())), misaligned);
}

void FnLowering::report_misalignment() {
  if (!misaligned) return;
  Value* cur = b.CreateLoad(b.getInt8Ty(), misaligned);
  if (is_kernel) {
    // Kept for the range function, which reports it after its loop (the
    // loop then has no exit a vectorizer must keep).
    Value* slot = fn->getArg(7);
    b.CreateStore(b.CreateOr(b.CreateLoad(b.getInt8Ty(), slot), cur), slot);
    return;
  }
  auto* fault_bb = llvm::BasicBlock::Create(ctx, "misaligned", fn);
  auto* ok_bb = llvm::BasicBlock::Create(ctx, "aligned", fn);
  auto* br = b.CreateCondBr(b.CreateICmpNE(cur, b.getInt8(0)), fault_bb, ok_bb);
  br->setMetadata(llvm::LLVMContext::MD_prof, llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 20));
  b.SetInsertPoint(fault_bb);
  emit_fault(static_cast<uint32_t>(FaultKind::kMisalignedAddress), b.getInt64(0));  // the address is not kept
  b.SetInsertPoint(ok_bb);
}

Space FnLowering::space_of(const Instr& in) const {
  for (auto& x : in.mods) {
    if (x == "global") return Space::kGlobal;
    if (x == "shared" || x.rfind("shared::", 0) == 0) return Space::kShared;
    if (x == "local") return Space::kLocal;
    if (x == "const") return Space::kConst;
    if (x == "param") return Space::kParam;
  }
  return Space::kGeneric;
}

Ty FnLowering::type_suffix(const Instr& in, int nth) const {
  int k = 0;
  for (auto& x : in.mods) {
    Ty t = type_from_name(x);
    if (t != Ty::kNone && k++ == nth) return t;
  }
  return Ty::kNone;
}

int FnLowering::type_count(const Instr& in) const {
  int k = 0;
  for (auto& x : in.mods)
    if (type_from_name(x) != Ty::kNone) ++k;
  return k;
}

}  // namespace cucpu::ptx
