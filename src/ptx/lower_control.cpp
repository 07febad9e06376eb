// Control flow: branches, calls, returns, traps, the stop poll of back
// edges, and the liveness that decides what a cut saves.
#include <algorithm>

#include <llvm/IR/MDBuilder.h>

#include "ptx/lower.h"

#include "base/kernel_timeout.h"

namespace cucpu::ptx {

using llvm::Value;

uint32_t layout_params(const Function& f, std::vector<ParamDesc>* out) {
  uint64_t off = 0;
  for (const ParamDecl& p : f.params) {
    const uint64_t natural = p.size >= 8 ? 8 : (p.size ? p.size : 1);
    const uint64_t a = p.align ? p.align : natural;
    off = (off + a - 1) / a * a;
    if (out) out->push_back({p.name, static_cast<uint32_t>(off), static_cast<uint32_t>(p.size), static_cast<uint32_t>(a)});
    off += p.size;
  }
  return static_cast<uint32_t>(off);
}

void collect_regs(const Operand& o, std::vector<int>& out) {
  if (o.reg >= 0) out.push_back(o.reg);
  if (o.pair >= 0) out.push_back(o.pair);
  for (const Operand& e : o.elems) collect_regs(e, out);
}

std::vector<int> register_mentions(const Function& f) {
  std::vector<int> n(f.regs.size(), 0);
  for (const Instr& in : f.body) {
    std::vector<int> named;
    if (in.guard >= 0) named.push_back(in.guard);
    for (const Operand& o : in.args) collect_regs(o, named);
    std::sort(named.begin(), named.end());
    named.erase(std::unique(named.begin(), named.end()), named.end());
    for (int r : named) n[static_cast<size_t>(r)]++;
  }
  return n;
}

namespace {

bool ends_flow(const Instr& in) {
  return in.guard < 0 && op_has(in.op, kEndsFlow);
}

}  // namespace

int branch_target(const Function& f, const Instr& in) {
  if (in.op != Op::kBra || in.args.empty() || in.args[0].kind != Operand::Kind::kSym) return -1;
  auto it = f.labels.find(in.args[0].sym);
  return it == f.labels.end() ? -1 : it->second;
}

std::vector<std::vector<int>> successors(const Function& f) {
  const size_t n = f.body.size();
  std::vector<std::vector<int>> succ(n);
  for (size_t i = 0; i < n; ++i) {
    const Instr& in = f.body[i];
    if (!ends_flow(in) && i + 1 < n) succ[i].push_back(static_cast<int>(i + 1));
    if (const int t = branch_target(f, in); t >= 0 && static_cast<size_t>(t) < n) succ[i].push_back(t);
    if (in.op == Op::kBrx) {  // every label may be a target
      for (auto& [name, idx] : f.labels)
        if (static_cast<size_t>(idx) < n) succ[i].push_back(idx);
    }
  }
  return succ;
}

size_t region_sizes(const Function& f, const std::vector<bool>& is_cut) {
  const std::vector<std::vector<int>> succ = successors(f);
  const size_t n = f.body.size();
  size_t total = 0;
  std::vector<int> stack;
  std::vector<size_t> seen(n, 0);
  size_t mark = 0;
  for (size_t start = 0; start <= n; ++start) {
    if (start > 0 && !is_cut[start - 1]) continue;  // regions start at 0 and after each cut
    ++mark;
    if (start < n) stack.push_back(static_cast<int>(start));
    while (!stack.empty()) {
      const size_t i = static_cast<size_t>(stack.back());
      stack.pop_back();
      if (seen[i] == mark) continue;
      seen[i] = mark;
      ++total;
      if (is_cut[i]) continue;  // the region ends here
      for (int s : succ[i]) stack.push_back(s);
    }
  }
  return total;
}

std::vector<std::vector<int>> cut_liveness(const Function& f, const std::vector<bool>& is_cut,
                                           const std::vector<bool>& resumes_at_target) {
  const size_t n = f.body.size(), nr = f.regs.size(), words = (nr + 63) / 64;
  std::vector<std::vector<int>> uses(n), defs(n);
  const std::vector<std::vector<int>> succ = successors(f);
  for (size_t i = 0; i < n; ++i) {
    const Instr& in = f.body[i];
    if (in.guard >= 0) uses[i].push_back(in.guard);
    for (size_t k = 0; k < in.args.size(); ++k) {
      const Operand& o = in.args[k];
      if (k == 0 && (o.kind == Operand::Kind::kReg || o.kind == Operand::Kind::kVec) && op_has(in.op, kDest)) {
        // A guarded write may not happen, and an element's write keeps the
        // other elements: the old value stays live.
        collect_regs(o, in.guard < 0 && o.elem < 0 ? defs[i] : uses[i]);
        continue;
      }
      collect_regs(o, uses[i]);
    }
  }
  std::vector<uint64_t> live_in(n * words, 0);
  std::vector<uint64_t> tmp(words);
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t ii = n; ii-- > 0;) {
      std::fill(tmp.begin(), tmp.end(), 0);
      for (int s : succ[ii])
        for (size_t w = 0; w < words; ++w) tmp[w] |= live_in[static_cast<size_t>(s) * words + w];
      for (int d : defs[ii]) tmp[static_cast<size_t>(d) / 64] &= ~(uint64_t{1} << (d % 64));
      for (int u : uses[ii]) tmp[static_cast<size_t>(u) / 64] |= uint64_t{1} << (u % 64);
      uint64_t* cur = &live_in[ii * words];
      for (size_t w = 0; w < words; ++w)
        if (cur[w] != tmp[w]) {
          cur[w] = tmp[w];
          changed = true;
        }
    }
  }
  std::vector<std::vector<int>> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (is_cut[i] && i < resumes_at_target.size() && resumes_at_target[i]) {
      // A back edge resumes at the loop's start: what that needs.
      const size_t h = static_cast<size_t>(branch_target(f, f.body[i]));
      for (size_t r = 0; r < nr; ++r)
        if (live_in[h * words + r / 64] >> (r % 64) & 1) out[i].push_back(static_cast<int>(r));
      continue;
    }
    if (!is_cut[i] || i + 1 >= n) continue;
    // Live after the cut: what its successor needs, less what the cut itself writes.
    std::vector<uint64_t> after(live_in.begin() + static_cast<long>((i + 1) * words),
                                live_in.begin() + static_cast<long>((i + 2) * words));
    if (f.body[i].guard < 0)
      for (int d : defs[i]) after[static_cast<size_t>(d) / 64] &= ~(uint64_t{1} << (d % 64));
    for (size_t r = 0; r < nr; ++r)
      if (after[r / 64] >> (r % 64) & 1) out[i].push_back(static_cast<int>(r));
  }
  return out;
}

