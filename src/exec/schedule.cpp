#include "exec/schedule.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "exec/op.h"
#include "exec/scheduler.h"

namespace cucpu::schedule {

std::atomic<bool> g_random{false};
std::atomic<bool> g_serial_host_functions{false};

namespace {

uint64_t g_seed = 0;
uint64_t g_hold_ms = 5;  // CUCPU_SCHEDULE_HOLD_MS: the unit of a hold
std::mutex g_host_mu;

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__attribute__((constructor)) void read_schedule() {
  const char* v = std::getenv("CUCPU_SCHEDULE");
  if (!v || !*v) return;
  if (const char* h = std::getenv("CUCPU_SCHEDULE_HOLD_MS")) {
    const unsigned long long ms = std::strtoull(h, nullptr, 10);
    if (ms >= 1 && ms <= 1000) g_hold_ms = ms;
  }
  std::string s(v);
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = s.find(',', at);
    const std::string part = s.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (part.rfind("random:", 0) == 0) {
      g_seed = std::strtoull(part.c_str() + 7, nullptr, 10);
      g_random.store(true, std::memory_order_relaxed);
      g_op_hooks.store(true, std::memory_order_relaxed);
    } else if (part == "serial-host-functions") {
      g_serial_host_functions.store(true, std::memory_order_relaxed);
    } else if (!part.empty()) {
      std::fprintf(stderr, "[cucpu] CUCPU_SCHEDULE: unknown '%s' (random:SEED, serial-host-functions)\n", part.c_str());
    }
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
}

}  // namespace

void before_execute(const Op* op, uint64_t timeline_id) {
  const uint64_t h = mix(mix(mix(g_seed) ^ timeline_id) ^ op->seq);
  if (h >> 63) return;
  // 1, 2 or 3 units (5 ms each unless CUCPU_SCHEDULE_HOLD_MS says): two
  // held-back ops are either held alike or a unit apart, so a seed's
  // outcome does not hang on a few microseconds.
  const auto hold = std::chrono::milliseconds(g_hold_ms * (1 + (h >> 8) % 3));
  const auto until = std::chrono::steady_clock::now() + hold;
  while (std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

void lock_host_functions() { g_host_mu.lock(); }
void unlock_host_functions() { g_host_mu.unlock(); }

}  // namespace cucpu::schedule
