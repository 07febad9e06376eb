// The PTX type names and the special registers: tables shared by the
// parser and the lowering.
#include <string_view>

#include "ptx/ast.h"

namespace cucpu::ptx {

Ty type_from_name(std::string_view s) {
  struct E {
    const char* n;
    Ty t;
  };
  static const E kTypes[] = {
      {"pred", Ty::kPred}, {"b8", Ty::kB8}, {"b16", Ty::kB16}, {"b32", Ty::kB32}, {"b64", Ty::kB64},
      {"b128", Ty::kB128}, {"u8", Ty::kU8}, {"u16", Ty::kU16}, {"u32", Ty::kU32}, {"u64", Ty::kU64},
      {"s8", Ty::kS8}, {"s16", Ty::kS16}, {"s32", Ty::kS32}, {"s64", Ty::kS64}, {"f16", Ty::kF16},
      {"f16x2", Ty::kF16x2}, {"bf16", Ty::kBF16}, {"bf16x2", Ty::kBF16x2}, {"f32", Ty::kF32},
      {"f64", Ty::kF64}, {"tf32", Ty::kTF32}, {"e4m3x2", Ty::kE4M3x2}, {"e5m2x2", Ty::kE5M2x2},
      {"s16x2", Ty::kS16x2}, {"u16x2", Ty::kU16x2},
  };
  for (const E& e : kTypes)
    if (s == e.n) return e.t;
  return Ty::kNone;
}

const char* type_name(Ty t) {
  static const char* const kNames[] = {"none", "pred", "b8", "b16", "b32", "b64", "b128", "u8", "u16",
                                       "u32", "u64", "s8", "s16", "s32", "s64", "f16", "f16x2", "bf16",
                                       "bf16x2", "f32", "f64", "tf32", "e4m3x2", "e5m2x2", "s16x2", "u16x2"};
  return kNames[static_cast<int>(t)];
}

int type_bits(Ty t) {
  switch (t) {
    case Ty::kNone: return 0;
    case Ty::kPred: return 1;
    case Ty::kB8: case Ty::kU8: case Ty::kS8: return 8;
    case Ty::kB16: case Ty::kU16: case Ty::kS16: case Ty::kF16: case Ty::kBF16: case Ty::kE4M3x2: case Ty::kE5M2x2: return 16;
    case Ty::kB32: case Ty::kU32: case Ty::kS32: case Ty::kF32: case Ty::kF16x2: case Ty::kBF16x2: case Ty::kTF32:
    case Ty::kS16x2: case Ty::kU16x2: return 32;
    case Ty::kB64: case Ty::kU64: case Ty::kS64: case Ty::kF64: return 64;
    case Ty::kB128: return 128;
  }
  return 0;
}

bool special_register(std::string_view base, SReg* out, bool* has_comp) {
  struct Entry {
    const char* name;
    SReg r;
    bool has_comp;
  };
  static const Entry kTable[] = {
      {"%tid", SReg::kTid, true}, {"%ntid", SReg::kNtid, true}, {"%ctaid", SReg::kCtaid, true},
      {"%nctaid", SReg::kNctaid, true}, {"%laneid", SReg::kLaneId, false}, {"%warpid", SReg::kWarpId, false},
      {"%nwarpid", SReg::kNWarpId, false}, {"%smid", SReg::kSmId, false}, {"%nsmid", SReg::kNSmId, false},
      {"%gridid", SReg::kGridId, false}, {"%lanemask_eq", SReg::kLanemaskEq, false},
      {"%lanemask_le", SReg::kLanemaskLe, false}, {"%lanemask_lt", SReg::kLanemaskLt, false},
      {"%lanemask_ge", SReg::kLanemaskGe, false}, {"%lanemask_gt", SReg::kLanemaskGt, false},
      {"%clock", SReg::kClock, false}, {"%clock_hi", SReg::kClockHi, false}, {"%clock64", SReg::kClock64, false},
      {"%globaltimer", SReg::kGlobalTimer, false}, {"%globaltimer_lo", SReg::kGlobalTimerLo, false},
      {"%globaltimer_hi", SReg::kGlobalTimerHi, false}, {"%dynamic_smem_size", SReg::kDynamicSmemSize, false},
      {"%total_smem_size", SReg::kTotalSmemSize, false}, {"%aggr_smem_size", SReg::kAggrSmemSize, false},
      {"%clusterid", SReg::kClusterId, true}, {"%nclusterid", SReg::kNClusterId, true},
      {"%cluster_ctaid", SReg::kClusterCtaId, true}, {"%cluster_nctaid", SReg::kClusterNCtaId, true},
      {"%cluster_ctarank", SReg::kClusterCtaRank, false}, {"%cluster_nctarank", SReg::kClusterNCtaRank, false},
      {"%is_explicit_cluster", SReg::kIsExplicitCluster, false},
      {"%reserved_smem_offset_begin", SReg::kReservedSmemBegin, false},
      {"%reserved_smem_offset_end", SReg::kReservedSmemEnd, false},
      {"%reserved_smem_offset_cap", SReg::kReservedSmemCap, false},
      {"%reserved_smem_offset_0", SReg::kReservedSmem0, false},
      {"%reserved_smem_offset_1", SReg::kReservedSmem1, false},
  };
  if (base.rfind("%envreg", 0) == 0) {
    *out = SReg::kEnvReg;
    *has_comp = false;
    return true;
  }
  if (base.rfind("%pm", 0) == 0) {
    *out = SReg::kPm;
    *has_comp = false;
    return true;
  }
  for (const Entry& e : kTable)
    if (base == e.name) {
      *out = e.r;
      *has_comp = e.has_comp;
      return true;
    }
  return false;
}

}  // namespace cucpu::ptx
