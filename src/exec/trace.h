// The timeline trace (`cucpu trace`, CUCPU_TRACE=FILE): every op each
// timeline runs, on the timeline's track and on the worker's, and every API
// call, on its thread's track, with a flow from the call to each op it
// enqueued, and the nodes of each graph launch inside its slices. Written
// at exit (exec/trace_file.h) as Chrome trace JSON (Perfetto and
// chrome://tracing open it), or as Perfetto's protobuf trace with
// CUCPU_TRACE_FORMAT=perfetto or a FILE named *.pftrace.
// CUCPU_TRACE_SUMMARY=1 also prints, at exit, a table of each timeline's
// ops, busy time and the wait between ops.
//
// Dependencies other than stream order (event waits, the legacy stream's
// rules, graph edges) are flows from the end of one op to the start of the
// other, when the two run on different tracks. An op's slice starts when a
// worker turned to it: for ops a worker runs one after another, where the
// one before ended.
//
// Off (no CUCPU_TRACE), each hook is one branch on a flag read with a
// relaxed load. On, a thread appends to a buffer of its own (no lock): a
// cache-resident stage, streamed when full into a ring of
// CUCPU_TRACE_BUFFER events (default 2^19, its pages faulted in ahead by a
// thread of its own) that, once full, overwrites its oldest; the first
// overwrite says so on stderr and the file says how many were overwritten
// (and how many were lost, for a ring that could not be mapped). Memory
// stays bounded however long the run.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace cucpu {

class Op;

namespace trace {

extern std::atomic<bool> g_on;
inline bool on() { return g_on.load(std::memory_order_relaxed); }

// A timestamp: the CPU's time-stamp counter on x86-64 (a tenth of a
// steady_clock read; converted to time when the file is written, from two
// readings of both), else steady_clock nanoseconds.
inline uint64_t now() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// The API call the calling thread is in (0: none).
uint32_t current_call();
// A number for a new op (Op::trace_id).
uint32_t next_op_id();
// Op `op_id` was enqueued by the current call.
void enqueued(uint32_t op_id);
// Op `succ` runs after op `pred` (a dependency other than stream order:
// event waits, the legacy stream's rules, graph edges, group joins).
void linked(uint32_t pred, uint32_t succ);
// Around an API call: begin makes a new call current (calls nest: a host
// function's calls inside a worker's op), end records its slice and makes
// the outer one current again.
struct Call {
  uint32_t id, outer;
  uint64_t t0;
  uint32_t outer_enqueued;  // the outer call's first enqueued op, while this one runs
};
Call call_begin();
void call_end(const char* name, const Call& c, int result);

// A worker ran `op` of `timeline` from t0 to t1 (now()).
void op_ran(const Op* op, const void* timeline, uint64_t t0, uint64_t t1);
// A part of an op (a graph node of a segment) ran from t0 to t1 (now()):
// a slice inside the op's, named by keyed_name().
void part_ran(const void* timeline, uint32_t name, uint64_t t0, uint64_t t1);

// Names that would cost a string to build on every run (a kernel's, with
// its shape): `key` (nonzero) is a hash of everything the name is made
// from, and make(arg) builds it only when the calling thread has not seen
// the key since names last changed. Returns the name's id.
uint32_t keyed_name(uint64_t key, std::string (*make)(const void*), const void* arg);
// Objects that keys name (a module's functions) are gone: their addresses
// may come back naming something else.
void names_may_change();
// A hash of a few words, for keys (never 0).
inline uint64_t name_key(std::initializer_list<uint64_t> words) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint64_t w : words) {
    h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  }
  return h | 1;
}

// The label of a timeline's track ("stream 0x... (ctx 1, prio 0, non-blocking)").
void name_timeline(const void* timeline, std::string label);

}  // namespace trace
}  // namespace cucpu
