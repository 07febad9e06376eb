// Round cuts: the back edges of loops a block's threads go round in step
// (see lower.h, round_back_edges).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "ptx/lower.h"

namespace cucpu::ptx {
namespace {

bool thread_varying(SReg s) {
  switch (s) {
    case SReg::kTid: case SReg::kLaneId: case SReg::kWarpId: case SReg::kLanemaskEq: case SReg::kLanemaskLe:
    case SReg::kLanemaskLt: case SReg::kLanemaskGe: case SReg::kLanemaskGt:
      return true;
    default: return false;
  }
}

// A 32- or 64-bit integer register.
bool integer_register(Ty t) {
  return t == Ty::kB32 || t == Ty::kB64 || t == Ty::kU32 || t == Ty::kU64 || t == Ty::kS32 || t == Ty::kS64;
}

struct LoopScan {
  const Function& f;
  const Remat& remat;

  // The same value in every thread of a block: an immediate, or a register
  // recomputable (Remat) from nothing that differs between threads.
  bool uniform(const Operand& o) const {
    if (o.kind == Operand::Kind::kImm) return true;
    if (o.kind != Operand::Kind::kReg || o.reg < 0 || remat.def[static_cast<size_t>(o.reg)] < 0) return false;
    for (int d : remat.closure(f, {o.reg}))
      for (const Operand& a : f.body[static_cast<size_t>(d)].args)
        if (a.kind == Operand::Kind::kSpecial && thread_varying(a.sreg)) return false;
    return true;
  }

  // The register x is a copy of (a cvt or mov, the loop's one write of x),
  // or -1: loops step a 64-bit register and compare its low half, or the
  // other way round.
  int copied_from(size_t h, size_t j, int x) const {
    if (writes_in(x) != 1) return -1;
    for (size_t i = h; i <= j; ++i) {
      const Instr& in = f.body[i];
      if (in.args.size() != 2 || in.args[0].kind != Operand::Kind::kReg || in.args[0].reg != x) continue;
      if ((in.op == Op::kCvt || in.op == Op::kMov) && in.guard < 0 && in.args[1].kind == Operand::Kind::kReg && !in.has("sat"))
        return in.args[1].reg;
      return -1;
    }
    return -1;
  }

  // By register: how many instructions of the loop being scanned write it
  // (count_writes sets it once a loop).
  std::vector<int> loop_writes;

  void count_writes(size_t h, size_t j) {
    loop_writes.assign(f.regs.size(), 0);
    for (size_t i = h; i <= j; ++i) {
      const Instr& in = f.body[i];
      if (!in.args.empty() && op_has(in.op, kDest) && in.args[0].kind == Operand::Kind::kReg && in.args[0].reg >= 0)
        ++loop_writes[static_cast<size_t>(in.args[0].reg)];
    }
  }
  int writes_in(int r) const { return loop_writes[static_cast<size_t>(r)]; }

  // The loop [h, j] steps a register by a uniform amount once a trip and
  // leaves (or repeats) on a comparison of that register with a uniform
  // bound: its threads go round the same number of times, give or take
  // one. Returns that register, or -1.
  int steps_uniformly(size_t h, size_t j) const {
    for (size_t i = h; i <= j; ++i) {
      const Instr& br = f.body[i];
      const int to = branch_target(f, br);
      if (to < 0 || br.guard < 0) continue;
      const bool leaves = static_cast<size_t>(to) < h || static_cast<size_t>(to) > j;
      if (!leaves && i != j) continue;
      for (size_t k = h; k <= j; ++k) {
        const Instr& s = f.body[k];
        if (s.op != Op::kSetp || s.args.size() < 3 || s.args[0].kind != Operand::Kind::kReg || s.args[0].reg != br.guard ||
            s.args[0].pair >= 0 || writes_in(br.guard) != 1)
          continue;
        for (int side = 1; side <= 2; ++side) {
          const Operand& iv = s.args[static_cast<size_t>(side)];
          if (iv.kind != Operand::Kind::kReg || !uniform(s.args[static_cast<size_t>(3 - side)])) continue;
          for (int r : {iv.reg, copied_from(h, j, iv.reg)})
            if (r >= 0 && is_uniform_step(h, j, r)) return r;
        }
      }
    }
    return -1;
  }

  // The one write of r before the loop [h, j], when r has just that and
  // the step: unguarded, pure, from registers recomputable at any point
  // (so a resumed thread recomputes r's start, and the frame keeps how far
  // it has gone, the same number in every thread that started together).
  int start_of(size_t h, size_t j, int r) const {
    int found = -1;
    for (size_t i = 0; i < f.body.size(); ++i) {
      const Instr& in = f.body[i];
      if (in.op == Op::kCall) {
        for (const Operand& a : in.args)
          if (mentions(a, r)) return -1;
        continue;
      }
      if (in.args.empty() || !op_has(in.op, kDest) || !mentions(in.args[0], r)) continue;
      if (i >= h && i <= j) continue;  // the step (the only write inside: is_uniform_step)
      if (found >= 0 || i > h || in.guard >= 0 || in.args[0].kind != Operand::Kind::kReg || in.args[0].pair >= 0) return -1;
      if (!op_has(in.op, kAffine) || in.has("cc") || in.has("sat")) return -1;
      for (size_t k = 1; k < in.args.size(); ++k) {
        const Operand& a = in.args[k];
        const bool ok = a.kind == Operand::Kind::kImm ||
                        (a.kind == Operand::Kind::kSpecial && (a.sreg == SReg::kTid || a.sreg == SReg::kNtid ||
                                                               a.sreg == SReg::kCtaid || a.sreg == SReg::kNctaid)) ||
                        (a.kind == Operand::Kind::kReg && a.reg != r && remat.def[static_cast<size_t>(a.reg)] >= 0);
        if (!ok) return -1;
      }
      found = static_cast<int>(i);
    }
    return found;
  }

