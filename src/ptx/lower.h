// Lowering: one PTX entry (and the functions it calls) -> an LLVM module
// holding its step and range functions (see abi.h).
//
// Registers become allocas (promoted to SSA by the optimizer); instructions
// are lowered one by one, in families (lower_*.cpp). Anything the lowering
// does not know raises LowerError naming the instruction and its line.
#pragma once

#include <deque>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "devrt/abi.h"
#include "ptx/program.h"
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
  uint32_t frame_units = 0;     // the frame's rows, in 4-byte units (abi.h)
  uint32_t local_stride = 0;    // .local bytes per thread in the frame's local area
  uint32_t local_bytes = 0;     // .local bytes per thread
  uint32_t static_shared = 0;   // static shared bytes (the dynamic part starts here, 16-aligned)
  int num_regs = 0;
  std::string step_name, range_name;
  // Frame rows that hold, at a round cut (CutKind::kRound), how far each
  // thread's loop register has gone from its start: the same in threads
  // that go round in step. The range function tests that, and then steps
  // them with the row's value as a constant (the loop register affine in
  // the thread index again). Compile time only: not in the code cache.
  struct UniformRow {
    uint32_t site, unit, elem;
  };
  std::vector<UniformRow> uniform_rows;
};

// Lowers entry `entry` of `m` into a new module in `ctx`; symbol names get
// `prefix` so that several kernels can share one JIT. `big_grid`: code for
// grids wider than kMaxGridX (without the promise that index arithmetic
// does not overflow).
std::unique_ptr<llvm::Module> lower_kernel(const Module& m, int entry, const std::string& prefix,
                                           llvm::LLVMContext& ctx, KernelLayout* layout, bool big_grid);

// Adds the range function (and the loops it dispatches to) of a lowered
// kernel whose step is `step` (lower_range.cpp).
// `specialize`: one loop per resume point (else one loop, the resume point
// a variable).
void make_ranges(llvm::Module& mod, llvm::Function* step, const KernelLayout& layout, bool specialize);

// Marks the loop whose latch is `latch`, a loop over threads that pass
// values through frame rows, with the vector width such loops run best at
// (lower_range.cpp).
void ask_frame_loop_width(llvm::BranchInst* latch);

// A whole-warp collective compiled code resolves itself (lower_warps.cpp).
bool warp_resolvable(const CutSite& cs);
// The metadata on each frame-row access of a step: !{site, unit, element bytes}.
constexpr const char* kRowTag = "cucpu.row";
// The metadata on a frame-row store of an integer whose bits a reader may
// see other than as an f32's (the NaN rule, nan_canonical.cpp): a register
// that is not float_bits_only, or a shuffle's value whose result is not.
constexpr const char* kBitsSeenTag = "cucpu.bits_seen";
// By register of `f`: a 32-bit integer register that only ever carries an
// f32's bits: every read of it is a mov into an f32 register, or the value
// of a shfl whose destination is such a register (nvcc's float shuffles).
std::vector<bool> float_bits_only(const Function& f);
// The metadata on each plain (not volatile, not atomic) load from the
// global space: the loads the first region's loop prefetches for the next
// block (lower_range.cpp).
constexpr const char* kGlobalLoadTag = "cucpu.global_load";
// The range function of a kernel with warp_resolvable sites: runs whole
// warps through regions and those collectives; `steps[r]` resumes at r;
// other spans go to `fallback` (a range function).
llvm::Function* make_warp_machine(llvm::Module& mod, const std::vector<llvm::Function*>& steps, const KernelLayout& layout,
                                  llvm::Function* fallback);

// Registers a thread may recompute at a resume point rather than save in
// its frame: each is written by exactly one unguarded, pure instruction
// whose sources are immediates, symbols, launch-invariant special
// registers, kernel parameters, or such registers (lower_remat.cpp).
struct Remat {
  std::vector<int> def;  // by register: its defining instruction, or -1 when it is not rematerializable
  std::vector<int> konst;  // by register: the mov of an immediate that is its only write, or -1
  // The instructions to run again, in order, so that `regs` hold their values.
  std::vector<int> closure(const Function& f, const std::vector<int>& regs) const;
};
// `max_chain`: the most instructions one register may be recomputed with
// (a resumed thread runs them each time it resumes).
constexpr int kRematChain = 12;
Remat remat_analysis(const Function& f, const std::map<std::string, uint32_t>& entry_params, int max_chain = kRematChain);

