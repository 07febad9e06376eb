// Scheduler: the worker pool that runs ready ops.
//
// Contract:
//  - submit() takes an op whose dependencies are all done, and one reference
//    to it. Trivial ops run at once on the calling thread; others go to a
//    ready queue ordered by stream priority (lower value first, FIFO within
//    a priority).
//  - A worker that finishes an op runs the first successor that became ready
//    itself (the latency path), preferring the op's successor in its
//    stream, and queues the rest. When the stream has no next op yet, the
//    worker watches for one for a few microseconds (unless other work is
//    queued) before giving the stream up (Timeline::give_up): a producer
//    feeding one stream then hands each op over with one plain store.
//  - Idle workers spin briefly (one at a time, yielding the core) and then
//    sleep on a condition variable; nothing polls while idle. A push wakes
//    a sleeper only when no worker is searching for work.
//  - No runtime lock is held while an op executes.
//  - Pools. The shared pool (instance()) runs all work but green contexts'
//    kernels; each partition (exec/partition.h) is a pool of its own, with
//    workers of its own, and runs the kernels of the streams whose
//    Timeline::pool it is. An op's home (home_of) is that pool when it is
//    kernel work (Op::on_sms), else the shared pool: copies, host functions
//    and the like never use a partition's workers, as a GPU runs them off
//    its SMs (and a host function that blocks must not stall a partition).
//    push() hands an op to its home, and a worker runs inline only ops of
//    its own pool (trivial ones aside, which run wherever they become
//    ready).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "exec/op.h"

namespace cucpu {

// Set once, at load, when the trace or schedule fuzzing is on: the one flag
// the engine reads per op for them (exec/trace.h, exec/schedule.h).
extern std::atomic<bool> g_op_hooks;
// With g_op_hooks: called on the running thread after each op has run, when
// set (by `cucpu check`'s initcheck, core/check_kernel.cpp: what the op
// wrote counts as written from then on). Set once, before any op runs.
using OpRanHook = void (*)(const Op* op);
extern std::atomic<OpRanHook> g_op_ran_hook;

class Scheduler {
 public:
  static constexpr int kPriorityLevels = 8;  // stream priorities 0 .. -7

  // The shared pool: CUCPU_WORKERS workers (default: one per core, at least 2).
  static Scheduler& instance();
  // A pool of `workers` workers of its own (exec/partition.cpp makes them;
  // never destroyed).
  explicit Scheduler(size_t workers);

  // Runs `op` (ready) on its home pool, whichever pool it is called on.
  void submit(Op* op);
  // The pool `op` runs on.
  static Scheduler* home_of(const Op* op);
  // Finishes a deferred op (see Op::defer) on the calling thread, which
  // must not be running an op itself: releases its successors, running
  // trivial ones here. Takes over the runner's reference.
  void complete(Op* op);
  size_t worker_count() const { return workers_.size(); }
  // True on a worker of any pool (used to refuse blocking calls from host functions).
  static bool on_worker_thread();
  // The pool whose worker the calling thread is, or null (for tests and diagnostics).
  static Scheduler* current_pool();

  // For tests and diagnostics: sleeping workers and the searching count,
  // read together under the queue lock.
  struct IdleState {
    int sleepers;
    int searching;
  };
  IdleState idle_state();

  ~Scheduler();

 private:
  void worker_main();
  // Whether the calling thread is one of this pool's workers, running
  // ops (not nested in one's work).
  bool on_own_worker() const;
  Op* pop_locked();
  // Runs `op` and any chain of successors handed back inline.
  void run_chain(Op* op);
  // Finishes `op`: stream completion, then releases its successors and
  // follows its stream link. Ready trivial successors, and one other when
  // allow_inline, go to run_here. Returns `op` when it is its stream's tail
  // with no link yet: the caller must then call watch_tail.
  Op* finish(Op* op, bool allow_inline, std::vector<Op*>& run_here);
  // Takes over a ready op (and the reference it carries): trivial ops and,
  // unless inline_taken, one other go to run_here; the rest are queued.
  void dispatch(Op* op, bool& inline_taken, std::vector<Op*>& run_here);
  static void run_inline_last(Op* op, std::vector<Op*>& run_here);
  // Follows the link from `tail` to `next`: drops tail's tail reference
  // (and any other of the caller's, `tail_refs` in all) and releases next's
  // stream dependency. True when next became ready and took the inline slot.
  bool follow(Op* tail, int32_t tail_refs, Op* next, bool& inline_taken, std::vector<Op*>& run_here);
  // For the tail returned by finish: watches for its link when `linger`,
  // else (or when none comes) gives the stream up; then drops the stream
  // reference finish took.
  void watch_tail(Op* tail, bool linger, bool allow_inline, std::vector<Op*>& run_here);
  // Queues `op` on its timeline's pool.
  void push(Op* op);
  // Leaves searching_ outside mu_ (to run an op), waking a sleeper for any
  // op queued meanwhile.
  void stop_searching();
  bool should_wake_locked();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Op*> ready_[kPriorityLevels];  // guarded by mu_
  std::atomic<int> ready_count_{0};          // seq_cst increments: see worker_main
  int sleepers_ = 0;                         // guarded by mu_
  int waking_ = 0;                           // wake-ups sent, not yet taken; guarded by mu_
  // Workers awake and about to look at the queues (spinning, or finishing
  // the last op of a chain). A push wakes a sleeper only when none is.
  std::atomic<int> searching_{0};
  std::atomic<int> spinners_{0};             // workers in the spin loop (at most one spins)
  // Hand-off slot of the spinning worker: null (closed), kHandoffOpen (the
  // spinner waits, every queue was empty) or an op handed over by push().
  static inline Op* const kHandoffOpen = reinterpret_cast<Op*>(uintptr_t{1});
  alignas(64) std::atomic<Op*> handoff_{nullptr};
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace cucpu
