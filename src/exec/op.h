// Op: one unit of stream work and a node of the engine's dependency graph.
//
// Life of an op:
//  1. Built by an API call with `pending` = 1. For an op of a stream's
//     timeline (seq != 0) that 1 is the stream link: the op may run once
//     the op before it in its stream is done (see "Stream links" below).
//     For a part of a group it is a build guard. An op that also waits for
//     other ops takes a build guard too (add_build_guard), which keeps it
//     from becoming ready while those dependencies are being linked.
//  2. Linked: each other predecessor that is not done yet adds it as a
//     successor and increments `pending` (under the predecessor's lock, so
//     a predecessor finishing concurrently either sees the link or reports
//     itself done).
//  3. Whoever brings `pending` to zero (fetch_sub(acq_rel) == 1) hands it
//     to the scheduler. acq_rel makes the predecessors' writes visible to
//     the thread that runs the op.
//  4. Executed on a worker (or inline when trivial()), then finished: marked
//     done and its successors released.
// Ops are reference counted: each pending dependency (the stream link, the
// build guard, each successor link) carries one reference, which becomes
// the runner's when the op becomes ready; the stream's tail, events and
// event waits hold others.
//
// Stream links. The producer of a stream appends an op by storing it in
// the previous op's next_in_stream, a plain release store: no locked
// instruction, and no load of a line a worker wrote, so that an enqueue
// never waits for a cache-line transfer. The thread that finishes the
// previous op follows the link (Scheduler::finish); the protocol that
// decides who follows when the producer and the finishing thread race is
// in exec/timeline.h.
#pragma once

#include <atomic>
#include <string>
#include <cstdint>
#include <thread>
#include <vector>

#include "exec/futex.h"
#include "exec/op_pool.h"
#include "exec/spin_lock.h"
#include "exec/trace.h"

namespace cucpu {

class Timeline;

// A byte range [lo, hi) an op reads or writes (`cucpu check`). Atomic
// accesses (stream memory operations, kernels' atomics) never race with
// each other; a stream memory write and a wait on the same word order the
// waiter after the writer, as the program means them to.
struct MemAccess {
  uintptr_t lo = 0, hi = 0;
  bool write = false;
  bool atomic = false;
  // Nonzero: which of the op's parts made it: the copies of one batch
  // (which run in no set order: different parts must not conflict), or
  // the nodes of one graph launch (ordered by the graph's edges).
  uint32_t part = 0;
  // A stream-ordered free: the memory's use ends here (a write to the race
  // checker; it initializes nothing).
  bool frees = false;
};

class Op {
 public:
  virtual ~Op() { delete more_successors_; }

  // Every op lives in an OpPool block (sized delete gives the block's size).
  static void* operator new(size_t n) { return OpPool::allocate(n); }
  static void operator delete(void* p, size_t n) noexcept { OpPool::deallocate(p, n); }

