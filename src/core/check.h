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
// code records each global access while checking is on, devrt/check_rt.h).
//
// Off (no CUCPU_CHECK), each hook is one branch on a flag. On, the hooks
// serialize on one mutex: checking trades speed for the answers.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "copy/copy3d.h"
#include "exec/op.h"

namespace cucpu {

struct Allocation;
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
// this one; `part`: the graph node they belong to, 0 for the op's own).
void ran(const Op* op, const std::vector<MemAccess>& touched, bool last, uint32_t part = 0);

// The order among the nodes of one graph exec, for races between the
// nodes of one launch: part p (node p - 1 of the exec's plan) runs before
// part q when an edge path leads from p to q. Immutable once built.
struct PartOrder {
  uint64_t id = 0;                   // unique per order built: a pair of nodes is reported once per id
  std::vector<std::string> names;    // by part - 1 ("memcpy node 64 B (node 3)")
  size_t words = 0;                  // bitset words per node
  std::vector<uint64_t> reach;       // node p's successors by any path: reach[(p - 1) * words ...]
  bool before(uint32_t p, uint32_t q) const {
    const uint32_t j = q - 1;
    return (reach[(p - 1) * words + j / 64] >> (j % 64)) & 1;
  }
};
// Before the ops of a graph launch are enqueued (with `join` the group's
// join): the launch's accesses tagged with parts are ordered by `order`
// (null for a graph too big to order: its nodes are not checked),
// and each op of `node_ops` is node `part` as a whole (its accesses, also
// those it reports when run, belong to that node).
void graph_parts(const Op* join, std::shared_ptr<const PartOrder> order,
                 const std::vector<std::pair<const Op*, uint32_t>>& node_ops);

// Brackets a thread's run of a kernel's blocks while checking: accesses
// outside live allocations are reported naming `kernel`, and what the
// blocks touched goes to ran(key, ..., last) at the end.
class KernelRun {
 public:
  KernelRun(const Op* key, const std::string& kernel, bool last, uint32_t part = 0) : active_(on()) {
    if (active_) [[unlikely]] begin(key, kernel, last, part);
  }
  ~KernelRun() {
    if (active_) [[unlikely]] end();
  }
  KernelRun(const KernelRun&) = delete;
  KernelRun& operator=(const KernelRun&) = delete;

 private:
  void begin(const Op* key, const std::string& kernel, bool last, uint32_t part);
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
// Memory was allocated: what was known of earlier accesses to its
// addresses is forgotten (an address reused by a new allocation is new
// memory), and its bytes are unwritten (initcheck, device memory).
void memory_renewed(const Allocation& a);
// The allocation at `base` is being released.
void memory_released(uintptr_t base);

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

// A batch copy's source read during the API call, out of stream order
// (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL, or ANY, which may read it
// then): ordered after what the host has seen complete, not after the
// stream's earlier work, which must not touch it (the spec's undefined
// behaviour). `c` is the copy before its source was staged.
void source_read_during_call(Stream* s, const Copy3D& c, size_t index, bool any);

// A graph node wrote these ranges, now (initcheck: they count as written;
// the ops that are not segments are marked when they have run).
void node_wrote(const std::vector<MemAccess>& ranges);

// Races and invalid accesses reported so far.
uint64_t reports();

}  // namespace check
}  // namespace cucpu