// A loop a block's threads go round in step (round_back_edges).
struct RoundEdge {
  size_t head;  // the loop's first instruction (its label's)
  size_t back;  // the backward branch
  int iv;       // the register the loop steps
  int start;    // the instruction that starts it, when a resumed thread can recompute that (else -1)
};

// Where a kernel's body is cut (the first stage of lowering a kernel,
// plan_cuts in lower_cuts.cpp): barriers, collectives, device fences, the
// back edges of spin loops (yields) and of grid- and block-stride loops
// (rounds); and which registers a resumed thread recomputes rather than
// saves. A function's plan has no cuts.
struct CutPlan {
  std::vector<bool> is_cut;                 // by instruction index
  std::vector<bool> is_yield;               // by instruction index: spin_back_edges
  std::vector<bool> is_round;               // by instruction index: round_back_edges
  std::map<size_t, RoundEdge> round_edges;  // by instruction index (the back edge)
  std::map<size_t, size_t> round_heads;     // a round loop's head -> its back edge
  Remat remat;
  Remat round_remat;  // remat_analysis with kRoundChain: round loops' starts
  bool any = false;   // whether any instruction is a cut
};
CutPlan plan_cuts(const Function& kernel, const std::map<std::string, uint32_t>& entry_params);

// The kernel with every call of a function that holds a cut (a barrier or
// a warp collective, itself or in what it calls) replaced by that
// function's body (inline_cuts.cpp); nullopt when it makes no such call.
// Refuses (LowerError) recursion through such functions.
std::optional<Function> inline_cut_calls(const Module& m, const Function& kernel);

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
  // lower_body's stages, in order (lower_control.cpp).
  void bind_arguments();
  void lay_out_frame();
  void emit_instructions();
  void tag_accesses();

  // --- helpers for the instruction families ---
  [[noreturn]] void fail(const std::string& why) const;
  [[noreturn]] void unsupported() const;
  llvm::Type* llty(Ty t) const;               // the LLVM type an instruction type computes in
  llvm::Value* read(const Operand& o, Ty as); // value of a source operand as type `as`
  llvm::Value* operand_value(const Instr& in, size_t i, Ty as);  // read() of operand i, which must exist
  void write(const Operand& o, llvm::Value* v, Ty as);  // store a result into a destination
  void write_pair(const Operand& d, llvm::Value* p);    // the predicate half of "d|p", when there is one
  llvm::Value* guard_of(const Instr& in);               // the instruction's guard predicate
  llvm::Value* address(const Operand& o, Space space);  // a host pointer for [addr]
  llvm::Value* symbol_address(const std::string& sym, Space* space_out);  // window address (i64)
  llvm::Value* shared_base();
  llvm::Value* env_field(int index, llvm::Type* ty);
  llvm::Value* special(const Operand& o);
  llvm::Value* alignment_operand(llvm::Value* ptr, uint32_t bytes);
  void check_alignment(llvm::Value* ptr, uint32_t bytes);   // faults at once (atomics)
  void note_alignment(llvm::Value* ptr, uint32_t bytes);    // remembered, reported by report_misalignment
  void report_misalignment();                               // at thread stops: exits, cuts, returns
  void emit_fault(uint32_t kind, llvm::Value* address);  // in the current block, then goes on unreachable
  llvm::BasicBlock* stop_poll(llvm::BasicBlock* target);  // lower_control.cpp
  const Operand& vector_elements(const Operand& o, int vec);  // lower_memory.cpp
  std::deque<Operand> spelled;  // operands vector_elements made (a deque: references stay valid)
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
  llvm::Value* plain_rmw(llvm::AtomicRMWInst::BinOp k, llvm::Value* at, llvm::Value* v, llvm::Align align);
  bool lower_misc(const Instr& in);
  // lower_misc's instructions (lower_misc.cpp).
  bool lower_mov(const Instr& in);
  bool lower_prmt(const Instr& in);
  bool lower_shf(const Instr& in);
  bool lower_lop3(const Instr& in);
  bool lower_dot_product(const Instr& in);  // dp4a, dp2a
  bool lower_bmsk(const Instr& in);
  bool lower_szext(const Instr& in);
  bool lower_fns(const Instr& in);
  bool lower_fence(const Instr& in);        // membar, fence (outside cuts)
  bool lower_nanosleep(const Instr& in);
  bool lower_mbarrier(const Instr& in);
  bool lower_hint(const Instr& in);         // prefetch, griddepcontrol...: nothing to do on a CPU
  bool lower_cp(const Instr& in);
  bool lower_copysign(const Instr& in);
  bool lower_testp(const Instr& in);
  // mbarrier (lower_misc.cpp): the barrier object at operand k, checked;
  // and a call of cucpu_rt_mbarrier on it.
  llvm::Value* mbarrier_object(const Instr& in, size_t k);
  llvm::Value* mbarrier_call(llvm::Value* object, MbarrierOp op, llvm::Value* value);
  bool lower_cut(const Instr& in, size_t index);
  bool lower_control(const Instr& in, size_t index);
  bool lower_call(const Instr& in);
  bool lower_half(const Instr& in);
  bool lower_matrix(const Instr& in, size_t index);  // ldmatrix, mma, wmma
  void lower_cvt_pack(const Instr& in);  // lower_convert.cpp
  llvm::AllocaInst* carry_slot();        // lower_int.cpp
  bool lower_video(const Instr& in);  // lower_video.cpp
  void lower_scalar_video(const Instr& in);
  bool lower_simd_video(const Instr& in);
  bool lower_texture(const Instr& in);               // tex, tld4, txq, suld, sust, suq
  llvm::Value* texture_handle(const Operand& o);
  llvm::Value* word_slot(unsigned words);
  llvm::Value* texture_coords(const Operand& o);
  void lower_instr(const Instr& in, size_t index);   // any instruction but bra, without its guard
  bool lower_by_family(const Instr& in, size_t index);  // false: a form cucpu does not compile

  // Emits a cut: stores operands (in0..in3, null for none), saves the live
  // registers, returns the site id, and continues after the resume point,
  // where the results are read back with exchange_out().
  // `results`, when given, are stored in the result slots before the cut
  // (a matrix cut's accumulator).
  void emit_cut(const CutSite& site, size_t index, llvm::Value* const in[kExchangeInSlots],
                llvm::Value* const* results = nullptr);
  llvm::Value* exchange_out(int slot, llvm::Type* ty);
  // The address of this thread's element of the frame row at `unit` (abi.h).
  llvm::Value* frame_row(uint32_t unit, uint32_t elem_bytes);
  // A load or store of the frame row at `unit`: its alignment, and the
  // row's TBAA tag, which tells the optimizer rows do not overlap.
  llvm::Instruction* frame_access(llvm::Instruction* access, uint32_t unit, uint32_t elem_bytes);

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
  bool combine_reds = false;  // the kernel's global reductions go to the worker's table (red_combine.h)
  bool instrument = false;    // global and generic accesses call cucpu_rt_check_access first (check_rt.h)
  // Emits the check of an access of `bytes` at `p` (kAccess* flags) in
  // `space` (global, generic or shared; others are not checked), when instrumenting.
  void check_access(llvm::Value* p, uint32_t bytes, uint32_t flags, Space space);
  bool specialize = false;   // kernels with cuts: a range loop per resume point
  const Instr* cur = nullptr;

  llvm::Value* frame = nullptr;   // i8*: the block's frames (kernels)
  llvm::Value* pitch = nullptr;   // i64: bytes between frame rows of 4-byte units
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
  std::vector<uint32_t> reg_unit;                   // frame row of a saved register (0: none)
  std::vector<bool> float_bits;                     // float_bits_only(f), made at the first cut
  std::map<size_t, llvm::BasicBlock*> round_cuts;   // by back edge: the cut every way into the loop's head takes
  // The block of a round loop's cut (made at the first call): saves what
  // the loop's head needs and returns; resumed, goes to the head. The loop
  // is entered through it too, so that a step runs one trip and the first
  // region holds no trip of its own.
  llvm::BasicBlock* round_cut(size_t back);
  std::vector<int> reg_mentions;                    // by register: the instructions that name it (guards included)
  std::map<uint32_t, llvm::MDNode*> row_tags;       // TBAA access tags, by a frame row's first unit
  llvm::MDNode* kernel_tag = nullptr;               // TBAA access tag of the kernel's own memory accesses
  CutPlan cuts;                                    // plan_cuts (kernels); no cuts in functions
  llvm::BasicBlock* entry_block = nullptr;
  llvm::AllocaInst* misaligned = nullptr;          // i8: low address bits of plain accesses, or-ed (0: all aligned)
  llvm::AllocaInst* spin_count = nullptr;          // spin loops' trips round since the step began
  std::vector<llvm::Instruction*> nc_loads;        // ld.global.nc loads (scope_read_only_loads)
  void scope_read_only_loads();                    // tag_accesses' second half
};

