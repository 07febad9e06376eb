// Context: a device's address space and the streams, events and memory
// created in it.
//
// Ordering contract for the legacy (NULL) stream:
//  - `order_mu` is taken exclusively by legacy-stream enqueues and shared by
//    enqueues on blocking streams, so that "legacy op waits for every
//    blocking stream" and "blocking op waits for the last legacy op" see a
//    consistent cut. Non-blocking streams never take it.
//  - Lock order: order_mu -> streams_mu -> a stream's tail lock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "cuda.h"
#include "core/context_storage.h"
#include "core/runtime.h"
#include "exec/op.h"

namespace cucpu {

class Stream;
class GreenContext;
class Scheduler;

// Lines of its own: every call reads its sticky error.
class alignas(64) Context {
 public:
  Context(Device* dev, unsigned flags, bool primary);
  // The context cuCtxFromGreenCtx gives for `green`: a context of its own
  // (its streams, its legacy stream, its sticky error) whose memory,
  // modules and events are its device's primary context's, `owner`, and
  // whose streams run on the green context's partition of the engine.
  Context(Device* dev, unsigned flags, GreenContext* green, Context* owner, Scheduler* pool);
  ~Context();

  Device* const device;
  const bool primary;
  const uint64_t id;
  std::atomic<unsigned> flags;
  // The green context this context was converted from, else null; owned.
  GreenContext* const green;
  // Its handle: a green context's CUgreenCtx is its converted context's
  // pointer (as driver 580's are one value). Null when `green` is.
  CUgreenCtx green_handle() { return green ? reinterpret_cast<CUgreenCtx>(this) : nullptr; }
  // Whose allocations, modules, events and graphs the ones made in this
  // context are (what the driver's "same context" rules compare): the
  // primary context for a converted context, else the context itself.
  Context* const owner;
  // The pool its streams' work runs on (exec/partition.h).
  Scheduler* const pool;

  // Sticky error: set by a fault during asynchronous work, returned by every
  // later call that uses the context. CUDA_SUCCESS when none.
  // The device's fault, if any, counts as every context's.
  std::atomic<int> sticky{CUDA_SUCCESS};
  CUresult sticky_error() const {
    int e = sticky.load(std::memory_order_acquire);
    if (e == CUDA_SUCCESS) e = device->fault.value.load(std::memory_order_acquire);
    return static_cast<CUresult>(e);
  }
  void set_sticky(CUresult e) {
    int expected = CUDA_SUCCESS;
    sticky.compare_exchange_strong(expected, e, std::memory_order_acq_rel);
  }
  // A kernel's fault: this context's sticky error and the device's.
  void set_device_fault(CUresult e) {
    set_sticky(e);
    int expected = CUDA_SUCCESS;
    device->fault.value.compare_exchange_strong(expected, e, std::memory_order_acq_rel);
  }

  Stream* legacy_stream() const { return legacy_; }
  // The timeline of the markers that record the whole context's work in an
  // event (core/context_work.h): made on first use, drained and destroyed
  // with the context.
  Stream* marker_stream();
  // The calling thread's per-thread default stream, created on first use.
  Stream* per_thread_stream();

  // Every non-legacy stream of the context, live or draining after destroy.
  // link_stream is false (nothing linked) once the context's handle is
  // dead: a stream made while it is destroyed never joins it.
  bool link_stream(Stream* s);
  void unlink_stream(Stream* s);
  // Waits the whole context takes on (cuGreenCtxWaitEvent), which streams
  // made later take on too while they are pending (core/context_work.h).
  void add_context_wait(OpRef op);
  std::vector<OpRef> pending_context_waits();
  template <class F>
  void for_each_stream(F&& f) {
    std::lock_guard<std::mutex> g(streams_mu);
    for (Stream* s : streams_) f(s);
  }