void FnLowering::lower_instr(const Instr& in, size_t i) {
  const Instr* saved = cur;
  cur = &in;
  if (!lower_by_family(in, i)) unsupported();
  cur = saved;
}

bool FnLowering::lower_by_family(const Instr& in, size_t i) {
  switch (op_info(in.op).family) {
    case Family::kArith: return lower_int(in) || lower_float(in) || lower_half(in);
    case Family::kConvert: return lower_convert(in);
    case Family::kMemory: return lower_memory(in);
    case Family::kAtomic: return lower_atomic(in);
    case Family::kControl: return lower_control(in, i);
    case Family::kCall: return lower_call(in);
    case Family::kCollective: return cuts.is_cut[i] && lower_cut(in, i);
    case Family::kMatrix: return lower_matrix(in, i);
    case Family::kVideo: return lower_video(in);
    case Family::kTexture: return lower_texture(in);
    case Family::kMisc: return (cuts.is_cut[i] && lower_cut(in, i)) || lower_misc(in);  // fences cut in kernels
    case Family::kMissing: return false;
  }
  return false;
}

// A back edge's poll of the launch's stop word (BlockEnv::stop): a block
// that goes on to `target` unless the word is set, which ends the block with
// a timeout fault. The load is volatile, so that no loop keeps it in a register.
llvm::BasicBlock* FnLowering::stop_poll(llvm::BasicBlock* target) {
  llvm::BasicBlock* const here = b.GetInsertBlock();
  auto* poll = llvm::BasicBlock::Create(ctx, "stop.poll", fn);
  auto* stop = llvm::BasicBlock::Create(ctx, "stop", fn);
  b.SetInsertPoint(poll);
  Value* word = env_field(13, llvm::PointerType::get(ctx, 0));
  auto* v = b.CreateLoad(b.getInt32Ty(), word);
  v->setVolatile(true);
  b.CreateCondBr(b.CreateICmpNE(v, b.getInt32(0)), stop, target, llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 20));
  b.SetInsertPoint(stop);
  emit_fault(static_cast<uint32_t>(FaultKind::kTimedOut), b.getInt64(cur ? cur->line : 0));  // Fault::address: the line
  b.SetInsertPoint(here);
  return poll;
}

