// Lowering: one PTX entry (and the functions it calls) -> an LLVM module
// holding its step and range functions (see abi.h).
//
// Registers become allocas (promoted to SSA by the optimizer); instructions
// are lowered one by one, in families (lower_*.cpp). Anything the lowering
// does not know raises LowerError naming the instruction and its line.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ptx/abi.h"
#include "ptx/ast.h"

namespace cucpu::ptx {

struct LowerError {
  int line, col;
  std::string what;
};

// What the lowering learned about the kernel, beside its code.
struct KernelLayout {
  std::vector<CutSite> sites;   // index = site id - 1
  uint32_t frame_bytes = 0;     // per thread (0 when the kernel has no cuts)
  uint32_t local_bytes = 0;     // .local bytes per thread
  uint32_t static_shared = 0;   // static shared bytes (the dynamic part starts here, 16-aligned)
  int num_regs = 0;
  std::string step_name, range_name;
};

// Lowers entry `entry` of `m` into a new module in `ctx`; symbol names get
// `prefix` so that several kernels can share one JIT. `big_grid`: code for
// grids wider than kMaxGridX (without the promise that index arithmetic
// does not overflow).
std::unique_ptr<llvm::Module> lower_kernel(const Module& m, int entry, const std::string& prefix,
                                           llvm::LLVMContext& ctx, KernelLayout* layout, bool big_grid);

// Lowers the device functions `funcs` (and what they call) on their own,
// with external names prefix + "_f_" + name, for calls through pointers.
std::unique_ptr<llvm::Module> lower_functions(const Module& m, const std::vector<int>& funcs, const std::string& prefix,
                                              llvm::LLVMContext& ctx);

// One function body being lowered. Shared by the lower_*.cpp families.
class FnLowering {
 public:
  FnLowering(const Module& m, const Function& f, llvm::Module& mod, llvm::Function* fn, KernelLayout& layout,
             const std::map<std::string, uint32_t>& shared_offsets, const std::string& prefix, bool is_kernel);
  void lower_body();

  // --- helpers for the instruction families ---
  [[noreturn]] void fail(const std::string& why) const;
  [[noreturn]] void unsupported() const;
  llvm::Type* llty(Ty t) const;               // the LLVM type an instruction type computes in
  llvm::Value* read(const Operand& o, Ty as); // value of a source operand as type `as`
  void write(const Operand& o, llvm::Value* v, Ty as);  // store a result into a destination
  void write_pair(const Operand& d, llvm::Value* p);    // the predicate half of "d|p", when there is one
  llvm::Value* guard_of(const Instr& in);               // the instruction's guard predicate
  llvm::Value* address(const Operand& o, Space space);  // a host pointer for [addr]
  llvm::Value* symbol_address(const std::string& sym, Space* space_out);  // window address (i64)
  llvm::Value* shared_base();
  llvm::Value* env_field(int index, llvm::Type* ty);
  llvm::Value* special(const Operand& o);
  void check_alignment(llvm::Value* ptr, uint32_t bytes);   // faults at once (atomics)
  void note_alignment(llvm::Value* ptr, uint32_t bytes);    // remembered, reported by report_misalignment
  void report_misalignment();                               // at thread stops: exits, cuts, returns
  void emit_fault(uint32_t kind, llvm::Value* address);  // in the current block, then goes on unreachable
  Space space_of(const Instr& in) const;
  Ty type_suffix(const Instr& in, int nth = 0) const;   // nth type among the suffixes
  int type_count(const Instr& in) const;
  llvm::Function* runtime(const char* name, llvm::FunctionType* ty);
  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type*> tys, llvm::ArrayRef<llvm::Value*> args);

  // --- families (each returns false when the opcode is not its own) ---
  bool lower_int(const Instr& in);
  bool lower_float(const Instr& in);
  bool lower_convert(const Instr& in);
  bool lower_memory(const Instr& in);
  bool lower_atomic(const Instr& in);
  bool lower_misc(const Instr& in);
  bool lower_cut(const Instr& in, size_t index);
  bool lower_control(const Instr& in, size_t index);
  bool lower_call(const Instr& in);
  bool lower_half(const Instr& in);
  bool lower_matrix(const Instr& in, size_t index);  // ldmatrix, mma, wmma

  // Emits a cut: stores operands (in0..in3, null for none), saves the live
  // registers, returns the site id, and continues after the resume point,
  // where the results are read back with exchange_out().
  void emit_cut(const CutSite& site, size_t index, llvm::Value* const in[kExchangeInSlots]);
  llvm::Value* exchange_out(int slot, llvm::Type* ty);

  const Module& m;
  const Function& f;
  llvm::Module& mod;
  llvm::LLVMContext& ctx;
  llvm::Function* fn;
  llvm::IRBuilder<> b;
  KernelLayout& layout;
  const std::map<std::string, uint32_t>& shared_offsets;
  std::string prefix;
  bool is_kernel;
  bool big_grid = false;
  bool has_cuts = false;
  const Instr* cur = nullptr;

  llvm::Value* frame = nullptr;   // i8* (kernels)
  llvm::Value* env = nullptr;     // BlockEnv*
  llvm::Value* tid = nullptr;     // i32: the thread's linear index in its block
  llvm::Value* tid_xyz[3] = {};   // its x, y, z (kernels: arguments; functions: derived from tid)
  llvm::StructType* env_ty = nullptr;
  std::vector<llvm::AllocaInst*> regs;
  std::map<std::string, llvm::Value*> local_vars;   // function-scope .local/.param: pointer
  std::map<std::string, llvm::Value*> param_ptrs;   // .func .param parameters: pointer argument
  std::map<std::string, uint32_t> entry_params;     // entry parameter -> offset in the buffer
  uint32_t param_bytes = 0;                         // the entry's parameter buffer size
  std::vector<llvm::BasicBlock*> label_blocks;      // by instruction index (null: no label)
  llvm::SwitchInst* resume_switch = nullptr;
  std::vector<std::vector<int>> live_across;        // by instruction index: registers saved at a cut
  std::vector<uint32_t> reg_slot;                   // frame offset of a saved register (0: none)
  llvm::BasicBlock* entry_block = nullptr;
  llvm::AllocaInst* misaligned = nullptr;          // first misaligned plain access (0: none)
};

// Registers live after each instruction that is a cut (by index), for the
// frame layout. Conservative: a register may be saved that is not needed.
std::vector<std::vector<int>> cut_liveness(const Function& f, const std::vector<bool>& is_cut);
bool is_cut_instruction(const Instr& in);
// Lays out an entry's parameters in the launch buffer; returns its size.
uint32_t layout_params(const Function& f, std::vector<ParamDesc>* out);

}  // namespace cucpu::ptx
