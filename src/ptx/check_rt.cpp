#include "ptx/check_rt.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "ptx/block_runner.h"
#include "ptx/program.h"

namespace cucpu::ptx {

namespace {
std::atomic<AccessHook> g_hook{nullptr};
}  // namespace

bool instrument_accesses() {
  static const bool on = [] {
    const char* v = std::getenv("CUCPU_CHECK");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

void set_access_hook(AccessHook hook) { g_hook.store(hook, std::memory_order_release); }

}  // namespace cucpu::ptx

void cucpu_rt_check_access(cucpu::ptx::BlockEnv* env, void* addr, uint32_t bytes, uint32_t flags, uint32_t line,
                           uint32_t tid) {
  using namespace cucpu::ptx;
  const AccessHook hook = g_hook.load(std::memory_order_acquire);
  const auto a = reinterpret_cast<uint64_t>(addr);
  if (hook && !hook(env, a, bytes, flags, line, tid)) raise_fault(FaultKind::kIllegalAddress, a, std::string());
}
