// The block runner: thread loops, cuts and faults (see abi.h for the
// protocol between compiled code and this file).
//
// Faults: compiled code reports misalignment, traps and failed asserts by
// calling raise_fault; a wild access raises SIGSEGV or SIGBUS, which the
// fault trap that run_blocks arms catches (base/fault_trap.h). Both unwind
// with siglongjmp to run_blocks.
#include "devrt/block_runner.h"

#include "base/fault_trap.h"
#include "base/thread_heap.h"
#include "devrt/check_rt.h"
#include "devrt/red_table.h"

#include "devrt/warp_matrix.h"
#include "devrt/warp_shuffle.h"

#include <setjmp.h>
#include <signal.h>
#include <xmmintrin.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace cucpu::devrt {

namespace {

// A run's fault: raise_fault fills kind, address and message; a signal
// leaves kind at kNone and fills the trap's address.
struct RunState {
  FaultTrap trap;
  BlockEnv* env = nullptr;
  FaultKind kind = FaultKind::kNone;
  uint64_t address = 0;
  std::string message;
};

thread_local RunState* t_run = nullptr;

// Per-thread scratch reused across blocks and launches.
// Everything a block needs lives here, not on the runner's stack: a fault
// unwinds with siglongjmp, which runs no destructors.
// A block that parked (CutBlock::parked): everything its resumption needs.
struct ParkedBlock {
  uint64_t block = 0;
  std::vector<uint8_t> frames, shared, state;
  std::vector<uint32_t> codes, resume;
  uint32_t arrivals[16] = {};
  uint32_t live = 0;
};

struct Scratch {
  std::vector<uint8_t> frames, shared;
  std::vector<ParkedBlock> parked;  // [0, parked_count) hold blocks of the launch below
  size_t parked_count = 0;
  const void* parked_launch = nullptr;  // its LaunchConfig::params, which identify it
  std::vector<uint32_t> codes, resume;
  std::vector<uint8_t> state, in_span;
  std::vector<std::pair<uint32_t, uint32_t>> spans;
  std::vector<uint32_t> warp_live;
  uint64_t stream_next[kStreamSites] = {};  // BlockEnv::stream_next
  // The signal stack this thread got from us (none when it had one already,
  // as under AddressSanitizer); given back before its memory is.
  std::vector<uint8_t> alt_stack;
  bool alt_checked = false;
  ~Scratch() {
    if (alt_stack.empty()) return;
    stack_t ss{};
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
  }
};
thread_local ThreadHeap<Scratch> t_scratch_heap;  // base/thread_heap.h
Scratch& scratch() { return t_scratch_heap.get(); }

void install_handlers() {
  install_fault_handler();
  // A stack for the handler, so that a kernel's runaway recursion can be
  // reported; a thread that has one already keeps its own.
  if (!scratch().alt_checked) {
    scratch().alt_checked = true;
    stack_t cur{};
    if (sigaltstack(nullptr, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) {
      scratch().alt_stack.resize(64 * 1024);
      stack_t ss{};
      ss.ss_sp = scratch().alt_stack.data();
      ss.ss_size = scratch().alt_stack.size();
      if (sigaltstack(&ss, nullptr) != 0) scratch().alt_stack.clear();
    }
  }
}

// kYielded: at a spin loop's back edge, runnable again once the block's
// other threads have run as far as they can.
enum : uint8_t { kRunnable, kAtWarpCut, kAtBarrier, kExited, kYielded };
// Rounds of nothing but spinning (each kSpinsPerYield tests of the loop, lower_control.cpp) before a block parks.
constexpr uint32_t kParkRounds = 16;

struct CutBlock {
  const CompiledCode& code;
  BlockEnv& env;
  uint32_t T;
  uint64_t pitch;
  uint8_t* frames;
  uint32_t* codes;
  uint32_t* resume;
  uint8_t* state;
  uint32_t live;
  bool checking;  // instrument_accesses(): barriers end racecheck's intervals, synccheck looks at them
  uint32_t arrivals[16] = {};
  // Parking: a block whose every live thread has spun, round after round,
  // without reaching anything but its spin cuts stops (parked) with its
  // state in the frames and arrays, so that the worker runs other blocks,
  // one of which may be what it waits for; run_blocks resumes it later.
  bool may_park = false;
  bool parked = false;
  uint32_t still_rounds = 0;
  uint64_t last_signature = 0;

  // Operand slot k of thread t at site cs (known ones are in the site), and
  // result slot k (abi.h: 8-byte rows of pitch * 2 bytes).
  uint64_t* in_row(int k) { return reinterpret_cast<uint64_t*>(frames + (kExchangeInUnit + 2 * k) * pitch); }
  uint64_t* out_row(int k) { return reinterpret_cast<uint64_t*>(frames + (kExchangeOutUnit + 2 * k) * pitch); }
  uint64_t op(const CutSite& cs, uint32_t t, int k) {
    return (cs.konst_mask >> k & 1) ? cs.konst[k] : in_row(k)[t];
  }
  uint64_t& out(uint32_t t, int k) { return out_row(k)[t]; }
  const CutSite& site(uint32_t t) { return (*code.sites)[resume[t] - 1]; }

  void classify(uint32_t t) {
    const uint32_t c = codes[t];
    if (c == 0) {
      state[t] = kExited;
      --live;
      return;
    }
    resume[t] = c;
    const CutKind k = (*code.sites)[c - 1].kind;
    if (k == CutKind::kBarrierArrive) {
      arrivals[op(site(t), t, 0) & 15]++;
      state[t] = kRunnable;
    } else if (k == CutKind::kBarrier || k == CutKind::kBarrierRed) {
      state[t] = kAtBarrier;
    } else if (k == CutKind::kYield) {
      state[t] = kYielded;
    } else if (k == CutKind::kRound) {
      state[t] = kRunnable;  // no one to wait for: the next trip at once
    } else {
      state[t] = kAtWarpCut;
    }
  }

  void run_warp(uint32_t lo, uint32_t hi) {
    for (;;) {
      bool ran = false;
      for (uint32_t t = lo; t < hi;) {
        if (state[t] != kRunnable) {
          ++t;
          continue;
        }
        uint32_t u = t + 1;
        while (u < hi && state[u] == kRunnable && resume[u] == resume[t]) ++u;
        code.range(frames, pitch, &env, t, u, resume[t], codes);
        for (uint32_t i = t; i < u; ++i) classify(i);
        ran = true;
        t = u;
      }
      if (ran) continue;  // bar.arrive lanes go on at once
      // Warp cuts: resolve one group (the lanes waiting at one site).
      uint32_t exited = 0, valid = 0, at_cut = 0, yielded = 0;
      uint32_t first_site = 0;
      bool one_site = true;
      for (uint32_t t = lo; t < hi; ++t) {
        valid |= 1u << (t - lo);
        if (state[t] == kExited) exited |= 1u << (t - lo);
        if (state[t] == kYielded) yielded |= 1u << (t - lo);
        if (state[t] == kAtWarpCut) {
          at_cut |= 1u << (t - lo);
          if (!first_site) first_site = resume[t];
          else if (resume[t] != first_site) one_site = false;
        }
      }
      if (!at_cut) return;
      if (one_site && (at_cut | exited) == valid) {
        // The common case: every live lane at the same cut.
        resolve(lo, first_site, at_cut);
        for (uint32_t t = lo; t < hi; ++t)
          if (at_cut >> (t - lo) & 1) state[t] = kRunnable;
        continue;
      }
      uint32_t best_site = 0, best_mask = 0;
      bool best_complete = false;
      for (uint32_t t = lo; t < hi; ++t) {
        if (state[t] != kAtWarpCut) continue;
        const uint32_t s = resume[t];
        uint32_t mask = 0;
        for (uint32_t u = lo; u < hi; ++u)
          if (state[u] == kAtWarpCut && resume[u] == s) mask |= 1u << (u - lo);
        const CutKind k = (*code.sites)[s - 1].kind;
        const uint32_t member = k == CutKind::kActiveMask ? mask : static_cast<uint32_t>(op((*code.sites)[s - 1], t, 3));
        // Complete: every lane the collective names has arrived or exited.
        const bool complete = (member & valid & ~mask & ~exited) == 0;
        if (!best_site || (complete && !best_complete) || (complete == best_complete && s < best_site)) {
          best_site = s;
          best_mask = mask;
          best_complete = complete;
        }
      }
      if (!best_site) return;
      // A collective waiting for a lane that yielded in a spin loop waits
      // for it to come round (diverge() runs it again), as a GPU's would.
      if (!best_complete && yielded) return;
      resolve(lo, best_site, best_mask);
      for (uint32_t t = lo; t < hi; ++t)
        if (best_mask >> (t - lo) & 1) state[t] = kRunnable;
    }
  }

  // A whole warp shuffling with one b and c (the usual case: constants):
  // the source lanes computed once, then the warp's values permuted. False
  // when the lanes' b or c differ (the general code handles that).
  bool shfl_full_warp(uint32_t lo, const CutSite& cs) {
    const uint64_t b0 = op(cs, lo, 1), c0 = op(cs, lo, 2);
    if (!(cs.konst_mask & 2) || !(cs.konst_mask & 4))
      for (uint32_t l = 1; l < 32; ++l)
        if (op(cs, lo + l, 1) != b0 || op(cs, lo + l, 2) != c0) return false;
    uint8_t src[32];
    uint64_t pred[32];
    shfl_sources(cs.mode, static_cast<uint32_t>(b0), static_cast<uint32_t>(c0), src, pred);
    uint64_t* y = out_row(0) + lo;
    uint64_t* p = out_row(1) + lo;
    if (cs.konst_mask & 1) {
      for (uint32_t l = 0; l < 32; ++l) y[l] = cs.konst[0] & 0xffffffffu;
    } else {
      const uint64_t* v = in_row(0) + lo;
      for (uint32_t l = 0; l < 32; ++l) y[l] = v[src[l]] & 0xffffffffu;
    }
    if (!cs.pred_unused)
      for (uint32_t l = 0; l < 32; ++l) p[l] = pred[l];
    return true;
  }

  // Each lane's source lane (itself where the shuffle is out of range) and predicate.
  static void shfl_sources(uint8_t mode, uint32_t b, uint32_t c, uint8_t src[32], uint64_t pred[32]) {
    for (uint32_t l = 0; l < 32; ++l) {
      bool p;
      src[l] = static_cast<uint8_t>(shfl_source(mode, l, b, c, &p));
      pred[l] = p;
    }
  }

  void resolve(uint32_t lo, uint32_t s, uint32_t group) {
    const CutSite& cs = (*code.sites)[s - 1];
    auto lanes = [&](auto&& fn) {
      for (uint32_t l = 0; l < 32; ++l)
        if (group >> l & 1) fn(l, lo + l);
    };
    if (cs.kind == CutKind::kShfl && group == 0xffffffffu && shfl_full_warp(lo, cs)) return;
    switch (cs.kind) {
      case CutKind::kShfl:
        lanes([&](uint32_t l, uint32_t t) {
          bool p;
          const uint32_t src = shfl_source(cs.mode, l, static_cast<uint32_t>(op(cs, t, 1)), static_cast<uint32_t>(op(cs, t, 2)), &p);
          const uint64_t v = (src < 32 && (group >> src & 1)) ? op(cs, lo + src, 0) : op(cs, t, 0);
          out(t, 0) = v & 0xffffffffu;
          out(t, 1) = p;
        });
        break;
      case CutKind::kVote: {
        uint32_t ballot = 0;
        lanes([&](uint32_t l, uint32_t t) {
          if (op(cs, t, 0)) ballot |= 1u << l;
        });
        lanes([&](uint32_t, uint32_t t) {
          const uint32_t m = static_cast<uint32_t>(op(cs, t, 3)) & group;
          uint64_t r;
          switch (cs.mode) {
            case kVoteAll: r = (ballot & m) == m; break;
            case kVoteAny: r = (ballot & m) != 0; break;
            case kVoteUni: r = (ballot & m) == m || (ballot & m) == 0; break;
            default: r = ballot & m; break;
          }
          out(t, 0) = r;
        });
        break;
      }
      case CutKind::kMatch:
        lanes([&](uint32_t, uint32_t t) {
          const uint32_t m = static_cast<uint32_t>(op(cs, t, 3)) & group;
          const uint64_t mine = cs.wide ? op(cs, t, 0) : (op(cs, t, 0) & 0xffffffffu);
          uint32_t same = 0;
          for (uint32_t u = 0; u < 32; ++u)
            if (m >> u & 1) {
              const uint64_t v = cs.wide ? op(cs, lo + u, 0) : (op(cs, lo + u, 0) & 0xffffffffu);
              if (v == mine) same |= 1u << u;
            }
          if (cs.mode == kMatchAny) {
            out(t, 0) = same;
          } else {
            const bool all = same == m;
            out(t, 0) = all ? m : 0;
            out(t, 1) = all;
          }
        });
        break;
      case CutKind::kRedux:
        lanes([&](uint32_t, uint32_t t) {
          const uint32_t m = static_cast<uint32_t>(op(cs, t, 3)) & group;
          uint32_t acc = 0;
          bool first = true;
          for (uint32_t u = 0; u < 32; ++u) {
            if (!(m >> u & 1)) continue;
            const uint32_t v = static_cast<uint32_t>(op(cs, lo + u, 0));
            if (first) {
              acc = v;
              first = false;
              continue;
            }
            switch (cs.mode) {
              case kRedAdd: acc += v; break;
              case kRedMin: acc = cs.is_signed ? static_cast<uint32_t>(std::min(static_cast<int32_t>(acc), static_cast<int32_t>(v))) : std::min(acc, v); break;
              case kRedMax: acc = cs.is_signed ? static_cast<uint32_t>(std::max(static_cast<int32_t>(acc), static_cast<int32_t>(v))) : std::max(acc, v); break;
              case kRedAnd: acc &= v; break;
              case kRedOr: acc |= v; break;
              default: acc ^= v; break;
            }
          }
          out(t, 0) = acc;
        });
        break;
      case CutKind::kActiveMask:
        lanes([&](uint32_t, uint32_t t) { out(t, 0) = group; });
        break;
      case CutKind::kElect:
        lanes([&](uint32_t l, uint32_t t) {
          const uint32_t m = static_cast<uint32_t>(op(cs, t, 3)) & group;
          const uint32_t leader = m ? static_cast<uint32_t>(__builtin_ctz(m)) : l;
          out(t, 0) = leader;
          out(t, 1) = leader == l;
        });
        break;
      case CutKind::kLdmatrix:
      case CutKind::kMma: {
        // Gathered into each lane's own slots, and the results scattered back.
        uint64_t in_slots[32][kExchangeInSlots], out_slots[32][kExchangeOutSlots] = {};
        uint64_t* ins[32] = {};
        uint64_t* outs[32] = {};
        const bool preset = cs.kind == CutKind::kMma && cs.mode >= kWmmaM16N16K16;  // C in the result slots
        lanes([&](uint32_t l, uint32_t t) {
          for (int k = 0; k < kExchangeInSlots; ++k) in_slots[l][k] = k < 4 ? op(cs, t, k) : in_row(k)[t];
          if (preset)
            for (int k = 0; k < kExchangeOutSlots; ++k) out_slots[l][k] = out_row(k)[t];
          ins[l] = in_slots[l];
          outs[l] = out_slots[l];
        });
        if (cs.kind == CutKind::kLdmatrix) resolve_ldmatrix(cs, ins, outs);
        else resolve_mma(cs, ins, outs);
        lanes([&](uint32_t l, uint32_t t) {
          for (int k = 0; k < kExchangeOutSlots; ++k) out(t, k) = out_slots[l][k];
        });
        break;
      }
      default:  // kWarpSync
        break;
    }
  }

  // Releases the barriers whose counts are met. False when none could be.
  bool release_barriers() {
    uint32_t waiting[16] = {}, expected[16] = {};
    for (uint32_t t = 0; t < T; ++t) {
      if (state[t] != kAtBarrier) continue;
      const uint32_t id = static_cast<uint32_t>(op(site(t), t, 0)) & 15, n = static_cast<uint32_t>(op(site(t), t, 1));
      waiting[id]++;
      if (n) expected[id] = n;
    }
    bool released = false;
    for (uint32_t id = 0; id < 16; ++id) {
      if (!waiting[id]) continue;
      const uint32_t need = expected[id] ? expected[id] : live;
      if (waiting[id] + arrivals[id] < need) continue;
      released = true;
      if (checking && !expected[id]) [[unlikely]] {
        check_barrier_passed();  // block-wide: what came before is ordered
        check_aligned_sites(id);
      }
      arrivals[id] = 0;
      uint32_t popc = 0;
      bool all = true, any = false;
      for (uint32_t t = 0; t < T; ++t)
        if (state[t] == kAtBarrier && (static_cast<uint32_t>(op(site(t), t, 0)) & 15) == id && site(t).kind == CutKind::kBarrierRed) {
          const bool p = op(site(t), t, 2) != 0;
          popc += p;
          all &= p;
          any |= p;
        }
      for (uint32_t t = 0; t < T; ++t) {
        if (state[t] != kAtBarrier || (static_cast<uint32_t>(op(site(t), t, 0)) & 15) != id) continue;
        if (site(t).kind == CutKind::kBarrierRed)
          out(t, 0) = site(t).mode == kRedPopc ? popc : site(t).mode == kRedAnd ? all : any;
        state[t] = kRunnable;
      }
    }
    return released;
  }

  // Synccheck: the threads released from barrier `id` must all wait at one
  // instruction when it is an aligned one (bar.sync).
  void check_aligned_sites(uint32_t id) {
    int first = -1;
    for (uint32_t t = 0; t < T; ++t) {
      if (state[t] != kAtBarrier || (static_cast<uint32_t>(op(site(t), t, 0)) & 15) != id) continue;
      if (first < 0) {
        first = static_cast<int>(t);
        continue;
      }
      const CutSite& a = site(static_cast<uint32_t>(first));
      const CutSite& b = site(t);
      if (&a != &b && (a.mode == kBarrierAligned || b.mode == kBarrierAligned)) {
        report_divergent_barrier(&env, static_cast<uint32_t>(first), static_cast<uint32_t>(a.line), t,
                                 static_cast<uint32_t>(b.line));
        return;
      }
    }
  }

  // Runs of consecutive live threads, and each warp's live lanes (the
  // thread's scratch: see Scratch).
  std::vector<std::pair<uint32_t, uint32_t>>& spans = scratch().spans;
  std::vector<uint32_t>& warp_live = scratch().warp_live;

  void keep_live_threads() {
    spans.clear();
    std::fill(warp_live.begin(), warp_live.end(), 0u);
    for (uint32_t t = 0; t < T;) {
      if (!alive(t)) {
        ++t;
        continue;
      }
      uint32_t u = t;
      while (u < T && alive(u)) {
        warp_live[u / 32] |= 1u << (u % 32);
        ++u;
      }
      spans.push_back({t, u});
      t = u;
    }
  }
  bool alive(uint32_t t) const { return codes[t] != 0; }

  void run() {
    std::memset(arrivals, 0, sizeof arrivals);
    // Converged: while every live thread stops at the same cut, the live
    // threads are stepped in runs, a barrier is released at once and a warp
    // collective is resolved warp by warp for its live lanes, with no
    // bookkeeping per thread. Threads that exit on the way drop out.
    spans.assign(1, {0, T});
    warp_live.assign((T + 31) / 32, 0u);
    for (uint32_t lo = 0; lo < T; lo += 32) {
      const uint32_t n = std::min(lo + 32, T) - lo;
      warp_live[lo / 32] = n == 32 ? 0xffffffffu : (1u << n) - 1;
    }
    constexpr uint32_t kUnset = 0xfffffffeu;
    uint32_t r = 0;
    for (;;) {
      poll_stop(env);
      uint32_t c = kUnset;
      for (auto [first, last] : spans) {
        const uint32_t cc = code.range(frames, pitch, &env, first, last, r, codes);
        c = (c == kUnset || c == cc) ? cc : kMixedCodes;
      }
      if (c == kMixedCodes) {
        uint32_t same = 0;
        for (auto [first, last] : spans)
          for (uint32_t t = first; t < last; ++t)
            if (codes[t] && codes[t] != same) c = same ? kMixedCodes : (same = codes[t]);
        if (c == kMixedCodes) return diverge();
        c = same;
        keep_live_threads();
      }
      if (c == 0 || spans.empty()) return;
      const CutSite& cs = (*code.sites)[c - 1];
      if (cs.kind == CutKind::kBarrier) {
        const uint32_t need = static_cast<uint32_t>(op(cs, spans[0].first, 1));
        if (need != 0 && need != T) return diverge();  // a count other than the whole block
        if (checking) [[unlikely]] check_barrier_passed();
        r = c;
        continue;
      }
      if (cs.kind == CutKind::kBarrierArrive || cs.kind == CutKind::kBarrierRed) return diverge();
      if (cs.kind == CutKind::kRound) {  // every live thread's next trip
        still_rounds = 0;
        r = c;
        continue;
      }
      if (cs.kind == CutKind::kYield) {  // every live thread spins: each goes round once more
        if (may_park && ++still_rounds >= kParkRounds) return park_converged(c);
        r = c;
        continue;
      }
      still_rounds = 0;
      for (uint32_t w = 0; w < warp_live.size(); ++w)
        if (warp_live[w]) resolve(w * 32, c, warp_live[w]);
      r = c;
    }
  }

  // Each thread's own state from here on: the live ones from their last
  // step's code, the others exited.
  void diverge() {
    std::vector<uint8_t>& in_span = scratch().in_span;
    in_span.assign(T, 0);
    for (auto [first, last] : spans)
      for (uint32_t t = first; t < last; ++t) in_span[t] = 1;
    live = 0;
    for (uint32_t t = 0; t < T; ++t) {
      state[t] = in_span[t] ? kRunnable : kExited;
      live += in_span[t];
    }
    for (uint32_t t = 0; t < T; ++t)
      if (in_span[t]) classify(t);
    run_diverged();
  }

  // Steps the threads from their states until all exit (or the block parks).
  void run_diverged() {
    while (live) {
      poll_stop(env);
      for (uint32_t lo = 0; lo < T; lo += 32) run_warp(lo, std::min(lo + 32, T));
      if (!live) break;
      bool yielded = false;
      uint64_t signature = live;
      for (uint32_t t = 0; t < T; ++t) {
        signature = signature * 31 + resume[t] * 4 + state[t];
        if (state[t] == kYielded) yielded = true;
      }
      // Nothing but spins since the last round: the same resume points, the same states.
      if (may_park && yielded) {
        still_rounds = signature == last_signature ? still_rounds + 1 : 0;
        last_signature = signature;
        if (still_rounds >= kParkRounds) {
          parked = true;
          return;
        }
      }
      for (uint32_t t = 0; t < T; ++t)
        if (state[t] == kYielded) state[t] = kRunnable;
      if (!release_barriers() && !yielded) raise_fault(FaultKind::kBarrierDeadlock, 0, "the block's threads wait at barriers that can never complete");
    }
  }

  // Parks a converged block whose live threads all spin at cut c: each is
  // left to resume there, in the per-thread form run_diverged() steps.
  void park_converged(uint32_t c) {
    std::fill(state, state + T, uint8_t{kExited});
    live = 0;
    for (auto [first, last] : spans)
      for (uint32_t t = first; t < last; ++t) {
        state[t] = kYielded;
        resume[t] = c;
        ++live;
      }
    parked = true;
  }
};

}  // namespace

namespace {

void set_block(BlockEnv& env, const LaunchConfig& cfg, uint64_t b) {
  env.ctaid[0] = static_cast<uint32_t>(b % cfg.grid.x);
  env.ctaid[1] = static_cast<uint32_t>(b / cfg.grid.x % cfg.grid.y);
  env.ctaid[2] = static_cast<uint32_t>(b / (uint64_t{cfg.grid.x} * cfg.grid.y));
}

// The block after env's in the grid's order: x steps, wrapping into y and
// then z (no division: a launch of small blocks pays for each one).
void next_block(BlockEnv& env, const LaunchConfig& cfg) {
  if (++env.ctaid[0] != cfg.grid.x) return;
  env.ctaid[0] = 0;
  if (++env.ctaid[1] != cfg.grid.y) return;
  env.ctaid[1] = 0;
  ++env.ctaid[2];
}

// Copies a parked block's state (its frames, shared memory, thread states)
// out of the worker's scratch.
void save_parked(ParkedBlock& pb, const CutBlock& cb, uint64_t frame_bytes, uint64_t shared_bytes) {
  pb.frames.assign(cb.frames, cb.frames + frame_bytes);
  pb.shared.assign(cb.env.shared, cb.env.shared + shared_bytes);
  pb.codes.assign(cb.codes, cb.codes + cb.T);
  pb.resume.assign(cb.resume, cb.resume + cb.T);
  pb.state.assign(cb.state, cb.state + cb.T);
  std::memcpy(pb.arrivals, cb.arrivals, sizeof pb.arrivals);
  pb.live = cb.live;
}

// The inverse of save_parked: the block's state back into the worker's scratch.
void restore_parked(const ParkedBlock& pb, CutBlock& cb) {
  std::memcpy(cb.frames, pb.frames.data(), pb.frames.size());
  std::memcpy(cb.env.shared, pb.shared.data(), pb.shared.size());
  std::memcpy(cb.codes, pb.codes.data(), cb.T * sizeof(uint32_t));
  std::memcpy(cb.resume, pb.resume.data(), cb.T * sizeof(uint32_t));
  std::memcpy(cb.state, pb.state.data(), cb.T);
  std::memcpy(cb.arrivals, pb.arrivals, sizeof cb.arrivals);
}

void park(Scratch& s, const CutBlock& cb, uint64_t block, uint64_t frame_bytes, uint64_t shared_bytes) {
  if (s.parked.size() <= s.parked_count) s.parked.emplace_back();
  ParkedBlock& pb = s.parked[s.parked_count++];
  pb.block = block;
  save_parked(pb, cb, frame_bytes, shared_bytes);
}

}  // namespace

size_t parked_blocks() { return scratch().parked_count; }
void drop_parked_blocks() { scratch().parked_count = 0; }

void poll_stop(const BlockEnv& env) {
  if (__atomic_load_n(env.stop, __ATOMIC_RELAXED)) [[unlikely]]
    raise_fault(FaultKind::kTimedOut, 0, std::string());
}

void raise_fault(FaultKind kind, uint64_t address, std::string message) {
  RunState* rs = t_run;
  if (!rs) std::abort();  // only compiled code, run by run_blocks, calls this
  rs->kind = kind;
  rs->address = address;
  rs->message = std::move(message);
  t_run = nullptr;
  t_fault_trap = nullptr;
  siglongjmp(rs->trap.jump, 1);
}

void current_indices(const BlockEnv* env, Dim3* block, Dim3* thread) {
  *block = {env->ctaid[0], env->ctaid[1], env->ctaid[2]};
  const uint32_t t = env->current_tid;
  *thread = {t % env->ntid[0], t / env->ntid[0] % env->ntid[1], t / (env->ntid[0] * env->ntid[1])};
}

Fault run_blocks(const CompiledCode& code, const LaunchConfig& cfg, uint64_t first, uint64_t last) {
  install_handlers();
  Scratch& s = scratch();
  const bool checking = instrument_accesses();
  const uint32_t T = cfg.block.x * cfg.block.y * cfg.block.z;
  const uint64_t dynamic_offset = (code.static_shared + 15) / 16 * 16;
  const uint64_t shared_bytes = reserved_shared_begin(dynamic_offset, cfg.dynamic_shared_bytes) + kReservedShared;
  if (s.codes.size() < T) {
    s.codes.resize(T);
    s.resume.resize(T);
    s.state.resize(T);
  }
  // The frames (abi.h), 64-byte aligned.
  const uint64_t pitch = frame_pitch(T);
  const uint64_t frame_bytes = code.frame_units * pitch + uint64_t{T} * code.local_stride;
  const uint64_t frame_size = frame_bytes + 64;  // room to align to 64
  if (code.frame_bytes && s.frames.size() < frame_size) s.frames.resize(frame_size);
  uint8_t* frames = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(s.frames.data()) + 63) & ~uintptr_t{63});
  if (s.shared.size() < shared_bytes + 16) s.shared.resize(shared_bytes + 16);

  // Every field set one by one (a memset of the whole struct can become a
  // `rep stos`, whose start-up costs a launch of a small kernel more than
  // the rest of this setup).
  BlockEnv env;
  env.ctaid[0] = env.ctaid[1] = env.ctaid[2] = 0;
  env.current_tid = 0;
  env.ntid[0] = cfg.block.x;
  env.ntid[1] = cfg.block.y;
  env.ntid[2] = cfg.block.z;
  env.nctaid[0] = cfg.grid.x;
  env.nctaid[1] = cfg.grid.y;
  env.nctaid[2] = cfg.grid.z;
  env.nthreads = T;
  env.shared = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(s.shared.data()) + 15) & ~uintptr_t{15});
  env.params = static_cast<const uint8_t*>(cfg.params);
  env.globals = cfg.globals;
  env.dynamic_shared_offset = (code.static_shared + 15) / 16 * 16;
  env.dynamic_shared_bytes = cfg.dynamic_shared_bytes;
  env.total_shared_bytes = static_cast<uint32_t>(shared_bytes);
  env.grid_workspace = reinterpret_cast<uint64_t>(cfg.grid_workspace);
  env.stream_next = s.stream_next;
  static constexpr uint32_t kNeverStops = 0;
  env.stop = cfg.stop ? cfg.stop : &kNeverStops;
  env.device_runtime = cfg.device_runtime;

  RunState rs;
  rs.env = &env;
  // Kernels compute with the IEEE defaults whatever the host thread set.
  const unsigned saved_csr = _mm_getcsr();
  _mm_setcsr(0x1f80);
  volatile uint64_t blk = first;
  FaultTrap* const outer_trap = t_fault_trap;
  if (sigsetjmp(rs.trap.jump, 0)) {
    fault_trap_fired();
    s.parked_count = 0;  // the launch has failed: its parked blocks never resume
    t_run = nullptr;
    t_fault_trap = outer_trap;
    // What the blocks before the fault did, trapped: its memory too may be gone.
    run_trapped([] { apply_reductions(); });
    _mm_setcsr(saved_csr);
    Fault f;
    f.kind = rs.kind == FaultKind::kNone ? FaultKind::kIllegalAddress : rs.kind;
    f.address = rs.kind == FaultKind::kNone ? rs.trap.address : rs.address;
    f.message = std::move(rs.message);
    current_indices(&env, &f.block, &f.thread);
    return f;
  }
  t_run = &rs;
  t_fault_trap = &rs.trap;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // armed before any block runs (base/fault_trap.h)
  if (!cfg.leave_parked || s.parked_launch != cfg.params) s.parked_count = 0;  // only this launch's are resumed
  s.parked_launch = cfg.params;
  if (first < last) set_block(env, cfg, first);
  while (blk < last) {
    poll_stop(env);
    const uint64_t b = blk;
    if (b != first) next_block(env, cfg);
    if (checking) [[unlikely]] check_block_begins();
    if (!code.frame_bytes) {
      code.range(nullptr, 0, &env, 0, T, 0, s.codes.data());
    } else {
      CutBlock cb{code, env, T, pitch, frames, s.codes.data(), s.resume.data(), s.state.data(), T, checking};
      cb.may_park = !checking;  // racecheck's intervals are per block, one block at a time
      cb.run();
      if (cb.parked) park(s, cb, b, frame_bytes, shared_bytes);
    }
    blk = b + 1;
  }
  // Parked blocks, round robin: until every one has finished, or (an empty
  // range while others are left parked) one round.
  const bool one_round = cfg.leave_parked;
  size_t rounds_left = one_round && first == last ? s.parked_count : 0;
  for (size_t i = 0; s.parked_count && (!one_round || rounds_left);) {
    if (i >= s.parked_count) i = 0;
    if (one_round) --rounds_left;
    ParkedBlock& pb = s.parked[i];
    set_block(env, cfg, pb.block);
    CutBlock cb{code, env, T, pitch, frames, s.codes.data(), s.resume.data(), s.state.data(), pb.live, checking};
    restore_parked(pb, cb);
    cb.may_park = true;
    cb.run_diverged();
    if (cb.parked) {
      save_parked(pb, cb, frame_bytes, shared_bytes);
      ++i;
    } else {
      std::swap(pb, s.parked[--s.parked_count]);  // done: its slot goes to the last parked block
    }
  }
  apply_reductions();  // the run's combined reductions, before the kernel (part) completes
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_run = nullptr;
  t_fault_trap = outer_trap;
  _mm_setcsr(saved_csr);
  return Fault{};
}

}  // namespace cucpu::devrt