// Registers live after each instruction that is a cut (by index), for the
// frame layout. Conservative: a register may be saved that is not needed.
// A back edge that is a cut (`resumes_at_target`: spins and rounds) saves
// what the loop's start needs.
std::vector<std::vector<int>> cut_liveness(const Function& f, const std::vector<bool>& is_cut,
                                           const std::vector<bool>& resumes_at_target = {});
// The instructions each may run next.
std::vector<std::vector<int>> successors(const Function& f);
// The index of the instruction a `bra` to a label goes to; -1 for anything
// else (not a bra, an unknown label).
int branch_target(const Function& f, const Instr& in);
// By instruction index: the backward branches of spin-wait loops, loops
// that one of their branches leaves or repeats on what a volatile, relaxed
// or acquire load or an atomic read in them. A thread taking such a branch
// yields (CutKind::kYield): the other threads of its block run before it
// goes on, as independent thread scheduling lets a GPU's, so that a thread
// waiting for another's store sees it.
std::vector<bool> spin_back_edges(const Function& f);
// By instruction index: the backward branches of loops a block's threads go
// round in step, one trip a step (CutKind::kRound), so that each trip runs
// as a loop over the threads the vectorizer widens. Such a loop contains no
// other loop, cut or call, lies in no other loop, and steps a register by
// a uniform amount, leaving on its comparison with a uniform bound (a
// grid- or block-stride loop); not one that does integer work only and
// walks a pointer of its own a few bytes a trip (a row per thread, whose
// own loop widens better). None when CUCPU_LOOP_ROUNDS=0.
// `remat`: as remat_analysis with kRoundChain (a round loop's start is
// recomputed at each trip, but outside the loop over the threads where it
// is uniform, so it may be long: cooperative groups' 64-bit grid ranks).
constexpr int kRoundChain = 48;
std::vector<RoundEdge> round_back_edges(const Function& f, const Remat& remat, const std::vector<bool>& is_cut);
bool loop_rounds_enabled();
// The sum over the kernel's regions (the code from its start, or from after
// a cut, to the next cuts) of their sizes in instructions.
size_t region_sizes(const Function& f, const std::vector<bool>& is_cut);
bool is_cut_instruction(const Instr& in);
// membar.gl/.sys and fence at gpu or system scope: cuts in a kernel's own
// body (lower_warp.cpp says why); plain fences in the functions it calls.
bool is_device_fence(const Instr& in);
// Appends the registers operand `o` names (its elements' too).
void collect_regs(const Operand& o, std::vector<int>& out);
// Per register of `f`: how many instructions name it (guards included).
std::vector<int> register_mentions(const Function& f);
// Lays out an entry's parameters in the launch buffer; returns its size.
uint32_t layout_params(const Function& f, std::vector<ParamDesc>* out);

}  // namespace cucpu::ptx