  // The work. Runs with no runtime lock held. `status` is the context's
  // sticky error when the op starts (CUDA_SUCCESS when there is none).
  virtual void execute(int status) = 0;
  // True for bookkeeping ops (event records, waits) that may run inline
  // wherever they become ready, even on an API thread.
  virtual bool trivial() const { return false; }

  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // retain() for an op no other thread can reach yet (no atomic RMW).
  void retain_unpublished() { refs_.store(refs_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
  void release() { release(1); }
  // Drops `n` references at once (one read-modify-write).
  void release(int32_t n) {
    if (refs_.fetch_sub(n, std::memory_order_acq_rel) == n) delete this;
  }

  // Registers `next` to run after this op. Returns false (and links
  // nothing) when this op is already done.
  bool add_successor(Op* next) {
    // Done is final: skip the lock (and the cache line the finishing worker
    // holds) when the answer is already known.
    if (done()) return false;
    SpinLockGuard g(lock_);
    if (done_state_.load(std::memory_order_relaxed) == kDone) return false;  // set under lock_
    next->pending_.fetch_add(1, std::memory_order_relaxed);
    next->retain();
    if (!first_successor_) first_successor_ = next;  // the common case: no allocation
    else {
      if (!more_successors_) more_successors_ = new std::vector<Op*>();
      more_successors_->push_back(next);
    }
    if (trace_id) [[unlikely]] trace::linked(trace_id, next->trace_id);
    return true;
  }
  bool done() const { return done_state_.load(std::memory_order_acquire) == kDone; }
  // What an event that holds this op reports as reached (cuEventQuery): done
  // by default. A marker answers true once it has run (core/ops.h): a
  // stream's completed count is published before its op is marked done
  // (Scheduler::finish), so a thread back from a stream synchronize may see
  // the stream's last marker run but not yet done.
  virtual bool reached() const { return done(); }
  // When a timed marker was reached (steady clock, ns; cuEventElapsedTime);
  // 0 for every other op, whose time is not taken.
  virtual uint64_t reached_at_ns() const { return 0; }

  // Drops one dependency (or the build guard). True when the op is ready.
  bool release_dependency() { return pending_.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  // release_dependency() for the stream link, by the thread that follows
  // or claims it. Dependencies are added only before the op is published
  // or while its build guard is held, and the link is released exactly
  // once; so when the count reads 1, that 1 is the link and no other
  // thread can change the count any more: the op is ready, without a
  // read-modify-write (acquire pairs with the other dependencies' releases).
  bool release_stream_link() {
    if (pending_.load(std::memory_order_acquire) == 1) return true;
    return release_dependency();
  }
  // Adds a build guard, with its reference, to an op no other thread can
  // reach yet (no atomic read-modify-write).
  void add_build_guard() {
    pending_.store(pending_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    retain_unpublished();
  }

  // The op after this one in its stream, or null while none is enqueued.
  // Set once, by the stream's producer, with release order: the thread that
  // sees the link also sees the linked op's fields.
  Op* next_in_stream() const { return next_in_stream_.load(std::memory_order_acquire); }
  void set_next_in_stream(Op* next) { next_in_stream_.store(next, std::memory_order_release); }

  // Marks the op done, then calls each(successor) for every successor (each
  // carrying the link's reference) with no lock held.
  template <class F>
  void mark_done(F&& each) {
    Op* first;
    std::vector<Op*>* more;
    uint32_t was;
    {
      // Done becomes true under lock_, so add_successor either links before
      // the successors are taken or sees done; one read-modify-write
      // decides whether anyone sleeps (see wait_done).
      SpinLockGuard g(lock_);
      was = done_state_.exchange(kDone, std::memory_order_acq_rel);
      first = first_successor_;
      first_successor_ = nullptr;
      more = more_successors_;
      more_successors_ = nullptr;
    }
    if (was == kWaitedFor) futex_wake_all(done_state_);
    if (first) each(first);
    if (more) {
      for (Op* s : *more) each(s);
      delete more;
    }
  }

  // Marks done an op that no other thread can reach yet, so that it has no
  // successors and no waiters (an event record on an idle stream).
  void complete_unpublished() {
    done_state_.store(kDone, std::memory_order_relaxed);  // published later with a release
  }

  // Blocks until the op is done: a short spin, then a futex sleep.
  void wait_done() {
    for (int i = 0; i < 200; ++i) {
      if (done()) return;
      if (i % 8 == 7) std::this_thread::yield();
      else cpu_relax();
    }
    // No lost wake-up: the waiter announces itself by changing the state
    // from kNotDone to kWaitedFor, and mark_done changes it to kDone with
    // one exchange. Both are read-modify-writes of one word, so one comes
    // first in its modification order. If the announcement comes first, the
    // exchange returns kWaitedFor and wakes every sleeper; a waiter not yet
    // asleep then finds kDone in the futex's own check and returns. If the
    // exchange comes first, the announcement fails, and the waiter reads
    // kDone. acquire on the waiter's reads pairs with the exchange's release.
    uint32_t s = done_state_.load(std::memory_order_acquire);
    while (s != kDone) {
      if (s == kNotDone &&
          !done_state_.compare_exchange_weak(s, kWaitedFor, std::memory_order_acquire, std::memory_order_acquire))
        continue;  // s was reloaded
      futex_wait(done_state_, kWaitedFor);
      s = done_state_.load(std::memory_order_acquire);
    }
  }

  // Called by execute() when the op's work goes on elsewhere (a stream
  // memory wait on an unmet condition). The engine then leaves the op
  // unfinished and calls park(); whoever completes the work later calls
  // Scheduler::complete(). Only the thread running execute() touches this.
  void defer() { deferred_ = true; }
  bool take_deferred() {
    if (!deferred_) return false;  // the common case: no write to the op
    deferred_ = false;
    return true;
  }
  // Hands a deferred op, with the runner's reference, to whatever completes
  // it. The caller must not touch the op afterwards.
  virtual void park() {}

  // Kernel work (what a GPU runs on its SMs) runs on its timeline's pool,
  // which is a green context's partition for its streams; all other work
  // runs on the shared pool (exec/scheduler.h "Pools"). Set by the kernel
  // ops' constructors.
  bool on_sms() const { return on_sms_; }
  void run_on_sms() { on_sms_ = true; }

  Timeline* timeline = nullptr;  // the timeline (stream) it is enqueued on; alive until the op is done (drop_handle)
  uint64_t seq = 0;          // position in the stream, assigned at enqueue
  int priority = 0;          // copy of the stream's priority (lower runs first)
  // Its number in the timeline trace, given at construction while tracing
  // (0: not traced; exec/trace.h).
  const uint32_t trace_id = trace::on() ? trace::next_op_id() : 0;

  // What the timeline trace calls the op (exec/trace.h). An op whose name
  // never varies answers trace_literal() instead (a string literal), which
  // the trace records without building a string per run.
  virtual const char* trace_literal() const { return "op"; }
  virtual std::string trace_name() const { return trace_literal(); }
  // For a name built per op (trace_literal() null): a key of what it is
  // made from (trace::name_key), so a run of like ops builds it once; 0
  // builds it every time.
  virtual uint64_t trace_name_key() const { return 0; }
  // `cucpu check` (core/check.h): appends the memory the op touches. An op
  // that learns it only by running (a kernel) answers true from
  // accesses_when_run() and reports it to the checker when it has run.
  virtual void accesses(std::vector<MemAccess>&) const {}
  virtual bool accesses_when_run() const { return false; }
  // True for an op that marks its writes for initcheck itself as it runs
  // (a graph segment, node by node), so the hook after it must not again.
  virtual bool marks_writes_as_run() const { return false; }
  // True for an op that calls the program's code (a host function): what
  // that code then enqueues is ordered after the op.
  virtual bool runs_program_code() const { return false; }

 private:
  std::atomic<Op*> next_in_stream_{nullptr};
  std::atomic<int32_t> refs_{1};
  std::atomic<int32_t> pending_{1};
  SpinLock lock_;
  bool deferred_ = false;            // see defer()
  bool on_sms_ = false;              // see on_sms()
  // kNotDone, kWaitedFor (not done, and a thread may sleep in wait_done)
  // or kDone (final; written under lock_, or before the op is published). A
  // futex word.
  static constexpr uint32_t kNotDone = 0, kWaitedFor = 1, kDone = 2;
  std::atomic<uint32_t> done_state_{kNotDone};
  Op* first_successor_ = nullptr;     // guarded by lock_; holds a reference
  // Guarded by lock_; each holds a reference. A pointer, allocated for a
  // second successor only, so that building an op stays a few stores.
  std::vector<Op*>* more_successors_ = nullptr;
};

// Holds one reference to an op and drops it on scope exit.
class OpRef {
 public:
  OpRef() = default;
  explicit OpRef(Op* op) : op_(op) {}
  OpRef(const OpRef&) = delete;
  OpRef& operator=(const OpRef&) = delete;
  OpRef(OpRef&& o) noexcept : op_(o.op_) { o.op_ = nullptr; }
  OpRef& operator=(OpRef&& o) noexcept {
    if (this != &o) { reset(); op_ = o.op_; o.op_ = nullptr; }
    return *this;
  }
  ~OpRef() { reset(); }
  void reset() { if (op_) op_->release(); op_ = nullptr; }
  Op* get() const { return op_; }
  Op* operator->() const { return op_; }
  explicit operator bool() const { return op_ != nullptr; }
  static OpRef share(Op* op) { if (op) op->retain(); return OpRef(op); }
  // Gives up the reference without releasing it: the caller now holds it.
  Op* detach() {
    Op* op = op_;
    op_ = nullptr;
    return op;
  }

 private:
  Op* op_ = nullptr;
};

}  // namespace cucpu
