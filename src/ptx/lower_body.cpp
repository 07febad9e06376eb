// Lowering one function body (FnLowering::lower_body) in its stages: the
// arguments and registers, a kernel's cuts, the frame's layout, the
// instructions, and the alias facts on their accesses.
#include <algorithm>

#include <llvm/IR/MDBuilder.h>

#include "ptx/lower.h"

namespace cucpu::ptx {

using llvm::Value;

// One function body, in stages: its arguments and registers, where a
// kernel is cut, the frame's layout, the instructions, then the alias
// facts on what they access.
void FnLowering::lower_body() {
  bind_arguments();
  if (is_kernel) cuts = plan_cuts(f, entry_params);
  else cuts.is_cut.assign(f.body.size(), false);
  lay_out_frame();
  emit_instructions();
  tag_accesses();
}

// The entry block: the registers as allocas, and the parameters.
void FnLowering::bind_arguments() {
  entry_block = llvm::BasicBlock::Create(ctx, "entry", fn);
  b.SetInsertPoint(entry_block);
  size_t arg = 0;
  if (is_kernel) {
    env = fn->getArg(1);
    tid = fn->getArg(2);
    for (unsigned k = 0; k < 3; ++k) tid_xyz[k] = fn->getArg(3 + k);
    arg = 7;
  } else {
    env = fn->getArg(0);
    tid = fn->getArg(1);
    arg = 2;
  }
  for (const RegDecl& r : f.regs) {
    llvm::Type* t = r.ty == Ty::kPred ? b.getInt1Ty()
                    : r.ty == Ty::kF32 ? b.getFloatTy()
                    : r.ty == Ty::kF64 ? b.getDoubleTy()
                                       : static_cast<llvm::Type*>(b.getIntNTy(static_cast<unsigned>(type_bits(r.ty) * r.vec)));
    llvm::AllocaInst* a = b.CreateAlloca(t, nullptr, r.name);
    b.CreateStore(llvm::Constant::getNullValue(t), a);
    regs.push_back(a);
  }
  // Parameters.
  if (is_kernel) {
    std::vector<ParamDesc> pd;
    param_bytes = layout_params(f, &pd);
    for (const ParamDesc& p : pd) entry_params[p.name] = p.offset;
  } else {
    auto bind = [&](const ParamDecl& p, Value* v) {
      if (p.space == Space::kParam) {
        param_ptrs[p.name] = v;
        return;
      }
      // .reg parameter: a register, initialised from the caller's value.
      for (size_t r = 0; r < f.regs.size(); ++r)
        if (f.regs[r].name == p.name) b.CreateStore(b.CreateLoad(regs[r]->getAllocatedType(), v), regs[r]);
    };
    for (const ParamDecl& p : f.rets) bind(p, fn->getArg(static_cast<unsigned>(arg++)));
    for (const ParamDecl& p : f.params) bind(p, fn->getArg(static_cast<unsigned>(arg++)));
  }
  reg_mentions = register_mentions(f);
}

// The frame (abi.h): a row for each register saved at a cut, the local
// area for .local variables that live across cuts (others are allocas),
// and a TBAA type per row; the kernel's layout.
void FnLowering::lay_out_frame() {
  uint32_t units = kFrameHeaderUnits;
  reg_unit.assign(f.regs.size(), 0);
  if (cuts.any) {
    frame = fn->getArg(0);
    pitch = fn->getArg(8);
    std::vector<bool> back_cuts = cuts.is_yield;
    for (size_t i = 0; i < cuts.is_round.size(); ++i)
      if (cuts.is_round[i]) back_cuts[i] = true;
    live_across = cut_liveness(f, cuts.is_cut, back_cuts);
    // A loop per resume point when the regions overlap little (the code
    // compiled then stays within 1.5 times the kernel's; twice, when round
    // cuts alone make the overlap: a loop's trip is in its first region too).
    bool rounds_only = true;
    for (size_t i = 0; i < f.body.size(); ++i) rounds_only = rounds_only && (!cuts.is_cut[i] || cuts.is_round[i]);
    specialize = region_sizes(f, cuts.is_cut) <= f.body.size() * (rounds_only ? 2 : 1.5) + 16;
    for (auto& set : live_across)
      for (int r : set)
        if (!reg_unit[static_cast<size_t>(r)] && cuts.remat.def[static_cast<size_t>(r)] < 0) {
          const int bits = type_bits(f.regs[static_cast<size_t>(r)].ty) * f.regs[static_cast<size_t>(r)].vec;
          const uint32_t elem = bits > 64 ? 16 : bits > 32 ? 8 : 4;
          units = (units + elem / 4 - 1) / (elem / 4) * (elem / 4);
          reg_unit[static_cast<size_t>(r)] = units;
          units += elem / 4;
        }
  } else {
    live_across.assign(f.body.size(), {});
  }
  uint64_t local_total = 0;
  uint64_t local_off = 0;  // in the frame's local area
  std::vector<std::pair<std::string, uint64_t>> in_frame;  // .local variables placed there
  uint64_t local_align = 16;                                // at most 64: the local area's alignment
  for (const VarDecl& v : f.vars) {
    if (v.space == Space::kShared) continue;
    const uint64_t a = v.align ? v.align : 1;
    if (v.size > (uint64_t{1} << 24)) fail("function-scope variable '" + v.name + "' is too large");
    if (v.space == Space::kLocal) local_total = (local_total + a - 1) / a * a + v.size;
    if (v.space == Space::kLocal && cuts.any) {
      local_align = std::max<uint64_t>(local_align, std::min<uint64_t>(a, 64));
      local_off = (local_off + a - 1) / a * a;
      in_frame.push_back({v.name, local_off});
      local_off += v.size;
    } else {
      auto* al = b.CreateAlloca(llvm::ArrayType::get(b.getInt8Ty(), v.size ? v.size : 1), nullptr, v.name);
      al->setAlignment(llvm::Align(a < 16 ? 16 : a));
      local_vars[v.name] = al;
    }
  }
  if (cuts.any) {
    // The local area: thread t's part at frames + units * pitch + t * stride.
    const uint64_t stride = (local_off + local_align - 1) / local_align * local_align;
    if (units > (1u << 20) || stride > (1u << 24)) fail("too many registers live across cuts");
    Value* base = b.CreateGEP(b.getInt8Ty(), frame, b.CreateMul(pitch, b.getInt64(units)));
    Value* mine = b.CreateGEP(b.getInt8Ty(), base, b.CreateMul(b.CreateZExt(tid, b.getInt64Ty()), b.getInt64(stride)));
    for (auto& [name, off] : in_frame) local_vars[name] = b.CreateConstGEP1_64(b.getInt8Ty(), mine, off);
    // One TBAA type per frame row (the exchange slots, the saved registers)
    // and one for the kernel's own accesses, siblings under one root: the
    // optimizer takes accesses of two of them never to overlap. (Alias
    // scopes would say the same with lists as long as the rows, one per
    // row, which the inliner copies at every inlined step.)
    llvm::MDBuilder mdb(ctx);
    llvm::MDNode* root = mdb.createTBAARoot("cucpu.frame");
    auto tag = [&](const std::string& name) {
      llvm::MDNode* type = mdb.createTBAAScalarTypeNode(name, root);
      return mdb.createTBAAStructTagNode(type, type, 0);
    };
    auto add_row = [&](uint32_t unit) {
      if (!row_tags.count(unit)) row_tags[unit] = tag("row " + std::to_string(unit));
    };
    kernel_tag = tag("kernel");
    for (uint32_t u = 0; u < kFrameHeaderUnits; u += 2) add_row(u);
    for (uint32_t u : reg_unit)
      if (u) add_row(u);
    if (is_kernel) {
      layout.frame_units = units;
      layout.local_stride = static_cast<uint32_t>(stride);
    }
  }
  if (is_kernel) {
    layout.frame_bytes = cuts.any ? units * 4 + layout.local_stride : 0;
    layout.local_bytes = static_cast<uint32_t>(local_total);
    layout.num_regs = static_cast<int>(f.regs.size() < 255 ? f.regs.size() : 255);
  }
}

// The instructions in order: a block per label, the resume switch of a
// kernel with cuts, guards as branches.
void FnLowering::emit_instructions() {
  label_blocks.assign(f.body.size() + 1, nullptr);
  for (auto& [name, idx] : f.labels) {
    if (static_cast<size_t>(idx) > f.body.size()) fail("label out of range");
    if (!label_blocks[static_cast<size_t>(idx)])
      label_blocks[static_cast<size_t>(idx)] = llvm::BasicBlock::Create(ctx, name, fn);
  }
  auto* start = llvm::BasicBlock::Create(ctx, "start", fn);
  if (cuts.any) resume_switch = b.CreateSwitch(fn->getArg(6), start);
  else b.CreateBr(start);
  b.SetInsertPoint(start);

  for (size_t i = 0; i < f.body.size(); ++i) {
    const Instr& in = f.body[i];
    cur = &in;
    if (llvm::BasicBlock* lb = label_blocks[i]) {
      if (!b.GetInsertBlock()->getTerminator()) {
        auto head = cuts.round_heads.find(i);
        b.CreateBr(head != cuts.round_heads.end() ? round_cut(head->second) : lb);
      }
      b.SetInsertPoint(lb);
    }
    if (in.op == Op::kBra) {
      lower_control(in, i);
      continue;
    }
    llvm::BasicBlock* cont = nullptr;
    if (in.guard >= 0) {
      Value* c = guard_of(in);
      auto* then = llvm::BasicBlock::Create(ctx, "guarded", fn);
      cont = llvm::BasicBlock::Create(ctx, "cont", fn);
      b.CreateCondBr(c, then, cont);
      b.SetInsertPoint(then);
    }
    lower_instr(in, i);
    if (cont) {
      if (!b.GetInsertBlock()->getTerminator()) b.CreateBr(cont);
      b.SetInsertPoint(cont);
    }
  }
  cur = nullptr;
  if (llvm::BasicBlock* lb = label_blocks[f.body.size()]) {
    if (!b.GetInsertBlock()->getTerminator()) b.CreateBr(lb);
    b.SetInsertPoint(lb);
  }
  if (!b.GetInsertBlock()->getTerminator()) {
    Instr fake;
    fake.op = Op::kRet;
    cur = &fake;
    lower_control(fake, f.body.size());
    cur = nullptr;
  }
  // Blocks opened after a terminator that nothing reaches.
  for (llvm::BasicBlock& bb : *fn)
    if (!bb.getTerminator()) {
      b.SetInsertPoint(&bb);
      b.CreateUnreachable();
    }
}

// The kernel's own loads and stores (any space, the local area included)
// never touch the frame rows: they get the kernel's type, a sibling of
// every row's. And read-only loads get their scope.
void FnLowering::tag_accesses() {
  if (cuts.any) {
    for (llvm::BasicBlock& bb : *fn)
      for (llvm::Instruction& i : bb)
        if ((llvm::isa<llvm::LoadInst>(i) || llvm::isa<llvm::StoreInst>(i) || llvm::isa<llvm::AtomicRMWInst>(i) ||
             llvm::isa<llvm::AtomicCmpXchgInst>(i)) &&
            !i.getMetadata(llvm::LLVMContext::MD_tbaa))
          i.setMetadata(llvm::LLVMContext::MD_tbaa, kernel_tag);
  }
  scope_read_only_loads();
}

// `ld.global.nc` reads memory the program promises no one writes while the
// kernel runs (red_combine.h relies on the same promise). The loads get an
// alias scope of their own and every write of this function (stores,
// atomics, calls) says it does not touch it: the optimizer then needs no
// run-time overlap checks between them when it widens a loop over threads.
void FnLowering::scope_read_only_loads() {
  if (nc_loads.empty()) return;
  llvm::MDBuilder mdb(ctx);
  llvm::MDNode* domain = mdb.createAnonymousAliasScopeDomain("cucpu.nc");
  llvm::MDNode* scope = mdb.createAnonymousAliasScope(domain, "read-only global");
  llvm::MDNode* list = llvm::MDNode::get(ctx, {scope});
  for (llvm::Instruction* ld : nc_loads) ld->setMetadata(llvm::LLVMContext::MD_alias_scope, list);
  for (llvm::BasicBlock& bb : *fn)
    for (llvm::Instruction& i : bb)
      if (i.mayWriteToMemory()) i.setMetadata(llvm::LLVMContext::MD_noalias, list);
}

}  // namespace cucpu::ptx
