// Calls of functions that hold cuts, inlined into the kernel's body in the
// PTX (see lower.h, inline_cut_calls). A cut stops a thread in the middle
// of its step and resumes it there; the step is the kernel's body, so a
// barrier or a warp collective inside a called function (a __noinline__
// helper, or a function of another compilation unit of an -rdc program)
// must become part of that body.
#include "ptx/lower.h"

namespace cucpu::ptx {
namespace {

// Inlining rounds (the depth of calls into functions with cuts).
constexpr int kMaxDepth = 16;

int callee_of(const Module& m, const Instr& in) {
  if (in.op != Op::kCall) return -1;
  for (const Operand& o : in.args)
    if (o.kind == Operand::Kind::kSym) {
      auto it = m.func_index.find(o.sym);
      return it == m.func_index.end() ? -1 : it->second;
    }
  return -1;
}

// Whether function fi, or a function it calls, holds a cut.
bool holds_cuts(const Module& m, int fi, std::vector<int8_t>& memo) {
  int8_t& state = memo[static_cast<size_t>(fi)];
  if (state >= 0) return state == 1;
  state = 0;  // a cycle counts as none until proven otherwise
  bool any = false;
  for (const Instr& in : m.funcs[static_cast<size_t>(fi)].body) {
    if (is_cut_instruction(in)) any = true;
    const int c = callee_of(m, in);
    if (c >= 0 && !m.funcs[static_cast<size_t>(c)].is_entry && holds_cuts(m, c, memo)) any = true;
    if (any) break;
  }
  state = any ? 1 : 0;
  return any;
}

struct Splice {
  const Function& callee;
  const std::string suffix;
  std::vector<int> reg_of;                    // callee register -> caller register
  std::map<std::string, std::string> rename;  // callee labels, variables and parameters -> caller names

