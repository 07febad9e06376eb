// PTX opcodes: the enum the parser maps each instruction name to, once,
// and what the compiler knows of each, read from one table (opcodes.inc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cucpu::ptx {

// The part of the lowering that emits an instruction (FnLowering::lower_instr).
enum class Family : uint8_t {
  kArith,       // integer, float and half arithmetic; the instruction's type picks which
  kConvert,     // cvt
  kMemory,      // loads, stores, address conversions
  kAtomic,      // atom, red
  kControl,     // branches, returns, traps
  kCall,        // call
  kCollective,  // barriers and warp collectives (always cuts, lower_warp.cpp)
  kMatrix,      // ldmatrix, mma, wmma
  kVideo,       // the scalar and SIMD video instructions
  kTexture,     // textures and surfaces
  kMisc,        // moves, bit permutes, fences, mbarriers, hints
  kMissing,     // in the ISA, not compiled by cucpu
};

// What the compiler needs to know of an opcode, as bits of OpInfo::facts.
enum OpFact : uint32_t {
  kDest = 1u << 0,         // its first operand is a destination it always writes
  kCut = 1u << 1,          // the block's threads (or a warp's) meet there (is_cut_instruction)
  kRemat = 1u << 2,        // pure: a resumed thread may compute it again (lower_remat.cpp)
  kAffine = 1u << 3,       // keeps a value affine in uniform inputs: a round loop's start (lower_rounds.cpp)
  kEndsFlow = 1u << 4,     // unguarded, the next instruction does not run after it
  kOtherAccess = 1u << 5,  // reaches memory other than by ld, st, atom and red (copies, matrices, textures)
};

enum class Op : uint8_t {
#define PTX_OP(id, name, family, facts) id,
#include "ptx/opcodes.inc"
#undef PTX_OP
  kCount
};

struct OpInfo {
  const char* name;
  Family family;
  uint32_t facts;
};

const OpInfo& op_info(Op op);
inline std::string op_name(Op op) { return op_info(op).name; }
inline bool op_has(Op op, uint32_t fact) { return (op_info(op).facts & fact) != 0; }
// The opcode spelled `name` ("ld"); false when the ISA has no such instruction.
bool op_from_name(std::string_view name, Op* out);

}  // namespace cucpu::ptx
