#include "exec/scheduler.h"

#include <chrono>
#include <cstdlib>
#include <string>

#include "exec/partition.h"
#include "exec/timeline.h"
#include "exec/schedule.h"
#include "exec/trace.h"
#include "exec/spin_lock.h"

namespace cucpu {

std::atomic<bool> g_op_hooks{false};
std::atomic<OpRanHook> g_op_ran_hook{nullptr};
namespace {
// The pool whose worker this thread is (null on other threads).
thread_local Scheduler* t_pool = nullptr;
// The shared pool, once made (before any timeline: each names its pool).
Scheduler* g_shared = nullptr;
// True while this thread runs a chain. A chain started inside another (an
// op whose work submits a ready bookkeeping op: an API call made from a host
// function) runs as on an API thread: it takes no part in the searching
// count, which belongs to the outer chain, and runs no other work inline.
thread_local bool t_in_chain = false;

int level_of(int priority) {
  int level = -priority;  // 0 (lowest) .. 7 (highest)
  if (level < 0) level = 0;
  if (level >= Scheduler::kPriorityLevels) level = Scheduler::kPriorityLevels - 1;
  return Scheduler::kPriorityLevels - 1 - level;  // queue 0 is served first
}

}  // namespace

size_t configured_workers() {
  static const size_t n = [] {
    if (const char* s = std::getenv("CUCPU_WORKERS")) {
      long v = std::strtol(s, nullptr, 10);
      if (v >= 1 && v <= static_cast<long>(kMaxWorkers)) return static_cast<size_t>(v);
    }
    unsigned hw = std::thread::hardware_concurrency();
    return size_t{hw < 2 ? 2u : hw > kMaxWorkers ? static_cast<unsigned>(kMaxWorkers) : hw};
  }();
  return n;
}

// Why a queued op is always taken (no lost wake-up).
//
// Searching. Each worker thread contributes 0 or 1 to searching_, and only
// it changes its own contribution. It is 1 exactly while the worker is in
// worker_main's loop and not asleep (spinning included), and in run_chain
// from the increment before an op's finish until stop_searching or the
// chain's return to worker_main. A chain nested in an op's work (t_in_chain)
// runs as on an API thread and leaves the count alone, so the count never
// drifts: a drift of +1 would make every later push skip its wake-up.
//
// Claim: an op that push() queues is popped. push() queues the op and
// increments ready_count_ (seq_cst) under mu_, then, still under mu_, looks
// at sleepers_, waking_ and searching_:
//  1. A wake-up is sent (sleepers_ > 0, waking_ == 0, searching_ == 0): a
//     sleeper returns from cv_.wait and pops under mu_, after the push.
//  2. waking_ > 0: a wake-up was sent to a sleeper that has not yet taken
//     mu_ again (it decrements waking_ in the same critical section as its
//     pop), so its pop comes after this push. If it finds more queued than
//     it takes, it passes the wake-up on: the claim again, for the rest.
//  3. searching_ > 0: some worker W counts as searching. W's next step
//     that can leave the count is either worker_main's pop under mu_ (after
//     this push in mu_'s order: it sees the op, or sleeps only when another
//     worker took it) or stop_searching(), which decrements searching_ and
//     then loads ready_count_, both seq_cst. The pusher incremented
//     ready_count_ and then loaded searching_, both seq_cst: in the single
//     order of seq_cst operations one of the two loads comes after the
//     other side's write. Either the pusher saw W not searching (not this
//     case), or W sees ready_count_ > 0 and wakes a sleeper itself
//     (should_wake_locked: the claim again).
//  4. sleepers_ == 0 and searching_ == 0: every worker is running an op. A
//     worker's chain ends with it searching (run_chain re-enters the count
//     before its last op's finish) and back in worker_main, which pops.
// The hand-off slot bypasses the queue: an op stored there by push() is
// taken by the spinner that opened it, which closes the slot with an
// exchange before it stops spinning.
// A wake-up is never lost to a sleeper that is not there: waking_ counts
// wake-ups sent and not yet taken, a sleeper takes one whenever it returns
// from cv_.wait (spurious returns included), so waking_ > 0 implies a
// sleeper that has not yet re-taken mu_.
// tests/unit/wakeup_model_test.cpp checks this exhaustively on a model of
// these steps (two workers, one producer), and shows that the model finds
// the hang when a nested chain leaks its count or stop_searching() skips its
// re-check.

Scheduler& Scheduler::instance() {
  // Leaked on purpose: workers may still be finishing ops while static
  // destructors of other translation units run.
  static Scheduler* s = g_shared = new Scheduler(configured_workers());
  return *s;
}

Scheduler* Scheduler::home_of(const Op* op) { return op->on_sms() ? op->timeline->pool : g_shared; }

bool Scheduler::on_worker_thread() { return t_pool != nullptr; }

Scheduler* Scheduler::current_pool() { return t_pool; }

bool Scheduler::on_own_worker() const { return t_pool == this && !t_in_chain; }

Scheduler::IdleState Scheduler::idle_state() {
  std::lock_guard<std::mutex> g(mu_);
  return {sleepers_, searching_.load(std::memory_order_seq_cst)};
}

Scheduler::Scheduler(size_t n) {
  workers_.reserve(n);
  for (size_t i = 0; i < n; ++i) workers_.emplace_back([this] { worker_main(); });
  for (auto& w : workers_) w.detach();
}

Scheduler::~Scheduler() {
  std::lock_guard<std::mutex> g(mu_);
  stopping_ = true;
  cv_.notify_all();
}

void Scheduler::push(Op* op) {
  if (Scheduler* own = home_of(op); own != this) [[unlikely]] {
    own->push(op);
    return;
  }
  // A spinning worker with nothing queued takes the op straight from the
  // hand-off slot: one cache line between the two threads instead of the
  // queue's lock, deque and counter. Priority order is kept: the slot is
  // open only while every queue is empty.
  Op* open = kHandoffOpen;
  __builtin_prefetch(&handoff_, 1, 3);  // read then CAS: one transfer, not two
  if (handoff_.load(std::memory_order_relaxed) == kHandoffOpen &&
      handoff_.compare_exchange_strong(open, op, std::memory_order_acq_rel, std::memory_order_relaxed))
    return;
  bool wake;
  {
    std::lock_guard<std::mutex> g(mu_);
    ready_[level_of(op->priority)].push_back(op);
    ready_count_.fetch_add(1, std::memory_order_seq_cst);
    wake = should_wake_locked();
  }
  if (wake) cv_.notify_one();
}

// Wakes at most one sleeper at a time, and only when no worker spins: a
// worker that pops an op while more are queued wakes the next one (see
// worker_main), so a burst of pushes costs the pushing thread one wake-up
// and parallelism ramps up on the workers' side.
bool Scheduler::should_wake_locked() {
  if (sleepers_ == 0 || waking_ > 0 || searching_.load(std::memory_order_seq_cst) > 0) return false;
  ++waking_;
  return true;
}

void Scheduler::submit(Op* op) {
  if (op->trivial()) {
    run_chain(op);
    return;
  }
  push(op);
}

Op* Scheduler::pop_locked() {
  for (auto& q : ready_) {
    if (!q.empty()) {
      Op* op = q.front();
      q.pop_front();
      ready_count_.fetch_sub(1, std::memory_order_relaxed);
      return op;
    }
  }
  return nullptr;
}

void Scheduler::stop_searching() {
  // A pusher that saw this worker searching woke no one. If it queued an op
  // meanwhile, wake for it now: seq_cst on both counters (the pusher
  // increments ready_count_ and then reads searching_) means that one side
  // sees the other. Without this, a queued op could wait behind whatever
  // this worker runs next, however long that takes.
  searching_.fetch_sub(1, std::memory_order_seq_cst);
  if (ready_count_.load(std::memory_order_seq_cst) == 0) return;
  bool wake;
  {
    std::lock_guard<std::mutex> g(mu_);
    wake = should_wake_locked();
  }
  if (wake) cv_.notify_one();
}

void Scheduler::complete(Op* op) {
  std::vector<Op*> trivial;
  if (Op* tail = finish(op, false, trivial)) watch_tail(tail, false, false, trivial);
  for (Op* t : trivial) run_chain(t);
}

void Scheduler::run_chain(Op* op) {
  // Only workers take non-trivial successors inline: trivial ops finishing
  // on an API thread, or inside an op's work, must not run user code there.
  const bool on_worker = on_own_worker();
  const bool outermost = !t_in_chain;
  t_in_chain = true;
  std::vector<Op*> more;  // further ops to run here; allocated only when needed
  // Traced: when the last op ran. The op after it in this chain starts its
  // slice there (one time-stamp read an op, not two; the hand-off between
  // the two falls in the later op's slice).
  uint64_t traced_end = 0;
  while (op) {
    if (g_op_hooks.load(std::memory_order_relaxed)) [[unlikely]] {
      if (schedule::random_on() && !op->trivial()) {
        schedule::before_execute(op, op->timeline->id);  // may delay the op: its wait is no part of it
        traced_end = 0;
      }
      const uint64_t t0 = !trace::on() ? 0 : traced_end ? traced_end : trace::now();
      op->execute(op->timeline->status_before_execute());
      if (trace::on()) {
        traced_end = trace::now();
        trace::op_ran(op, op->timeline, t0, traced_end);
      }
      if (OpRanHook ran = g_op_ran_hook.load(std::memory_order_relaxed)) ran(op);
    } else {
      op->execute(op->timeline->status_before_execute());
    }
    if (op->take_deferred()) {
      // Its work goes on elsewhere; the chain ends here unless more is
      // ready. Like a finished last op, the worker counts as searching.
      Op* parked = op;
      if (more.empty()) {
        if (on_worker) searching_.fetch_add(1, std::memory_order_seq_cst);
        op = nullptr;
      } else {
        op = more.back();
        more.pop_back();
      }
      parked->park();
      continue;
    }
    // A worker counts itself as searching before its op is marked done: a
    // thread that sees the op done and pushes work then leaves the wake-up
    // to this worker, which is about to look at the queues anyway. If the
    // chain goes on after all, the worker is busy again. When the stream's
    // next op is already linked, the worker will most likely run it, so it
    // skips the count (two read-modify-writes of a line all workers share)
    // and takes it up only if the chain ends after all.
    const bool linked_on = on_worker && op->seq != 0 && op->next_in_stream() != nullptr;
    if (on_worker && !linked_on) searching_.fetch_add(1, std::memory_order_seq_cst);
    // Linger only with nothing else to run here: what a finished op made
    // ready must not wait for a stream that may stay quiet.
    if (Op* tail = finish(op, on_worker, more)) watch_tail(tail, on_worker && more.empty(), on_worker, more);
    if (more.empty()) {
      if (linked_on) searching_.fetch_add(1, std::memory_order_seq_cst);  // what worker_main expects
      op = nullptr;
    } else {
      if (on_worker && !linked_on) stop_searching();
      op = more.back();
      more.pop_back();
    }
  }
  if (outermost) t_in_chain = false;
}

Op* Scheduler::finish(Op* op, bool allow_inline, std::vector<Op*>& run_here) {
  // Parts of a group (seq 0) have no place in a stream's timeline.
  Timeline* const s = op->seq != 0 ? op->timeline : nullptr;
  if (s) {
    // Our own reference, until the stream's link is followed or given up:
    // once `completed` is stored, a thread in drop_handle() may drop the
    // handle's reference at any moment.
    s->retain();
    // The stream's completed sequence must advance before the op is marked
    // done: once done, the stream's next op may run and publish its own
    // (higher) sequence number.
    s->on_op_done(op->seq);
  }
  // One ready successor may run here. The stream's next op has the first
  // claim on that slot, but it is known ready only once its link is
  // released (after the op is marked done); until then the first other
  // ready successor is held back here rather than queued.
  Op* held = nullptr;
  op->mark_done([&](Op* succ) {
    if (!succ->release_dependency()) succ->release();  // the link's reference; others still hold theirs
    else if (succ->trivial()) run_here.push_back(succ);
    else if (allow_inline && !held && home_of(succ) == this) held = succ;
    else push(succ);
  });
  Op* next = s ? op->next_in_stream() : nullptr;
  bool inline_taken = !allow_inline;
  if (next) {
    // The runner's reference goes with the tail reference.
    if (follow(op, 2, next, inline_taken, run_here) && held) {
      push(held);
      held = nullptr;
    }
  }
  if (held) run_inline_last(held, run_here);
  if (!s) {
    op->release();  // the runner's reference
    return nullptr;
  }
  // Still the stream's tail: the caller watches for the link or gives the
  // stream up, keeping the runner's reference until then (a producer that
  // claims the stream may drop the tail reference at any moment).
  if (!next) return op;
  s->release();
  return nullptr;
}

void Scheduler::dispatch(Op* op, bool& inline_taken, std::vector<Op*>& run_here) {
  if (op->trivial()) {
    run_here.push_back(op);
  } else if (!inline_taken && home_of(op) == this) {
    run_inline_last(op, run_here);
    inline_taken = true;
  } else {
    push(op);
  }
}

void Scheduler::run_inline_last(Op* op, std::vector<Op*>& run_here) {
  // run_chain takes ops from the back: bookkeeping ops (trivial, and what
  // other streams wait for) go first, the one op of real work last.
  run_here.insert(run_here.begin(), op);
}

bool Scheduler::follow(Op* tail, int32_t tail_refs, Op* next, bool& inline_taken, std::vector<Op*>& run_here) {
  tail->release(tail_refs);  // its tail reference: no one touches its link any more
  if (!next->release_stream_link()) {
    next->release();  // the stream link's reference; its other dependencies carry it
    return false;
  }
  const bool was_taken = inline_taken;
  dispatch(next, inline_taken, run_here);
  return !was_taken && inline_taken;
}

void Scheduler::watch_tail(Op* tail, bool linger, bool allow_inline, std::vector<Op*>& run_here) {
  Timeline* const s = tail->timeline;
  Op* next = nullptr;
  if (linger && !s->closed()) {
    // A producer feeding this stream is likely to link the next op within
    // microseconds; watching the link costs this core a few microseconds
    // and saves the producer the scheduler's queue and a wake-up. Stop at
    // once when other work is queued.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(5);
    for (int i = 1; !(next = tail->next_in_stream()); ++i) {
      if (ready_count_.load(std::memory_order_relaxed) != 0) break;
      if (i % 16 == 0) {
        if (std::chrono::steady_clock::now() > until) break;
        std::this_thread::yield();  // a small machine: the producer may need this core
      } else {
        cpu_relax();
      }
    }
  }
  if (next || s->give_up(tail)) {
    if (!next) next = tail->next_in_stream();
    bool inline_taken = !allow_inline || !run_here.empty();
    follow(tail, 2, next, inline_taken, run_here);  // with the runner's reference, kept by finish
  } else {
    tail->release();  // the runner's reference, kept by finish
  }
  s->release();
}

void Scheduler::worker_main() {
  t_pool = this;
  // Invariant: while in this loop outside run_chain, the worker counts in
  // searching_; it leaves the count (under mu_) only to sleep or to run an
  // op, and run_chain re-enters it before the chain's last op completes.
  searching_.fetch_add(1, std::memory_order_seq_cst);
  for (;;) {
    Op* op = nullptr;
    if (ready_count_.load(std::memory_order_acquire) == 0) {
      // Spin briefly, one worker at a time, yielding so that on a small
      // machine the thread we wait for keeps its core.
      if (spinners_.fetch_add(1, std::memory_order_acq_rel) == 0) {
        handoff_.store(kHandoffOpen, std::memory_order_release);
        for (int i = 0; i < 2000 && ready_count_.load(std::memory_order_acquire) == 0 &&
                        handoff_.load(std::memory_order_acquire) == kHandoffOpen;
             ++i) {
          if (i % 16 == 15) std::this_thread::yield();
          else cpu_relax();
        }
        Op* handed = handoff_.exchange(nullptr, std::memory_order_acq_rel);  // close the slot
        if (handed != kHandoffOpen) op = handed;
      }
      spinners_.fetch_sub(1, std::memory_order_acq_rel);
    }
    if (op) {
      stop_searching();
      run_chain(op);
      continue;
    }
    std::unique_lock<std::mutex> lk(mu_);
    while (!stopping_ && (op = pop_locked()) == nullptr) {
      searching_.fetch_sub(1, std::memory_order_seq_cst);
      ++sleepers_;
      cv_.wait(lk);
      --sleepers_;
      if (waking_ > 0) --waking_;  // this may be the wake-up that was sent
      searching_.fetch_add(1, std::memory_order_seq_cst);
    }
    if (!op) return;
    searching_.fetch_sub(1, std::memory_order_seq_cst);
    // More work queued: pass the wake-up on (chaining), so that parallelism
    // ramps up on the workers' side rather than in the pushing thread.
    const bool wake = ready_count_.load(std::memory_order_relaxed) > 0 && should_wake_locked();
    lk.unlock();
    if (wake) cv_.notify_one();
    run_chain(op);
  }
}

}  // namespace cucpu
