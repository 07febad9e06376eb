// The runner's side of the warp matrix cuts (ldmatrix, mma, wmma.mma):
// gathers a warp's fragments, computes, and hands each lane its part.
#pragma once

#include <cstdint>

#include "devrt/abi.h"

namespace cucpu::devrt {

// in[l] / out[l]: the exchange areas of lane l (null when lane l is not
// in the group). ldmatrix reads the rows at the addresses the lanes supply.
void resolve_ldmatrix(const CutSite& site, uint64_t* const in[32], uint64_t* const out[32]);
void resolve_mma(const CutSite& site, uint64_t* const in[32], uint64_t* const out[32]);

// wmma fragments are opaque to programs, so cucpu picks their layout: lane
// l holds elements l*E .. l*E+E-1 of its matrix in row-major order (E = the
// matrix's elements / 32), packed from bit 0 of its first register up;
// registers past those (f16 fragments have more than they need) repeat
// them from the first.
struct WmmaDims {
  int m, n, k;
};
WmmaDims wmma_dims(uint8_t mode);  // mode: a kWmma* shape
// The bits of an element of an input type (kMmaF16 ...).
int wmma_input_bits(uint8_t input);

// The b32 words of an mma.sync's A, B and C (= D) fragments per lane, for
// the shapes and inputs the ISA lays out by lane (tf32, f64, s8, u8).
struct MmaFragments {
  int a_words, b_words, c_words;
};
MmaFragments mma_fragments(uint8_t mode, uint8_t input);

}  // namespace cucpu::devrt