  void remap(Operand& o) const {
    if (o.reg >= 0) o.reg = reg_of[static_cast<size_t>(o.reg)];
    if (o.pair >= 0) o.pair = reg_of[static_cast<size_t>(o.pair)];
    if (!o.sym.empty())
      if (auto it = rename.find(o.sym); it != rename.end()) o.sym = it->second;
    for (Operand& e : o.elems) remap(e);
  }
};

Instr make_instr(const Instr& at, Op op, std::vector<std::string> mods, std::vector<Operand> args) {
  Instr in;
  in.line = at.line;
  in.col = at.col;
  in.op = op;
  in.mods = std::move(mods);
  in.args = std::move(args);
  return in;
}

Operand reg_operand(int r) {
  Operand o;
  o.kind = Operand::Kind::kReg;
  o.reg = r;
  return o;
}

Operand sym_operand(const std::string& s) {
  Operand o;
  o.kind = Operand::Kind::kSym;
  o.sym = s;
  return o;
}

// The type a register moves with (mov.b32 and the like).
std::string move_type(Ty t) {
  const int bits = type_bits(t);
  if (t == Ty::kPred) return "pred";
  return "b" + std::to_string(bits < 16 ? 16 : bits);
}

// Appends to `out` (and its labels to `labels`, by the index they precede)
// the body of `callee` for `call`, in `caller`.
void splice_call(Function& caller, const Instr& call, const Function& callee, int serial, std::vector<Instr>& out,
                 std::vector<std::vector<std::string>>& labels) {
  const Operand* rets = nullptr;
  const Operand* args = nullptr;
  size_t k = 0;
  if (k < call.args.size() && call.args[k].kind == Operand::Kind::kList) rets = &call.args[k++];
  ++k;  // the target
  if (k < call.args.size() && call.args[k].kind == Operand::Kind::kList) args = &call.args[k];
  const size_t nargs = args ? args->elems.size() : 0, nrets = rets ? rets->elems.size() : 0;
  if (nargs != callee.params.size() || nrets > callee.rets.size())
    throw LowerError{call.line, call.col, "the call of '" + callee.name + "' does not match its parameters"};
  Splice s{callee, "$inl" + std::to_string(serial), {}, {}};
  for (const RegDecl& r : callee.regs) {
    s.reg_of.push_back(static_cast<int>(caller.regs.size()));
    caller.regs.push_back({r.name + s.suffix, r.ty, r.vec});
  }
  for (const VarDecl& v : callee.vars) {
    VarDecl copy = v;
    copy.name = v.name + s.suffix;
    s.rename[v.name] = copy.name;
    caller.vars.push_back(std::move(copy));
  }
  for (const auto& [label, at] : callee.labels) s.rename[label] = label + s.suffix;
  const std::string end = "$inl_end" + s.suffix;
  auto reg_named = [&](const std::string& name) {
    for (size_t r = 0; r < callee.regs.size(); ++r)
      if (callee.regs[r].name == name) return s.reg_of[r];
    throw LowerError{callee.line, 1, "the parameter '" + name + "' of '" + callee.name + "' has no register"};
  };
  std::vector<Instr> before, after;
  if (call.guard >= 0) {
    Instr skip = make_instr(call, Op::kBra, {}, {sym_operand(end)});
    skip.guard = call.guard;
    skip.guard_neg = !call.guard_neg;
    before.push_back(std::move(skip));
  }
  // Parameters: a .param one is the caller's argument variable (or a copy
  // of a register or immediate into a variable of its own); a .reg one is
  // a register, set from the argument.
  for (size_t i = 0; i < nargs; ++i) {
    const ParamDecl& p = callee.params[i];
    const Operand& a = args->elems[i];
    if (p.space == Space::kReg) {
      before.push_back(make_instr(call, Op::kMov, {move_type(p.ty)}, {reg_operand(reg_named(p.name)), a}));
    } else if (a.kind == Operand::Kind::kSym) {
      s.rename[p.name] = a.sym;
    } else {
      if (p.size > 8) throw LowerError{call.line, call.col, "an aggregate argument of '" + callee.name + "' is not a variable"};
      VarDecl v;
      v.name = p.name + s.suffix;
      v.space = Space::kParam;
      v.ty = p.ty;
      v.size = p.size;
      v.align = p.align;
      caller.vars.push_back(v);
      s.rename[p.name] = v.name;
      Operand addr;
      addr.kind = Operand::Kind::kAddr;
      addr.sym = v.name;
      before.push_back(make_instr(call, Op::kSt, {"param", move_type(p.ty)}, {addr, a}));
    }
  }
  for (size_t i = 0; i < nrets; ++i) {
    const ParamDecl& p = callee.rets[i];
    const Operand& r = rets->elems[i];
    if (p.space == Space::kReg) {
      after.push_back(make_instr(call, Op::kMov, {move_type(p.ty)}, {r, reg_operand(reg_named(p.name))}));
    } else if (r.kind == Operand::Kind::kSym) {
      s.rename[p.name] = r.sym;
    } else {
      throw LowerError{call.line, call.col, "a result of '" + callee.name + "' is not a variable"};
    }
  }
  const size_t first = out.size();
  for (Instr& in : before) out.push_back(std::move(in));
  for (size_t i = 0; i < callee.body.size(); ++i) {
    Instr in = callee.body[i];
    for (Operand& o : in.args) s.remap(o);
    if (in.guard >= 0) in.guard = s.reg_of[static_cast<size_t>(in.guard)];
    if (in.op == Op::kRet) {
      in.op = Op::kBra;
      in.mods.clear();
      in.args = {sym_operand(end)};
    }
    out.push_back(std::move(in));
  }
  labels.resize(out.size() + after.size() + 1);
  for (const auto& [label, at] : callee.labels)
    labels[first + before.size() + static_cast<size_t>(at)].push_back(label + s.suffix);
  labels[out.size()].push_back(end);
  for (Instr& in : after) out.push_back(std::move(in));
}

}  // namespace

std::optional<Function> inline_cut_calls(const Module& m, const Function& kernel) {
  std::vector<int8_t> memo(m.funcs.size(), -1);
  auto wanted = [&](const Instr& in) {
    const int c = callee_of(m, in);
    return c >= 0 && !m.funcs[static_cast<size_t>(c)].is_entry && m.funcs[static_cast<size_t>(c)].has_body &&
           holds_cuts(m, c, memo);
  };
  bool any = false;
  for (const Instr& in : kernel.body) any = any || wanted(in);
  if (!any) return std::nullopt;
  Function f = kernel;
  int serial = 0;
  for (int depth = 0;; ++depth) {
    std::vector<std::vector<std::string>> labels(f.body.size() + 1);
    for (const auto& [label, at] : f.labels) labels[static_cast<size_t>(at)].push_back(label);
    std::vector<Instr> body;
    std::vector<std::vector<std::string>> new_labels(1);
    bool spliced = false;
    for (size_t i = 0; i <= f.body.size(); ++i) {
      new_labels.resize(body.size() + 1);
      for (std::string& l : labels[i]) new_labels[body.size()].push_back(std::move(l));
      if (i == f.body.size()) break;
      if (!wanted(f.body[i])) {
        body.push_back(std::move(f.body[i]));
        continue;
      }
      if (depth >= kMaxDepth)
        throw LowerError{f.body[i].line, f.body[i].col, "calls of functions with barriers or warp collectives nest too deep (recursion?)"};
      splice_call(f, f.body[i], m.funcs[static_cast<size_t>(callee_of(m, f.body[i]))], serial++, body, new_labels);
      spliced = true;
    }
    f.body = std::move(body);
    f.labels.clear();
    for (size_t i = 0; i < new_labels.size(); ++i)
      for (std::string& l : new_labels[i]) f.labels[std::move(l)] = static_cast<int>(i);
    if (!spliced) break;
  }
  return f;
}

}  // namespace cucpu::ptx