llvm::BasicBlock* FnLowering::round_cut(size_t back) {
  llvm::BasicBlock*& cut = round_cuts[back];
  if (cut) return cut;
  llvm::IRBuilderBase::InsertPointGuard keep(b);
  const Instr* was = cur;
  cut = llvm::BasicBlock::Create(ctx, "round", fn);
  b.SetInsertPoint(cut);
  CutSite site;
  site.kind = CutKind::kRound;
  site.line = f.body[back].line;
  Value* ops[kExchangeInSlots] = {};
  emit_cut(site, back, ops);
  b.CreateBr(label_blocks[cuts.round_edges.at(back).head]);
  cur = was;
  return cut;
}

bool FnLowering::lower_control(const Instr& in, size_t index) {
  const Op op = in.op;
  if (op == Op::kBra) {
    if (in.args.size() != 1 || in.args[0].kind != Operand::Kind::kSym) fail("bra needs a label");
    auto it = f.labels.find(in.args[0].sym);
    if (it == f.labels.end()) fail("unknown label '" + in.args[0].sym + "'");
    llvm::BasicBlock* target = label_blocks[static_cast<size_t>(it->second)];
    auto round_head = cuts.round_heads.find(static_cast<size_t>(it->second));
    if (round_head != cuts.round_heads.end()) target = round_cut(round_head->second);  // the runner polls at cuts
    else if (static_cast<size_t>(it->second) <= index && kernel_timeout_ns() > 0) target = stop_poll(target);
    auto* next = llvm::BasicBlock::Create(ctx, "fall", fn);
    llvm::BasicBlock* taken = target;
    const bool yields = index < cuts.is_yield.size() && cuts.is_yield[index];
    if (yields) taken = llvm::BasicBlock::Create(ctx, "spin", fn);
    if (in.guard >= 0) {
      b.CreateCondBr(guard_of(in), taken, next);
    } else {
      b.CreateBr(taken);
    }
    if (yields) {
      // Around a spin loop: every kSpinsPerYield-th time round, the thread
      // yields, then goes on at the loop's start. The count lives in the
      // step's own frame, from zero at each step: a loop that goes round
      // for its own work (a queue taken by atomics) seldom pays a cut, a
      // thread that waits runs that many tests before it lets the others run.
      constexpr uint32_t kSpinsPerYield = 64;
      if (!spin_count) {
        llvm::IRBuilder<> eb(entry_block, entry_block->begin());
        spin_count = eb.CreateAlloca(b.getInt32Ty(), nullptr, "cucpu.spins");
        eb.CreateStore(b.getInt32(0), spin_count);
      }
      b.SetInsertPoint(taken);
      Value* n = b.CreateAdd(b.CreateLoad(b.getInt32Ty(), spin_count), b.getInt32(1));
      b.CreateStore(n, spin_count);
      auto* yield = llvm::BasicBlock::Create(ctx, "yield", fn);
      b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(n, b.getInt32(kSpinsPerYield - 1)), b.getInt32(0)), yield, target);
      b.SetInsertPoint(yield);
      CutSite site;
      site.kind = CutKind::kYield;
      site.line = in.line;
      Value* ops[kExchangeInSlots] = {};
      emit_cut(site, index, ops);
      b.CreateBr(target);
    }
    b.SetInsertPoint(next);
    return true;
  }
  if (op == Op::kRet || op == Op::kExit) {
    report_misalignment();
    if (!is_kernel && op == Op::kRet) {
      // .reg return values go back through the caller's pointers.
      for (size_t k = 0; k < f.rets.size(); ++k) {
        const ParamDecl& p = f.rets[k];
        if (p.space != Space::kReg) continue;
        for (size_t r = 0; r < f.regs.size(); ++r)
          if (f.regs[r].name == p.name)
            b.CreateStore(b.CreateLoad(regs[r]->getAllocatedType(), regs[r]), fn->getArg(static_cast<unsigned>(2 + k)));
      }
    }
    b.CreateRet(b.getInt32(!is_kernel && op == Op::kExit ? 1 : 0));
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "after_ret", fn));
    return true;
  }
  if (op == Op::kTrap || op == Op::kBrkpt) {
    emit_fault(static_cast<uint32_t>(FaultKind::kTrap), nullptr);
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "after_trap", fn));
    return true;
  }
  return false;
}