  // Calls f for each context whose work is this one's: itself and, for a
  // primary context, the contexts converted from its green contexts (driver
  // 580: a primary context's synchronize and its events cover them). Under
  // the registry's lock: f may take a context's streams_mu, nothing that
  // waits on another thread.
  void for_each_work_context(const std::function<void(Context*)>& f);
  // Waits until every op enqueued in this context before the call is done
  // (for a primary context, in its green contexts' converted contexts too).
  CUresult synchronize();
  // Destroys the context's streams (their handles die) after draining them,
  // ending any capture they take part in.
  void shut_down();
  // Whether any stream the user made in this context still has its handle.
  bool has_live_streams();
  // Takes a dead, drained context out of the registry that context-wide
  // waits walk (synchronize_all_contexts, a primary context's synchronize):
  // no call can give it work any more. For a destroyed green context whose
  // streams outlive it (their handles answer CONTEXT_IS_DESTROYED for good).
  void leave_registry();

  std::shared_mutex order_mu;
  std::mutex streams_mu;

  // cuCtxSetLimit / cuCtxSetCacheConfig / cuCtxSetSharedMemConfig state.
  std::atomic<int> cache_config{CU_FUNC_CACHE_PREFER_NONE};
  // Blocking streams of this context that capture (the legacy stream is
  // unusable while any do).
  std::atomic<int> blocking_captures{0};
  std::atomic<size_t> limits[0x10]{};
  // The driver's default limits (at creation, and when a primary context is reset).
  void reset_limits();
  // What client libraries keep per context (cudart's private table).
  ContextStorage local_storage;
  // Contexts (by id) this one has enabled peer access to. Access itself
  // needs nothing: every device's memory is the host's.
  std::mutex peers_mu;
  std::vector<uint64_t> peers;  // guarded by peers_mu

 private:
  Context(Device* dev, unsigned flags, bool primary, GreenContext* green, Context* owner, Scheduler* pool);

  Stream* legacy_ = nullptr;
  std::atomic<Stream*> markers_{nullptr};
  std::vector<Stream*> streams_;  // guarded by streams_mu
  std::vector<OpRef> context_waits_;     // guarded by streams_mu; pruned as they complete
  std::condition_variable unlinked_;  // signalled (under streams_mu) when a stream leaves streams_
  std::vector<std::pair<uint64_t, Stream*>> per_thread_;  // thread key -> stream; guarded by streams_mu
  // Bumped by shut_down: a thread's cached per-thread stream of an earlier
  // generation is gone (a primary context keeps its id across resets).
  std::atomic<uint64_t> generation_{0};

  // Adds (stream, last enqueued seq) for every stream of the context, each
  // with a reference the caller drops.
  void collect_sync_targets(std::vector<std::pair<Stream*, uint64_t>>& out);
  friend void synchronize_all_contexts();
};

// Whether context `c`, remembered by an object that belongs to it together
// with its id then, is still that context: its handle live and its id
// unchanged. (A destroyed context's slot may hold a later context; ids are
// never reused. The slot's memory stays mapped, so reading it is safe.)
inline bool context_alive(const Context* c, uint64_t id) {
  return rt().contexts.state(c) == HandleState::kLive && c->id == id;
}

// Waits until every op enqueued in any context before the call is done
// (cuMemFree and cuArrayDestroy: memory may be used by another context's
// streams). Must not be called from a host function.
void synchronize_all_contexts();

// The calling thread's context stack (cuCtxPush/Pop/Set/GetCurrent). Its
// top is mirrored in two words of static TLS, so that current_context(),
// which every call makes, reads no heap memory (a heap line beside one that a
// worker writes costs a line transfer per call on a many-core machine).
// constinit: an access is one load, with no call of a TLS init function.
// Each entry keeps the id its context had when it was made current: a
// context destroyed meanwhile (by any thread) may have left its slot to a
// later context, which must not become this thread's current context.
namespace context_stack {
void push(Context* c);
Context* pop();            // the old top, or null when the stack is empty
void set_top(Context* c);  // replaces the top (pushes onto an empty stack)
}  // namespace context_stack
extern __attribute__((tls_model("initial-exec"))) constinit thread_local Context* t_current_context;
extern __attribute__((tls_model("initial-exec"))) constinit thread_local uint64_t t_current_context_id;
inline Context* current_context() { return t_current_context; }
// Whether live context `c` (the current one) is the context that was made
// current, not a later one in its slot. Read `c->id` only after the slot's
// cookie was seen live (an acquire: the constructor's writes are visible).
inline bool current_context_is(const Context* c) { return c->id == t_current_context_id; }

}  // namespace cucpu
