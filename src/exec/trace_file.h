// The file a trace is written to (exec/trace.h): what the recorded events
// become once resolved (tracks, slices, flows), and the two formats that
// write it. Called once, at exit, by the trace's writer; knows nothing of
// how the events were recorded.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace cucpu::trace {

struct TraceFile {
  struct Track {
    uint64_t id;  // unique; the tid in JSON (a thread's own id, timelines above every tid)
    std::string name;
  };
  struct Arg {
    const char* key;
    int64_t value;
  };
  // A slice of a track, in nanoseconds from the trace's first event.
  struct Slice {
    uint64_t track;
    uint64_t t0, t1;
    uint32_t name;         // into names
    const char* category;  // "api", "op", "node"
    Arg args[2];
    int nargs = 0;
    int64_t parent = -1;   // a node's slice: its op's slice on the same track (into slices)
  };
  // An arrow from a point in slice `from` to the start of slice `to`.
  struct Flow {
    uint32_t from, to;  // into slices
    uint64_t at;        // where it leaves `from`
    const char* category;  // "enqueue", "dependency"
  };
  std::string process = "cucpu";
  std::vector<Track> tracks;
  std::vector<Slice> slices;
  std::vector<Flow> flows;
  const std::vector<std::string>* names = nullptr;
  uint64_t overwritten = 0;  // events the ring buffers overwrote
  uint64_t lost = 0;         // events of threads whose ring could not be mapped
};

// Chrome trace JSON (chrome://tracing, Perfetto).
void write_json(FILE* f, const TraceFile& t);
// Perfetto's protobuf trace (ui.perfetto.dev, trace_processor): smaller for
// long runs. Slices that overlap on one track without nesting (a kernel's
// blocks on several workers) go to child tracks of it.
void write_perfetto(FILE* f, const TraceFile& t);

}  // namespace cucpu::trace
