// Chrome trace JSON (exec/trace_file.h): one process, a "thread" per track,
// complete events ("X") for slices, flow events ("s"/"f") for arrows.
#include <cinttypes>

#include "exec/trace_file.h"

namespace cucpu::trace {

namespace {

void json_string(FILE* f, const std::string& s) {
  std::fputc('"', f);
  for (char c : s) {
    if (c == '"' || c == '\\') std::fputc('\\', f);
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    std::fputc(c, f);
  }
  std::fputc('"', f);
}

double us(uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

void write_json(FILE* f, const TraceFile& t) {
  std::fprintf(f, "{\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":");
  json_string(f, t.process);
  std::fprintf(f, "}}");
  for (const TraceFile::Track& k : t.tracks) {
    std::fprintf(f, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%" PRIu64 ",\"name\":\"thread_name\",\"args\":{\"name\":", k.id);
    json_string(f, k.name);
    std::fprintf(f, "}}");
  }
  for (const TraceFile::Slice& s : t.slices) {
    std::fprintf(f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%" PRIu64 ",\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"%s\",\"name\":", s.track,
                 us(s.t0), us(s.t1) - us(s.t0), s.category);
    json_string(f, (*t.names)[s.name]);
    if (s.nargs) {
      std::fprintf(f, ",\"args\":{");
      for (int i = 0; i < s.nargs; ++i)
        std::fprintf(f, "%s\"%s\":%" PRId64, i ? "," : "", s.args[i].key, s.args[i].value);
      std::fprintf(f, "}");
    }
    std::fprintf(f, "}");
  }
  uint64_t id = 1;
  for (const TraceFile::Flow& w : t.flows) {
    const TraceFile::Slice &from = t.slices[w.from], &to = t.slices[w.to];
    std::fprintf(f, ",\n{\"ph\":\"s\",\"pid\":1,\"tid\":%" PRIu64 ",\"ts\":%.3f,\"id\":%" PRIu64 ",\"cat\":\"%s\",\"name\":\"%s\"}",
                 from.track, us(w.at), id, w.category, w.category);
    std::fprintf(f, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":%" PRIu64 ",\"ts\":%.3f,\"id\":%" PRIu64
                    ",\"cat\":\"%s\",\"name\":\"%s\"}",
                 to.track, us(to.t0), id, w.category, w.category);
    ++id;
  }
  std::fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"overwritten_events\":%" PRIu64
                 ",\"lost_events\":%" PRIu64 "}}\n",
               t.overwritten, t.lost);
}

}  // namespace cucpu::trace
