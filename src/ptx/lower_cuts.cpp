// Where a kernel's body is cut (lower.h, CutPlan): the first stage of
// lowering a kernel, an analysis of its PTX alone.
#include "ptx/lower.h"

namespace cucpu::ptx {

bool is_device_fence(const Instr& in) {
  if (in.op != Op::kMembar && in.op != Op::kFence) return false;
  for (const std::string& m : in.mods)
    if (m == "cta" || m == "proxy" || m == "mbarrier_init" || m.rfind("proxy", 0) == 0) return false;
  return true;
}

bool is_cut_instruction(const Instr& in) {
  if (in.op == Op::kWmma) return !in.mods.empty() && in.mods[0] == "mma";  // its loads and stores are a thread's own
  return op_has(in.op, kCut);
}

CutPlan plan_cuts(const Function& kernel, const std::map<std::string, uint32_t>& entry_params) {
  const Function& f = kernel;
  CutPlan p;
  p.is_cut.assign(f.body.size(), false);
  p.is_yield = spin_back_edges(f);
  for (size_t i = 0; i < f.body.size(); ++i)
    if (is_cut_instruction(f.body[i]) || is_device_fence(f.body[i]) || p.is_yield[i]) p.is_cut[i] = p.any = true;
  p.remat = remat_analysis(f, entry_params);
  p.round_remat = remat_analysis(f, entry_params, kRoundChain);
  p.is_round.assign(f.body.size(), false);
  for (const RoundEdge& e : round_back_edges(f, p.round_remat, p.is_cut)) {
    p.is_round[e.back] = p.is_cut[e.back] = p.any = true;
    p.round_edges[e.back] = e;
    p.round_heads[e.head] = e.back;
  }
  return p;
}

}  // namespace cucpu::ptx
