#include "core/runtime.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/array.h"
#include "core/mem_pool.h"
#include "core/context.h"
#include "core/event.h"
#include "core/graph.h"
#include "core/stream.h"
#include "exec/graph_exec.h"

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

bool read_trace_flag() {
  const char* s = std::getenv("CUCPU_LOG");
  return s && std::strstr(s, "api") != nullptr;
}

// Flips the library to "torn down" when static destructors run, so calls
// made from other libraries' destructors get CUDA_ERROR_DEINITIALIZED.
struct TeardownSentinel {
  ~TeardownSentinel() { rt().state.store(static_cast<int>(LibState::kTornDown), std::memory_order_release); }
} g_sentinel;

thread_local bool t_in_host_fn = false;
}  // namespace

Runtime::Runtime()
    : contexts(1 << 16), streams(1 << 20), events(1 << 20), arrays(1 << 18), graphs(1 << 18), nodes(1 << 22),
      execs(1 << 18), mempools(1 << 16) {
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
}

Runtime& rt() {
  static Runtime* r = new Runtime();  // never destroyed; see runtime.h
  return *r;
}

bool trace_enabled() {
  static const bool on = read_trace_flag();
  return on;
}

bool log_enabled() {
  static const bool on = [] {
    const char* s = std::getenv("CUCPU_LOG");
    return s && *s;
  }();
  return on;
}

void log_line(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[cucpu] %s\n", buf);
}

bool in_host_function() { return t_in_host_fn; }
void set_in_host_function(bool on) { t_in_host_fn = on; }

}  // namespace cucpu
