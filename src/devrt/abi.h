// The contract between compiled kernel code and the block runner.
//
// Every entry compiles to a *step function* that runs one thread from a
// resume point (0: the start) until it exits (returns 0) or reaches a cut:
// a barrier or a warp collective (returns the cut's site id, >= 1). Before
// returning at a cut, the thread stores the registers live across it (less
// those it can recompute) into its frame and the cut's operands (less those
// known at compile time: CutSite::konst) into the frame's exchange area; the
// runner resolves the cut (a barrier releases, a shuffle exchanges values)
// and writes the results into the exchange area; stepping again with that
// site id as the resume point reloads the registers and results and goes
// on. A kernel with no cuts runs each thread to the end in one step. The
// step is internal to the compiled code.
//
// A *range function*
//   uint32_t run(uint8_t* frames, uint64_t pitch, BlockEnv* env, uint32_t first,
//                uint32_t last, uint32_t resume, uint32_t* codes)
// steps threads [first, last) from one resume point, with the block's
// frames (below; null without cuts), stores each step's result in
// codes[t], and returns the result they share (or kMixedCodes).
#pragma once

#include <cstdint>

namespace cucpu::devrt {

class DeviceRuntime;  // program.h

// The largest grid in x compiled code is built for: its index arithmetic
// may then be proven free of overflow (ctaid.x * ntid.x + tid.x < 2^31).
// Larger grids run through code compiled without that promise.
constexpr uint32_t kMaxGridX = (1u << 21) - 1;

// Read by compiled code (field order is the LLVM struct type in lower.cpp).
struct BlockEnv {
  uint32_t ntid[3];
  uint32_t nctaid[3];
  uint32_t ctaid[3];
  uint32_t nthreads;            // ntid.x * ntid.y * ntid.z
  uint8_t* shared;              // the block's shared arena
  const uint8_t* params;        // the launch's parameter buffer
  void* const* globals;         // module variables, in Program::globals() order
  uint32_t dynamic_shared_offset;  // where dynamic shared memory starts in the arena
  uint32_t dynamic_shared_bytes;
  uint32_t total_shared_bytes;
  uint32_t current_tid;         // the thread being stepped (written by the range function)
  // kStreamSites words of the worker's own: where each of the first
  // region's first global loads would go on if the next block continued
  // the range this one read. Compiled code alone reads and writes them
  // (lower_range.cpp: next-block prefetch); a stale value only costs a
  // useless prefetch, so they live as long as the worker and are never reset.
  uint64_t* stream_next;
  uint64_t grid_workspace;      // %envreg1 (high half) and %envreg2 (low): a cooperative launch's grid barrier
  // Nonzero once the launch must end (the watchdog's word, exec/watchdog.h;
  // never null). Kernels compiled with polls (base/kernel_timeout.h) read it
  // at every back edge and end the block with a kTimedOut fault; the runner
  // reads it between blocks and cuts.
  const uint32_t* stop;
  DeviceRuntime* device_runtime;  // LaunchConfig::device_runtime (read by runtime.cpp alone)
};
constexpr unsigned kStreamSites = 4;

// The reserved shared memory every block has after its own (static, then
// dynamic, then this, 16-byte aligned): %reserved_smem_offset_begin/_end/
// _cap describe it, %reserved_smem_offset_0 and _1 are its two halves
// (cooperative groups keep their multi-warp scratch at _1). total_shared_bytes
// counts it; %total_smem_size does not. The device's
// RESERVED_SHARED_MEMORY_PER_BLOCK.
constexpr uint32_t kReservedShared = 1024;
constexpr uint64_t reserved_shared_begin(uint64_t dynamic_offset, uint64_t dynamic_bytes) {
  return (dynamic_offset + dynamic_bytes + 15) / 16 * 16;
}

// The frames of a block of a kernel with cuts, structure of arrays (so
// that loops over threads vectorize): rows of 4-byte units, `pitch` bytes
// between consecutive units (frame_pitch: 4 bytes per thread, rounded up to
// 64). Thread t's element of the row that starts at unit u and holds e-byte
// elements is at frames + u * pitch + t * e (such a row takes e / 4 units).
// Units 0..15: the exchange area's 8 operands (8-byte elements), 16..23 its
// 4 results; then the saved registers; then the local area, thread t's
// .local memory at frames + frame_units * pitch + t * local_stride. A
// matrix cut whose fragments outgrow the operands stores its accumulator
// (C) in the result slots, which the cut then overwrites with D.
constexpr uint32_t kExchangeInUnit = 0, kExchangeOutUnit = 16, kFrameHeaderUnits = 24;
constexpr int kExchangeInSlots = 8, kExchangeOutSlots = 4;
constexpr uint64_t frame_pitch(uint32_t threads) { return (uint64_t{threads} + 15) / 16 * 64; }

enum class CutKind : uint8_t {
  kBarrier,      // bar.sync / barrier.sync: in0 barrier id, in1 thread count (0: all)
  kBarrierArrive,// bar.arrive: as kBarrier, and the thread goes on
  kBarrierRed,   // bar.red: in2 predicate; out0 the reduction
  kShfl,         // in0 value, in1 b, in2 c, in3 member mask; out0 value, out1 predicate
  kVote,         // in0 predicate, in3 mask; out0 result
  kMatch,        // in0 value, in3 mask; out0 mask, out1 predicate
  kRedux,        // in0 value, in3 mask; out0 result
  kActiveMask,   // out0 mask
  kWarpSync,     // in3 mask
  kElect,        // in3 mask; out0 leader lane, out1 predicate
  kLdmatrix,     // in0 the row address this lane supplies; out0..3 the fragments (one b32 each)
  kMma,          // in0..7 the lane's A, B, C fragments packed two b32 per slot; out0..3 D likewise
  kYield,        // a spin-wait loop's back edge: the thread goes on once the block's others have run
  kRound,        // the back edge of a loop the threads go round in step: the thread goes on at once
};
// The last kind (the disk cache refuses sites past it).
constexpr CutKind kLastCutKind = CutKind::kRound;

// What the runner needs to know about one cut site.
struct CutSite {
  CutKind kind = CutKind::kBarrier;
  uint8_t mode = 0;    // shfl: up/down/bfly/idx; vote: all/any/uni/ballot; match: any/all;
                       // redux/bar.red: add/min/max/and/or/xor/popc; bar.sync: kBarrierAligned
  bool is_signed = false;  // redux.min/max on .s32
  bool wide = false;       // match on .b64
  int line = 0;            // PTX line, for diagnostics
  bool pred_unused = false;  // kShfl: no thread reads the predicate result (out1 need not be written)
  uint8_t konst_mask = 0;  // bit i: operand slot i (0..3) is konst[i], not stored by the threads
  uint64_t konst[4] = {};
  // kLdmatrix: mode = matrices (1, 2, 4), wide = .trans.
  // kMma: mode = a MmaShape; m16n8 shapes: is_signed = bf16 inputs (else
  // f16), wide = f32 accumulators (else f16); wmma shapes: mma_types, and
  // C comes in the result slots.
  uint8_t mma_types = 0;
};

enum : uint8_t { kShflUp, kShflDown, kShflBfly, kShflIdx };
enum : uint8_t { kBarrierAligned = 1 };
enum : uint8_t { kVoteAll, kVoteAny, kVoteUni, kVoteBallot };
enum : uint8_t { kMatchAny, kMatchAll };
enum : uint8_t {
  kMmaM16N8K16, kMmaM16N8K8, kMmaM16N8K4, kMmaM8N8K4, kMmaM16N8K32,
  kWmmaM16N16K16, kWmmaM32N8K16, kWmmaM8N32K16, kWmmaM16N16K8, kWmmaM8N8K4,
};
// A matrix cut's element types (CutSite::mma_types; an mma.sync of f16 or
// bf16 inputs says its types by is_signed and wide instead): the inputs'
// (A's, and B's unless bit 6) in bits 0-2; for f16 inputs, whether C
// (bit 3) and D (bit 4) are f32 rather than f16 (the other inputs fix
// them: bf16 and tf32 f32, f64 f64, s8 and u8 s32); bit 5 .satfinite;
// bit 6, B is u8 where A is s8 or the other way round.
enum : uint8_t { kMmaF16, kMmaBF16, kMmaTF32, kMmaF64, kMmaS8, kMmaU8, kMmaE4M3, kMmaE5M2 };
constexpr uint8_t kMmaCF32 = 1 << 3, kMmaDF32 = 1 << 4, kMmaSatfinite = 1 << 5, kMmaBOtherSign = 1 << 6;
constexpr uint8_t mma_input(uint8_t types) { return types & 7; }
enum : uint8_t { kRedAdd, kRedMin, kRedMax, kRedAnd, kRedOr, kRedXor, kRedPopc };

// Returns the code every stepped thread returned when they all returned the
// same (0: all exited; a site id: all at that cut), else kMixedCodes.
constexpr uint32_t kMixedCodes = 0xffffffffu;
using RangeFn = uint32_t (*)(uint8_t* frames, uint64_t stride, BlockEnv* env, uint32_t first, uint32_t last,
                         uint32_t resume, uint32_t* codes);

// mbarrier objects (lower_misc.cpp, runtime.cpp): a 64-bit word holding
// the count still to arrive in the current phase (bits 0-30), the count
// each phase starts with (bits 32-62) and the phase's parity (bit 63). The
// state an arrive returns is the word as the arrive left it, but with the
// phase it arrived in.
enum class MbarrierOp : uint32_t { kInit, kInval, kArrive, kArriveDrop, kTestState, kTestParity };
constexpr uint64_t kMbarrierCountMask = 0x7fffffff;

// Runtime services compiled code calls (defined in runtime.cpp, bound into
// the JIT by address). `fault` and `assert_fail` do not return: they unwind
// to the runner.
extern "C" {
[[noreturn]] void cucpu_rt_fault(BlockEnv* env, uint32_t kind, uint64_t address);
[[noreturn]] void cucpu_rt_assert(BlockEnv* env, const char* message, const char* file, uint32_t line,
                                  const char* function);
int32_t cucpu_rt_vprintf(BlockEnv* env, const char* format, const uint8_t* args);
uint64_t cucpu_rt_globaltimer();
void cucpu_rt_nanosleep(uint32_t ns);
// An mbarrier operation (MbarrierOp) on the object at `object`: kArrive and
// kArriveDrop take a count and return the state; the tests take a state or
// a parity and return 1 when that phase has completed.
uint64_t cucpu_rt_mbarrier(uint64_t* object, uint32_t op, uint64_t value);
// A device runtime call (DeviceCall) by thread env->current_tid: args and
// result as DeviceRuntime::call takes them.
void cucpu_rt_device_call(BlockEnv* env, uint32_t call, const void* const* args, void* result);
void* cucpu_rt_malloc(uint64_t size);
void cucpu_rt_free(void* p);
}

}  // namespace cucpu::devrt
