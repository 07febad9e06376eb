// The runner's side of the warp matrix cuts (ldmatrix, mma, wmma.mma):
// gathers a warp's fragments, computes, and hands each lane its part.
#pragma once

#include <cstdint>

#include "ptx/abi.h"

namespace cucpu::ptx {

// in[l] / out[l]: the exchange areas of lane l (null when lane l is not
// in the group). ldmatrix reads the rows at the addresses the lanes supply.
void resolve_ldmatrix(const CutSite& site, uint64_t* const in[32], uint64_t* const out[32]);
void resolve_mma(const CutSite& site, uint64_t* const in[32], uint64_t* const out[32]);

}  // namespace cucpu::ptx
