// The stream-order race checker (`cucpu check`, CUCPU_CHECK=1).
//
// It reports two operations that touch overlapping memory, at least one of
// them writing, when nothing orders them: neither stream order, event
// waits, the legacy stream's rules, graph launches of one exec, nor a host
// synchronization. Happens-before is tracked with vector clocks, the way
// ThreadSanitizer tracks it between threads: every stream and every host
// thread is an actor with a clock. Enqueueing work on a stream orders it
// after the enqueuing thread's past; a wait orders a stream after an
// event's record; a synchronize orders the host thread after a stream,
// an event or a context.
//
// Each op's clock is taken when it is enqueued, in the enqueuing thread's
// program order, so the decision is the same under every schedule: a race
// is reported whether or not the two ops happened to overlap in this run.
// Copies, sets and stream memory operations say what they touch when they
// are enqueued (Op::accesses); kernels, when they have run (their compiled
// code records each global access while checking is on, ptx/check_rt.h).
//
// Off (no CUCPU_CHECK), each hook is one branch on a flag. On, the hooks
// serialize on one mutex: checking trades speed for the answers.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "copy/copy3d.h"
#include "exec/op.h"

namespace cucpu {

class Event;
class Stream;
class Context;

namespace check {

extern std::atomic<bool> g_on;
inline bool on() { return g_on.load(std::memory_order_relaxed); }

// Work was enqueued on `s` by the calling thread: `parts` (a group, may be
// empty) and `join`. Called before the ops are linked, while the caller
// still holds them.
void enqueued(Stream* s, Op* const* parts, size_t n, Op* join);
// What blocks of a kernel op touched, reported by a thread that ran them
// (`op` is the op enqueued() saw; `last`: no thread reports for it after
// this one).
void ran(const Op* op, const std::vector<MemAccess>& touched, bool last);

// Brackets a thread's run of a kernel's blocks while checking: accesses
// outside live allocations are reported naming `kernel`, and what the
// blocks touched goes to ran(key, ..., last) at the end.
class KernelRun {
 public:
  KernelRun(const Op* key, const std::string& kernel, bool last) : active_(on()) {
    if (active_) [[unlikely]] begin(key, kernel, last);
  }
  ~KernelRun() {
    if (active_) [[unlikely]] end();
  }
  KernelRun(const KernelRun&) = delete;
  KernelRun& operator=(const KernelRun&) = delete;

 private:
  void begin(const Op* key, const std::string& kernel, bool last);
  void end();
  bool active_;
};

void event_recorded(Event* e, Stream* s);
void stream_waits_event(Stream* s, Event* e);
// The calling thread saw `s`, `e` or every stream of `c` (or of every
// context: null) complete (a synchronize, a query answering SUCCESS, a
// synchronous copy).
void host_waited_stream(Stream* s);
void host_waited_event(Event* e);
void host_waited_context(Context* c);
// A launch of graph exec `exec` on `s`: ordered after the exec's previous
// launch (launches of one exec never overlap).
void graph_launch_begins(const void* exec, Stream* s);
void graph_launch_enqueued(const void* exec, Stream* s);
// The calling worker runs host function `op`: its calls happen after
// everything the op is ordered after.
void host_function_begins(const Op* op);
// Managed memory based at `base` was attached to `s` alone (SINGLE), or
// (null) to every stream, in `s`'s order: work of other streams must not
// touch it while so attached.
void memory_attached(uintptr_t base, Stream* single);
// Memory [base, base + n) was allocated or freed: what was known of
// earlier accesses to it is forgotten (an address reused by a new
// allocation is new memory).
void memory_renewed(uintptr_t base, size_t n);

// The bytes a copy reads and writes, and a set writes: each side's
// bounding range (rows between a pitched box's rows count as touched).
inline void copy_accesses(const Copy3D& c, std::vector<MemAccess>& out) {
  if (c.width == 0 || c.height == 0 || c.depth == 0) return;
  const auto extent = [&](size_t pitch, size_t slice) { return (c.depth - 1) * slice + (c.height - 1) * pitch + c.width; };
  const auto src = reinterpret_cast<uintptr_t>(c.src), dst = reinterpret_cast<uintptr_t>(c.dst);
  out.push_back({src, src + extent(c.src_pitch, c.src_slice), false, false});
  out.push_back({dst, dst + extent(c.dst_pitch, c.dst_slice), true, false});
}
inline MemAccess memset_access(const Memset2D& m) {
  const auto dst = reinterpret_cast<uintptr_t>(m.dst);
  if (m.width == 0 || m.height == 0) return {};
  return {dst, dst + (m.height - 1) * m.pitch + m.width * m.elem, true, false};
}

// Races and invalid accesses reported so far.
uint64_t reports();

}  // namespace check
}  // namespace cucpu
