// Process-wide runtime state: initialization, teardown, devices and the
// handle pools of every object type.
//
// Contract: rt() may be called from any thread at any time, also after
// static destruction began (the runtime object is never destroyed; a static
// sentinel flips `state` to kTornDown when the library unloads).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda.h"
#include "core/handle_pool.h"

namespace cucpu {

class Context;
class Stream;
class Event;
struct Array;
struct TexObject;
class Graph;
struct Node;
class GraphExec;
class MemPool;
class UserObject;
struct ResourceDesc;

enum class LibState : int { kUninitialized, kReady, kTornDown };

struct Device {
  int ordinal = 0;
  std::string name;
  CUuuid uuid{};
  size_t total_mem = 0;
  // Primary context: created on first retain, kept for the device's life so
  // that its handle stays stable across release/retain (as the driver's does).
  Context* primary = nullptr;
  int primary_refs = 0;          // guarded by Runtime::primary_mu
  unsigned primary_flags = 0;    // guarded by Runtime::primary_mu
  bool primary_active = false;   // guarded by Runtime::primary_mu
  // Stream-ordered allocation pools: the default one (made on first use)
  // and the current one (cuDeviceSetMemPool). Guarded by Runtime::pool_mu.
  MemPool* default_pool = nullptr;
  MemPool* current_pool = nullptr;
  // A kernel's fault: as on driver 580, it fails every context of the
  // device from then on, those created later included (CUDA_SUCCESS: none).
  // (Copyable so that the device table can be built by value; devices are
  // not copied once the runtime is up.)
  struct alignas(64) FaultWord {  // read by every call: a line of its own
    std::atomic<int> value{CUDA_SUCCESS};
    FaultWord() = default;
    FaultWord(const FaultWord& o) : value(o.value.load()) {}
    FaultWord& operator=(const FaultWord& o) {
      value.store(o.value.load());
      return *this;
    }
  } fault;
};

struct Runtime {
  Runtime();
  std::atomic<int> state{static_cast<int>(LibState::kUninitialized)};
  std::vector<Device> devices;
  std::mutex primary_mu;
  std::mutex pool_mu;
  std::atomic<uint64_t> next_ctx_id{1};
  std::atomic<uint64_t> next_stream_id{1};
  // A destroyed context's slot is reused only after this many more contexts
  // were destroyed: its stale handle answers CONTEXT_IS_DESTROYED (and a
  // destroyed green context's its epitaph) at least that long.
  static constexpr size_t kContextQuarantine = 4096;
  HandlePool<Context> contexts;
  HandlePool<Stream> streams;
  HandlePool<Event> events;
  HandlePool<Array> arrays;
  HandlePool<Graph> graphs;
  HandlePool<Node> nodes;
  HandlePool<GraphExec> execs;
  HandlePool<MemPool> mempools;
  HandlePool<TexObject> textures;  // texture and surface objects
  HandlePool<UserObject> user_objects;
  HandlePool<ResourceDesc> resource_descs;
};

// The process's one runtime, made on first use. The fast path is a load:
// g_runtime is published (release) once the runtime is built, and a thread
// that reads it null takes the slow path, which builds it at most once.
Runtime& rt_first_use();
extern std::atomic<Runtime*> g_runtime;
inline Runtime& rt() {
  Runtime* r = g_runtime.load(std::memory_order_acquire);
  if (!r) [[unlikely]] return rt_first_use();
  return *r;
}

// The runtime, for a caller that knows it is built: an entry's body past
// its library-state check, whose thread has already read g_runtime with
// acquire (so relaxed suffices here).
inline Runtime& rt_built() { return *g_runtime.load(std::memory_order_relaxed); }

// Without a runtime the library is uninitialized (making one would not
// change that: cuInit does).
inline LibState lib_state() {
  Runtime* r = g_runtime.load(std::memory_order_acquire);
  if (!r) [[unlikely]] return LibState::kUninitialized;
  return static_cast<LibState>(r->state.load(std::memory_order_acquire));
}

// CUCPU_LOG=api traces calls; CUCPU_LOG is read once at load.
extern const bool g_trace_enabled;
inline bool trace_enabled() { return g_trace_enabled; }
// Any CUCPU_LOG value: diagnostics that are not errors (faults' details,
// private tables not served) are printed only then.
bool log_enabled();
void log_line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Whether the calling thread is running a host function or callback.
bool in_host_function();
void set_in_host_function(bool on);

}  // namespace cucpu
