#include "core/user_object.h"
#include "core/runtime.h"

#include "exec/asymmetric_fence.h"

#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/array.h"
#include "core/mem_pool.h"
#include "core/context.h"
#include "core/event.h"
#include "core/graph.h"
#include "core/stream.h"
#include "core/graph_exec.h"
#include "core/texture.h"
#include "core/green_context.h"

namespace cucpu {
namespace {

int configured_devices() {
  if (const char* s = std::getenv("CUCPU_DEVICES")) {
    long n = std::strtol(s, nullptr, 10);
    if (n >= 0 && n <= 64) return static_cast<int>(n);
  }
  return 1;
}

size_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(size) : (size_t{16} << 30);
}

// CUCPU_LOG: comma-separated tokens. "api" traces every call, "api:FILE"
// traces into FILE (appended); any value turns on the diagnostics log.
struct LogConfig {
  bool any = false;
  bool trace = false;
  std::FILE* out = stderr;
};

const LogConfig& log_config() {
  static const LogConfig cfg = [] {
    LogConfig c;
    const char* s = std::getenv("CUCPU_LOG");
    if (!s || !*s) return c;
    c.any = true;
    std::string unknown;
    for (const char* t = s; *t;) {
      const char* end = std::strchr(t, ',');
      std::string tok(t, end ? static_cast<size_t>(end - t) : std::strlen(t));
      if (tok == "api") {
        c.trace = true;
      } else if (tok.rfind("api:", 0) == 0 && tok.size() > 4) {
        c.trace = true;
        if (std::FILE* f = std::fopen(tok.c_str() + 4, "a")) {
          std::setvbuf(f, nullptr, _IOLBF, 0);
          c.out = f;  // never closed: calls may be traced until the process ends
        } else {
          std::fprintf(stderr, "[cucpu] CUCPU_LOG: cannot open '%s' for the trace: tracing to stderr\n", tok.c_str() + 4);
        }
      } else if (tok != "1" && !tok.empty()) {
        unknown += (unknown.empty() ? "" : ", ") + tok;
      }
      if (!end) break;
      t = end + 1;
    }
    if (!unknown.empty())
      std::fprintf(stderr, "[cucpu] CUCPU_LOG: unknown value '%s' (known: 1, api, api:FILE); logging diagnostics\n",
                   unknown.c_str());
    return c;
  }();
  return cfg;
}

// Flips the library to "torn down" when static destructors run, so calls
// made from other libraries' destructors get CUDA_ERROR_DEINITIALIZED.
struct TeardownSentinel {
  ~TeardownSentinel() { rt().state.store(static_cast<int>(LibState::kTornDown), std::memory_order_release); }
} g_sentinel;

thread_local bool t_in_host_fn = false;
}  // namespace

Runtime::Runtime()
    : contexts(1 << 16, 64 * 1024, kContextQuarantine), streams(1 << 20), events(1 << 20), arrays(1 << 18), graphs(1 << 18), nodes(1 << 22, 256 * 1024),
      execs(1 << 18), mempools(1 << 16), textures(1 << 20, 0), user_objects(1 << 16, 0),
      resource_descs(1 << 20, 0) {
  int n = configured_devices();
  size_t mem = physical_memory();
  devices.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Device& d = devices[static_cast<size_t>(i)];
    d.ordinal = i;
    d.name = "cucpu virtual device " + std::to_string(i);
    d.total_mem = mem;
    static const char tag[] = "cucpu-vdevice";
    std::memcpy(d.uuid.bytes, tag, sizeof(tag) - 1);
    d.uuid.bytes[15] = static_cast<char>(i);
  }
  // Starts the asymmetric fence's registration in the background, so that
  // the first stream or capture that earns an owner finds it done.
  (void)heavy_fence_available();
}

std::atomic<Runtime*> g_runtime{nullptr};

Runtime& rt_first_use() {
  static Runtime* r = new Runtime();  // never destroyed; see runtime.h
  g_runtime.store(r, std::memory_order_release);
  return *r;
}

// Set at load (a library constructor), before any entry point can run
// but one that another library's constructor calls: that call is not traced.
const bool g_trace_enabled = log_config().trace;

bool log_enabled() {
  static const bool on = log_config().any;
  return on;
}

void log_line(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (!log_config().any) {
    std::fprintf(stderr, "[cucpu] %s\n", buf);
    return;
  }
  // With CUCPU_LOG: seconds since the library started, and the thread.
  static const auto start = std::chrono::steady_clock::now();
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(log_config().out, "[cucpu %.6f %ld] %s\n", t, static_cast<long>(gettid()), buf);
}

bool in_host_function() { return t_in_host_fn; }
void set_in_host_function(bool on) { t_in_host_fn = on; }

}  // namespace cucpu
