// Spin-wait loops: the back edges where a thread must let the others of its
// block run (see lower.h, spin_back_edges).
#include "ptx/lower.h"

namespace cucpu::ptx {
namespace {

// A read that can see another thread's write while the loop runs: a
// volatile, relaxed or acquire load, an atomic (a lock's compare-and-
// swap), or an mbarrier's test. A plain load may be hoisted out of a loop; these may not.
bool synchronizing_read(const Instr& in) {
  if (in.op == Op::kAtom) return true;
  if (in.op == Op::kMbarrier) return !in.mods.empty() && (in.mods[0] == "test_wait" || in.mods[0] == "try_wait");
  if (in.op != Op::kLd && in.op != Op::kLdu) return false;
  for (const std::string& m : in.mods)
    if (m == "volatile" || m == "relaxed" || m == "acquire" || m == "mmio") return true;
  return false;
}

}  // namespace

std::vector<bool> spin_back_edges(const Function& f) {
  const size_t n = f.body.size();
  std::vector<bool> out(n, false);
  std::vector<bool> tainted(f.regs.size());
  std::vector<int> regs;
  for (size_t j = 0; j < n; ++j) {
    const int back = branch_target(f, f.body[j]);
    if (back < 0 || static_cast<size_t>(back) > j) continue;
    const size_t h = static_cast<size_t>(back);  // the loop is [h, j]
    bool any = false;
    for (size_t i = h; i <= j && !any; ++i) any = synchronizing_read(f.body[i]);
    if (!any) continue;
    // What the loop's synchronizing reads give, and what is computed from
    // it inside the loop (to a fixed point: the loop may compute in any order).
    std::fill(tainted.begin(), tainted.end(), false);
    bool grew = true;
    for (int round = 0; grew && round < 8; ++round) {
      grew = false;
      for (size_t i = h; i <= j; ++i) {
        const Instr& in = f.body[i];
        if (in.args.empty() || !op_has(in.op, kDest)) continue;
        bool from = synchronizing_read(in);
        for (size_t k = 1; k < in.args.size() && !from; ++k) {
          regs.clear();
          collect_regs(in.args[k], regs);
          for (int r : regs) from = from || tainted[static_cast<size_t>(r)];
        }
        if (!from) continue;
        regs.clear();
        collect_regs(in.args[0], regs);
        for (int r : regs)
          if (!tainted[static_cast<size_t>(r)]) tainted[static_cast<size_t>(r)] = grew = true;
      }
    }
    // A spin: the loop's way out, or its way back, is decided by it (a
    // branch that only skips work inside the loop is not: a work queue's
    // loop runs on without waiting for anyone).
    for (size_t i = h; i <= j; ++i) {
      const Instr& in = f.body[i];
      const int to = branch_target(f, in);
      if (to < 0 || in.guard < 0 || !tainted[static_cast<size_t>(in.guard)]) continue;
      const size_t t = static_cast<size_t>(to);
      if (t <= h || t > j) {
        out[j] = true;
        break;
      }
    }
  }
  return out;
}

}  // namespace cucpu::ptx
