// Rematerialization: the registers a resumed thread recomputes rather than
// reload from its frame (Remat in lower.h). Saving fewer registers keeps
// the loops over a block's threads short, and a register recomputed from
// %tid stays an induction variable the vectorizer sees (addresses stay
// consecutive across threads instead of becoming gathers).
//
// A register read before its only write holds an undefined value in PTX,
// so recomputing it at a resume point that precedes the write is allowed.
#include "ptx/lower.h"

namespace cucpu::ptx {

namespace {

template <class F>
void each_reg(const Operand& o, F&& fn) {
  if (o.reg >= 0) fn(o.reg);
  if (o.pair >= 0) fn(o.pair);
  for (const Operand& e : o.elems) each_reg(e, fn);
}

bool pure_op(const Instr& in) {
  if (!op_has(in.op, kRemat)) return false;
  for (const std::string& m : in.mods)
    if (m == "cc") return false;  // writes the carry flag
  return true;
}

// Special registers that keep their value for the whole thread.
bool invariant_special(SReg s) {
  switch (s) {
    case SReg::kTid: case SReg::kNtid: case SReg::kCtaid: case SReg::kNctaid: case SReg::kLaneId:
    case SReg::kWarpId: case SReg::kNWarpId: case SReg::kLanemaskEq: case SReg::kLanemaskLe:
    case SReg::kLanemaskLt: case SReg::kLanemaskGe: case SReg::kLanemaskGt:
      return true;
    default: return false;
  }
}

struct Analysis {
  const Function& f;
  const std::map<std::string, uint32_t>& params;
  int max_chain;
  std::vector<int> writes, writer, state, chain;  // state: 0 unknown, 1 visiting, 2 yes, 3 no

  bool source_ok(const Operand& o) {
    switch (o.kind) {
      case Operand::Kind::kImm: case Operand::Kind::kFloat: case Operand::Kind::kSym: return true;
      case Operand::Kind::kSpecial: return invariant_special(o.sreg);
      case Operand::Kind::kReg: return ok(o.reg);
      default: return false;
    }
  }

  bool ok(int r) {
    int& s = state[static_cast<size_t>(r)];
    if (s >= 2) return s == 2;
    if (s == 1) return false;  // a cycle
    s = 1;
    bool yes = false;
    int len = 1;
    const int w = writer[static_cast<size_t>(r)];
    if (writes[static_cast<size_t>(r)] == 1 && w >= 0) {
      const Instr& in = f.body[static_cast<size_t>(w)];
      yes = in.guard < 0 && pure_op(in) && !in.args.empty() && in.args[0].kind == Operand::Kind::kReg &&
            in.args[0].pair < 0 && in.args[0].reg == r;
      if (yes && in.op == Op::kLd) {
        // ld.param of a kernel parameter, by name.
        yes = in.args.size() == 2 && in.has("param") && in.args[1].kind == Operand::Kind::kAddr &&
              in.args[1].reg < 0 && params.count(in.args[1].sym);
      } else {
        for (size_t k = 1; yes && k < in.args.size(); ++k) {
          yes = source_ok(in.args[k]);
          if (yes && in.args[k].kind == Operand::Kind::kReg) len += chain[static_cast<size_t>(in.args[k].reg)];
        }
      }
    }
    yes = yes && len <= max_chain;
    chain[static_cast<size_t>(r)] = len;
    s = yes ? 2 : 3;
    return yes;
  }
};

}  // namespace

Remat remat_analysis(const Function& f, const std::map<std::string, uint32_t>& entry_params, int max_chain) {
  const size_t nr = f.regs.size();
  Analysis a{f, entry_params, max_chain, std::vector<int>(nr, 0), std::vector<int>(nr, -1), std::vector<int>(nr, 0),
             std::vector<int>(nr, 0)};
  for (size_t i = 0; i < f.body.size(); ++i) {
    const Instr& in = f.body[i];
    auto wrote = [&](int r) {
      a.writes[static_cast<size_t>(r)]++;
      a.writer[static_cast<size_t>(r)] = static_cast<int>(i);
    };
    for (size_t k = 0; k < in.args.size(); ++k) {
      const Operand& o = in.args[k];
      if (in.op == Op::kCall) {
        each_reg(o, wrote);  // every operand of a call may be written
      } else if (k == 0) {
        // A first operand is written, unless it is an address the instruction reads.
        if (o.kind != Operand::Kind::kAddr || op_has(in.op, kDest)) each_reg(o, wrote);
        if (o.elem >= 0) wrote(o.reg);  // an element's write leaves the others: never recomputed
      } else {
        // Later operands are sources; their vectors and predicate halves count as writes, to be safe.
        if (o.pair >= 0) wrote(o.pair);
        if (o.kind == Operand::Kind::kVec || o.kind == Operand::Kind::kList)
          for (const Operand& e : o.elems) each_reg(e, wrote);
      }
    }
  }
  Remat out;
  out.def.assign(nr, -1);
  out.konst.assign(nr, -1);
  for (size_t r = 0; r < nr; ++r)
    if (a.ok(static_cast<int>(r))) {
      out.def[r] = a.writer[r];
      const Instr& in = f.body[static_cast<size_t>(a.writer[r])];
      if (in.op == Op::kMov && in.args.size() == 2 &&
          (in.args[1].kind == Operand::Kind::kImm || in.args[1].kind == Operand::Kind::kFloat))
        out.konst[r] = a.writer[r];
    }
  return out;
}

std::vector<int> Remat::closure(const Function& f, const std::vector<int>& regs) const {
  std::vector<int> order;
  std::vector<bool> seen(def.size(), false);
  auto visit = [&](auto&& self, int r) -> void {
    if (seen[static_cast<size_t>(r)] || def[static_cast<size_t>(r)] < 0) return;
    seen[static_cast<size_t>(r)] = true;
    const Instr& in = f.body[static_cast<size_t>(def[static_cast<size_t>(r)])];
    for (size_t k = 1; k < in.args.size(); ++k)
      if (in.args[k].kind == Operand::Kind::kReg) self(self, in.args[k].reg);
    order.push_back(def[static_cast<size_t>(r)]);
  };
  for (int r : regs) visit(visit, r);
  return order;
}

}  // namespace cucpu::ptx