bool FnLowering::lower_call(const Instr& in) {
  if (in.op != Op::kCall) return false;
  const Operand* rets = nullptr;
  const Operand* args = nullptr;
  size_t k = 0;
  if (k < in.args.size() && in.args[k].kind == Operand::Kind::kList) rets = &in.args[k++];
  if (k >= in.args.size()) fail("call needs a target");
  const Operand& target = in.args[k++];
  if (k < in.args.size() && in.args[k].kind == Operand::Kind::kList) args = &in.args[k++];
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  // Each argument is passed as a pointer to its bytes.
  auto arg_pointer = [&](const Operand& o, Ty ty) -> Value* {
    if (o.kind == Operand::Kind::kSym) {
      auto it = local_vars.find(o.sym);
      if (it != local_vars.end()) return it->second;
      auto pp = param_ptrs.find(o.sym);
      if (pp != param_ptrs.end()) return pp->second;
    }
    llvm::IRBuilder<> eb(entry_block, entry_block->begin());
    auto* tmp = eb.CreateAlloca(b.getInt64Ty(), b.getInt32(2));
    if (o.kind != Operand::Kind::kSink) b.CreateStore(read(o, ty == Ty::kNone ? Ty::kB64 : ty), tmp);
    return tmp;
  };
  if (target.kind == Operand::Kind::kReg) {
    // Through a function pointer: every compiled function takes
    // (env, tid, return slots..., parameter slots...) and returns "exited".
    std::vector<Value*> call_args = {env, tid};
    if (rets)
      for (const Operand& o : rets->elems) call_args.push_back(arg_pointer(o, Ty::kB64));
    if (args)
      for (const Operand& o : args->elems) call_args.push_back(arg_pointer(o, Ty::kB64));
    std::vector<llvm::Type*> tys(call_args.size(), ptr);
    tys[1] = b.getInt32Ty();
    auto* fty = llvm::FunctionType::get(b.getInt32Ty(), tys, false);
    Value* callee_ptr = b.CreateIntToPtr(read(target, Ty::kU64), ptr);
    Value* exited = b.CreateCall(fty, callee_ptr, call_args);
    if (rets)
      for (size_t i = 0; i < rets->elems.size(); ++i)
        if (rets->elems[i].kind == Operand::Kind::kReg)
          write(rets->elems[i], b.CreateLoad(b.getInt64Ty(), call_args[2 + i]), Ty::kB64);
    auto* out = llvm::BasicBlock::Create(ctx, "exited", fn);
    auto* go = llvm::BasicBlock::Create(ctx, "returned", fn);
    b.CreateCondBr(b.CreateICmpNE(exited, b.getInt32(0)), out, go);
    b.SetInsertPoint(out);
    b.CreateRet(b.getInt32(is_kernel ? 0 : 1));
    b.SetInsertPoint(go);
    return true;
  }
  if (target.kind != Operand::Kind::kSym) fail("a call needs a function");
  auto fit = m.func_index.find(target.sym);
  if (fit == m.func_index.end()) fail("call of an undeclared function '" + target.sym + "'");
  const Function& callee = m.funcs[static_cast<size_t>(fit->second)];
  const size_t nargs = args ? args->elems.size() : 0, nrets = rets ? rets->elems.size() : 0;
  if (nargs != callee.params.size() || nrets != callee.rets.size())
    fail("call of '" + callee.name + "' with the wrong number of arguments");
  std::vector<Value*> arg_ptrs, ret_ptrs;
  for (size_t i = 0; i < nrets; ++i) ret_ptrs.push_back(arg_pointer(rets->elems[i], callee.rets[i].ty));
  for (size_t i = 0; i < nargs; ++i) arg_ptrs.push_back(arg_pointer(args->elems[i], callee.params[i].ty));

  // The device runtime's calls are cucpu's, even where the PTX brings bodies.
  if (const DeviceCallInfo* dc = find_device_call(callee.name)) {
    if (nargs != dc->params || nrets != (dc->result_bytes ? 1u : 0u))
      fail("call of '" + callee.name + "' with the wrong number of arguments");
    llvm::IRBuilder<> eb(entry_block, entry_block->begin());
    Value* list = eb.CreateAlloca(ptr, b.getInt32(static_cast<uint32_t>(std::max<size_t>(nargs, 1))));
    for (size_t i = 0; i < nargs; ++i) b.CreateStore(arg_ptrs[i], b.CreateConstGEP1_64(ptr, list, i));
    auto* ty = llvm::FunctionType::get(b.getVoidTy(), {ptr, b.getInt32Ty(), ptr, ptr}, false);
    b.CreateStore(tid, b.CreateStructGEP(env_ty, env, 10));
    b.CreateCall(runtime("cucpu_rt_device_call", ty),
                 {env, b.getInt32(static_cast<uint32_t>(dc->call)), list,
                  nrets ? ret_ptrs[0] : llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx, 0))});
    return true;
  }
  if (!callee.has_body) {
    auto load64 = [&](size_t i) { return b.CreateLoad(b.getInt64Ty(), arg_ptrs[i]); };
    if (callee.name == "vprintf" && nargs == 2 && nrets == 1) {
      auto* ty = llvm::FunctionType::get(b.getInt32Ty(), {ptr, ptr, ptr}, false);
      Value* r = b.CreateCall(runtime("cucpu_rt_vprintf", ty),
                              {env, b.CreateIntToPtr(load64(0), ptr), b.CreateIntToPtr(load64(1), ptr)});
      b.CreateStore(r, ret_ptrs[0]);
      return true;
    }
    if (callee.name == "__assertfail" && nargs == 5) {
      auto* ty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, b.getInt32Ty(), ptr}, false);
      llvm::Function* rt = runtime("cucpu_rt_assert", ty);
      rt->setDoesNotReturn();
      b.CreateStore(tid, b.CreateStructGEP(env_ty, env, 10));
      b.CreateCall(rt, {env, b.CreateIntToPtr(load64(0), ptr), b.CreateIntToPtr(load64(1), ptr),
                        b.CreateLoad(b.getInt32Ty(), arg_ptrs[2]), b.CreateIntToPtr(load64(3), ptr)});
      b.CreateUnreachable();
      b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "after_assert", fn));
      return true;
    }
    if (callee.name == "malloc" && nargs == 1 && nrets == 1) {
      auto* ty = llvm::FunctionType::get(ptr, {b.getInt64Ty()}, false);
      Value* r = b.CreateCall(runtime("cucpu_rt_malloc", ty), {load64(0)});
      b.CreateStore(b.CreatePtrToInt(r, b.getInt64Ty()), ret_ptrs[0]);
      return true;
    }
    if (callee.name == "free" && nargs == 1) {
      auto* ty = llvm::FunctionType::get(b.getVoidTy(), {ptr}, false);
      b.CreateCall(runtime("cucpu_rt_free", ty), {b.CreateIntToPtr(load64(0), ptr)});
      return true;
    }
    fail("call of the external function '" + callee.name + "', which cucpu does not provide");
  }
  llvm::Function* lf = mod.getFunction(prefix + "_f_" + callee.name);
  std::vector<Value*> call_args = {env, tid};
  call_args.insert(call_args.end(), ret_ptrs.begin(), ret_ptrs.end());
  call_args.insert(call_args.end(), arg_ptrs.begin(), arg_ptrs.end());
  Value* exited = b.CreateCall(lf, call_args);
  // Registers passed as return slots get their values back.
  for (size_t i = 0; i < nrets; ++i) {
    const Operand& o = rets->elems[i];
    if (o.kind == Operand::Kind::kReg) write(o, b.CreateLoad(llty(callee.rets[i].ty), ret_ptrs[i]), callee.rets[i].ty);
  }
  // `exit` inside the callee ends the thread.
  auto* out = llvm::BasicBlock::Create(ctx, "exited", fn);
  auto* go = llvm::BasicBlock::Create(ctx, "returned", fn);
  b.CreateCondBr(b.CreateICmpNE(exited, b.getInt32(0)), out, go);
  b.SetInsertPoint(out);
  b.CreateRet(b.getInt32(is_kernel ? 0 : 1));
  b.SetInsertPoint(go);
  return true;
}

}  // namespace cucpu::ptx