  // The loop [h, j] does integer work only and walks a pointer of its own
  // a few bytes a trip (a row per thread): the thread's own loop widens
  // (its loads are consecutive, integer sums reassociate), where trips
  // across the threads would gather a word from each row.
  bool walks_own_memory(size_t h, size_t j) const {
    std::vector<int> walked;
    for (size_t i = h; i <= j; ++i) {
      const Instr& in = f.body[i];
      for (const std::string& m : in.mods)
        if (is_float(type_from_name(m))) return false;
      if (in.op == Op::kAdd && in.args.size() == 3 && in.args[0].kind == Operand::Kind::kReg && in.args[1].kind == Operand::Kind::kReg &&
          in.args[1].reg == in.args[0].reg && in.args[2].kind == Operand::Kind::kImm && in.args[2].imm != 0 &&
          in.args[2].imm >= -64 && in.args[2].imm <= 64 && type_bits(f.regs[static_cast<size_t>(in.args[0].reg)].ty) == 64)
        walked.push_back(in.args[0].reg);
    }
    for (size_t i = h; i <= j; ++i) {
      const Instr& in = f.body[i];
      if (in.op != Op::kLd && in.op != Op::kSt) continue;
      for (const Operand& a : in.args)
        if (a.kind == Operand::Kind::kAddr && std::find(walked.begin(), walked.end(), a.reg) != walked.end()) return true;
    }
    return false;
  }

  static bool mentions(const Operand& o, int r) {
    if (o.reg == r || o.pair == r) return true;
    for (const Operand& e : o.elems)
      if (mentions(e, r)) return true;
    return false;
  }

  // Register r is written once in [h, j], by r = r + uniform.
  bool is_uniform_step(size_t h, size_t j, int r) const {
    if (writes_in(r) != 1) return false;
    for (size_t i = h; i <= j; ++i) {
      const Instr& in = f.body[i];
      if ((in.op != Op::kAdd && in.op != Op::kSub) || in.guard >= 0 || in.args.size() != 3 || in.args[0].kind != Operand::Kind::kReg ||
          in.args[0].reg != r || in.has("cc") || in.has("sat") || !integer_register(f.regs[static_cast<size_t>(r)].ty) ||
          f.regs[static_cast<size_t>(r)].vec != 1)
        continue;
      bool floating = false;
      for (const std::string& m : in.mods) floating = floating || is_float(type_from_name(m));
      if (floating) continue;
      const Operand &x = in.args[1], &y = in.args[2];
      auto is_r = [&](const Operand& o) {
        return o.kind == Operand::Kind::kReg && (o.reg == r || copied_from(h, j, o.reg) == r);
      };
      if (is_r(x) && uniform(y)) return true;
      if (in.op == Op::kAdd && is_r(y) && uniform(x)) return true;
    }
    return false;
  }
};

}  // namespace

bool loop_rounds_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("CUCPU_LOOP_ROUNDS");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

std::vector<RoundEdge> round_back_edges(const Function& f, const Remat& remat, const std::vector<bool>& is_cut) {
  const size_t n = f.body.size();
  std::vector<RoundEdge> out;
  if (!loop_rounds_enabled()) return out;
  struct Edge {
    size_t head, back;
  };
  std::vector<Edge> edges;
  for (size_t j = 0; j < n; ++j) {
    const int to = branch_target(f, f.body[j]);
    if (to >= 0 && static_cast<size_t>(to) <= j) edges.push_back({static_cast<size_t>(to), j});
  }
  LoopScan scan{f, remat, {}};
  for (const Edge& e : edges) {
    bool alone = true;  // no loop inside it, none around it
    for (const Edge& o : edges)
      if (&o != &e && ((o.head >= e.head && o.back <= e.back) || (o.head <= e.head && o.back >= e.back))) alone = false;
    for (size_t i = e.head; i <= e.back && alone; ++i) alone = !is_cut[i] && f.body[i].op != Op::kCall;
    if (!alone || scan.walks_own_memory(e.head, e.back)) continue;
    scan.count_writes(e.head, e.back);
    const int iv = scan.steps_uniformly(e.head, e.back);
    if (iv >= 0) out.push_back({e.head, e.back, iv, scan.start_of(e.head, e.back, iv)});
  }
  return out;
}

}  // namespace cucpu::ptx
