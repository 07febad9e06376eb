// The parsed form of a PTX module: what the parser builds and the lowering
// reads. Plain data; names are resolved to indices where the parser can.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ptx/opcode.h"
#include "ptx/program.h"

namespace cucpu::ptx {

// PTX fundamental types (the .type suffixes).
enum class Ty : uint8_t {
  kNone, kPred,
  kB8, kB16, kB32, kB64, kB128,
  kU8, kU16, kU32, kU64,
  kS8, kS16, kS32, kS64,
  kF16, kF16x2, kBF16, kBF16x2, kF32, kF64, kTF32,
  kE4M3x2, kE5M2x2, kS16x2, kU16x2,
};

// Parses a suffix without its dot ("u32"); kNone when it is not a type.
Ty type_from_name(std::string_view s);
const char* type_name(Ty t);
int type_bits(Ty t);  // storage width; 1 for predicates
inline bool is_float(Ty t) {
  return t == Ty::kF16 || t == Ty::kBF16 || t == Ty::kF32 || t == Ty::kF64 || t == Ty::kTF32;
}
inline bool is_signed(Ty t) { return t == Ty::kS8 || t == Ty::kS16 || t == Ty::kS32 || t == Ty::kS64; }

enum class Space : uint8_t { kGeneric, kGlobal, kConst, kShared, kLocal, kParam, kReg };

// Special registers (%tid.x and friends); `comp` selects x/y/z.
enum class SReg : uint8_t {
  kTid, kNtid, kCtaid, kNctaid, kLaneId, kWarpId, kNWarpId, kSmId, kNSmId, kGridId,
  kLanemaskEq, kLanemaskLe, kLanemaskLt, kLanemaskGe, kLanemaskGt,
  kClock, kClockHi, kClock64, kGlobalTimer, kGlobalTimerLo, kGlobalTimerHi,
  kDynamicSmemSize, kTotalSmemSize, kAggrSmemSize, kClusterId, kNClusterId, kClusterCtaId,
  kClusterNCtaId, kClusterCtaRank, kClusterNCtaRank, kIsExplicitCluster, kEnvReg, kPm,
  kReservedSmemBegin, kReservedSmemEnd, kReservedSmemCap, kReservedSmem0, kReservedSmem1,
};

struct Operand {
  enum class Kind : uint8_t { kNone, kReg, kImm, kFloat, kSym, kAddr, kVec, kSpecial, kSink, kList };
  Kind kind = Kind::kNone;
  bool neg = false;        // !%p, or a unary minus on a register (-%r: not PTX, refused)
  int reg = -1;            // kReg; kAddr with a register base
  int pair = -1;           // "d|p": the predicate half, a register index
  int elem = -1;           // kReg: the element of a vector register named (%v.x is 0, .w 3), or -1
  int sel = -1;            // kReg: a video instruction's selector: byte .b0-.b3 (0-3), half .h0/.h1 (4, 5), or -1
  std::string sym;         // kSym; kAddr with a symbol base
  int64_t imm = 0;         // kImm; kAddr offset
  uint64_t fbits = 0;      // kFloat: raw bits
  int fwidth = 0;          // kFloat: 32 (0f), 64 (0d), or 0 for a decimal literal (value in fvalue)
  double fvalue = 0;
  SReg sreg = SReg::kTid;  // kSpecial
  int comp = 0;            // kSpecial: 0..2 for .x/.y/.z
  std::vector<Operand> elems;  // kVec ({a,b}) and kList ((a,b) in calls)
};

struct Instr {
  int line = 0, col = 0;
  int guard = -1;            // predicate register guarding the instruction, or -1
  bool guard_neg = false;
  Op op = Op::kCount;        // ld, add, shfl... (kCount: not yet set)
  std::vector<std::string> mods;  // the dot suffixes in order, without dots
  std::vector<Operand> args;
  bool has(std::string_view m) const {
    for (auto& x : mods)
      if (x == m) return true;
    return false;
  }
};

struct RegDecl {
  std::string name;
  Ty ty = Ty::kNone;
  int vec = 1;  // .v2/.v4 register (rare)
};

// A variable: module scope (.global/.const/.shared) or function scope
// (.local/.shared/.param inside a body).
struct VarDecl {
  std::string name;
  Space space = Space::kGlobal;
  Ty ty = Ty::kB8;
  uint32_t align = 0;        // 0: natural
  uint64_t size = 0;         // bytes (0 with `unsized`: an extern array, dynamic shared memory)
  bool unsized = false;
  bool is_extern = false, visible = false, managed = false;
  std::vector<uint8_t> init;
  std::vector<GlobalDesc::Reloc> relocs;  // targets index the module's globals, set by the lowering
  std::vector<std::pair<uint64_t, std::string>> sym_inits;  // (offset, "sym+addend") until resolved
};

struct ParamDecl {
  std::string name;
  Ty ty = Ty::kB8;
  Space space = Space::kParam;  // .param, or .reg for old-style .func parameters
  uint32_t align = 0;
  uint64_t size = 0;            // bytes
};

struct Function {
  std::string name;
  bool is_entry = false, is_extern = false, visible = false, has_body = false, noreturn = false;
  int line = 0;
  std::vector<ParamDecl> rets, params;
  std::vector<RegDecl> regs;
  std::vector<VarDecl> vars;     // body-scope variables, renamed to be unique
  std::vector<Instr> body;
  std::unordered_map<std::string, int> labels;  // label -> index of the instruction it precedes
  uint32_t maxntid[3] = {}, reqntid[3] = {};
  uint32_t minnctapersm = 0, maxnreg = 0;
};

struct Module {
  int version_major = 0, version_minor = 0;
  int target_sm = 0;
  std::vector<std::string> target_mods;  // "texmode_independent", "debug", "sm_90a"...
  int address_size = 64;
  std::vector<VarDecl> vars;       // module-scope variables, in declaration order
  // By index in vars: the variable's place among those backed by memory
  // (backed_by_memory: Program::globals() and BlockEnv::globals), or -1.
  std::vector<int> global_slot;
  std::vector<Function> funcs;
  std::unordered_map<std::string, int> func_index, var_index;
  // The place of entry funcs[fi] among the entries (Program::entries() order).
  uint64_t entry_ordinal(int fi) const {
    uint64_t n = 0;
    for (int i = 0; i < fi; ++i) n += funcs[static_cast<size_t>(i)].is_entry ? 1 : 0;
    return n;
  }
};

// Module variables the runtime backs with memory of their own: .global and
// .const. Module-scope .shared ones live in each block's shared arena.
inline bool backed_by_memory(const VarDecl& v) { return v.space == Space::kGlobal || v.space == Space::kConst; }

// The special register named `base` ("%tid"), and whether it takes .x/.y/.z.
bool special_register(std::string_view base, SReg* out, bool* has_comp);

// Parses `text`; on failure returns false and sets *error to "line L, column C: reason".
bool parse_module(std::string_view text, Module* out, std::string* error);

}  // namespace cucpu::ptx
