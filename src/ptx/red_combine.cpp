#include "ptx/red_combine.h"

#include <algorithm>
#include <set>
#include <string>

#include "ptx/lower.h"

namespace cucpu::ptx {

namespace {

// Whether `in` may read or write global memory other than through
// atomics and `.nc` loads (whose data the program promises is not written
// while the kernel runs).
bool plain_global_access(const Instr& in) {
  const Op op = in.op;
  if (op == Op::kLd || op == Op::kLdu || op == Op::kSt) {
    if (in.has("volatile") || in.has("relaxed") || in.has("acquire") || in.has("release") || in.has("mmio")) return true;
    for (const std::string& x : in.mods) {
      if (x == "shared" || x.rfind("shared::", 0) == 0 || x == "local" || x == "param" || x == "const") return false;
      if (x == "global") return op == Op::kSt || !in.has("nc");
    }
    return true;  // generic: may be global
  }
  // Copies, matrix and texture accesses: memory the rule above does not see.
  return op_has(op, kOtherAccess);
}

bool indirect_call(const Instr& in) {
  if (in.op != Op::kCall) return false;
  for (const Operand& o : in.args)
    if (o.kind == Operand::Kind::kReg) return true;  // code compiled apart, unseen here
  return false;
}

const std::string* callee(const Instr& in) {
  if (in.op != Op::kCall) return nullptr;
  for (const Operand& o : in.args)
    if (o.kind == Operand::Kind::kSym) return &o.sym;
  return nullptr;
}

}  // namespace

std::optional<uint32_t> combined_code(const Instr& in) {
  if (in.op != Op::kRed && in.op != Op::kAtom) return std::nullopt;
  if (!in.has("global")) return std::nullopt;
  for (const char* sem : {"release", "acq_rel", "acquire", "sc", "sys", "cluster"})
    if (in.has(sem)) return std::nullopt;
  Ty t = Ty::kNone;
  for (const std::string& x : in.mods)
    if (t == Ty::kNone) t = type_from_name(x);
  CombineType type;
  switch (t) {
    case Ty::kF32: type = kCombineF32; break;
    case Ty::kF64: type = kCombineF64; break;
    case Ty::kU32: case Ty::kB32: type = kCombineU32; break;
    case Ty::kS32: type = kCombineS32; break;
    case Ty::kU64: case Ty::kB64: type = kCombineU64; break;
    case Ty::kS64: type = kCombineS64; break;
    default: return std::nullopt;
  }
  const bool fl = type == kCombineF32 || type == kCombineF64;
  if (in.has("add")) return red_code(kCombineAdd, type);
  if (fl) return std::nullopt;
  if (in.has("min")) return red_code(kCombineMin, type);
  if (in.has("max")) return red_code(kCombineMax, type);
  if (in.has("and")) return red_code(kCombineAnd, type);
  if (in.has("or")) return red_code(kCombineOr, type);
  if (in.has("xor")) return red_code(kCombineXor, type);
  return std::nullopt;
}

bool result_unused(const Function& f, const Instr& in, const std::vector<int>& mentions) {
  if (in.op != Op::kAtom || in.args.empty()) return false;
  const Operand& d = in.args[0];
  if (d.kind == Operand::Kind::kSink) return true;
  if (d.kind != Operand::Kind::kReg || d.reg < 0 || mentions[static_cast<size_t>(d.reg)] > 1) return false;
  const std::string& name = f.regs[static_cast<size_t>(d.reg)].name;
  for (const ParamDecl& p : f.rets)
    if (p.name == name) return false;  // read by the caller
  return true;
}

namespace {

// A reduction the table takes.
bool combined(const Function& f, const Instr& in, const std::vector<int>& mentions) {
  return combined_code(in) && (in.op == Op::kRed || result_unused(f, in, mentions));
}

}  // namespace

bool combining_kernel(const Module& m, const std::vector<int>& order) {
  // The called functions: which touch global memory plainly, which reduce.
  std::set<std::string> plain_fns;
  bool callee_reduces = false;
  for (size_t k = 1; k < order.size(); ++k) {
    const Function& f = m.funcs[static_cast<size_t>(order[k])];
    const std::vector<int> mentions = register_mentions(f);
    for (const Instr& in : f.body) {
      if (indirect_call(in)) return false;
      if (plain_global_access(in)) plain_fns.insert(f.name);
      callee_reduces |= combined(f, in, mentions);
    }
  }
  const Function& kf = m.funcs[static_cast<size_t>(order[0])];
  auto plain = [&](const Instr& in) {
    if (indirect_call(in) || plain_global_access(in)) return true;
    const std::string* c = callee(in);
    return c && plain_fns.count(*c) != 0;
  };
  // A reduction in a called function: nothing may touch global memory plainly.
  if (callee_reduces) {
    if (!plain_fns.empty()) return false;
    for (const Instr& in : kf.body)
      if (plain(in)) return false;
    return true;
  }
  // Reductions in the kernel body: no plain access may follow one (in the
  // thread itself, or in another after a barrier). One before it, or in a
  // block that runs later on the worker, is unordered with it on the GPU
  // too, and sees memory as some order of the two would leave it.
  const std::vector<std::vector<int>> succ = successors(kf);
  std::vector<bool> seen(kf.body.size(), false);
  std::vector<int> todo;
  bool reduces = false;
  const std::vector<int> mentions = register_mentions(kf);
  for (size_t i = 0; i < kf.body.size(); ++i)
    if (combined(kf, kf.body[i], mentions)) {
      reduces = true;
      for (int s : succ[i]) todo.push_back(s);
    }
  while (!todo.empty()) {
    const int i = todo.back();
    todo.pop_back();
    if (seen[static_cast<size_t>(i)]) continue;
    seen[static_cast<size_t>(i)] = true;
    if (plain(kf.body[static_cast<size_t>(i)])) return false;
    for (int s : succ[static_cast<size_t>(i)]) todo.push_back(s);
  }
  return reduces;
}

}  // namespace cucpu::ptx
