// The device runtime's calls: the table (device_calls.inc) and the entry
// compiled code calls, which serves what needs nothing of the runtime above
// (device-heap memory) and hands the rest to the grid's DeviceRuntime.
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "devrt/abi.h"
#include "devrt/launch.h"

namespace cucpu::devrt {

namespace {
constexpr DeviceCallInfo kCalls[] = {
#define X(name, call, params, result) {#name, DeviceCall::call, params, result},
#include "devrt/device_calls.inc"
#undef X
};
constexpr int32_t kErrorNotSupported = 801;  // cudaErrorNotSupported
constexpr int32_t kErrorMemoryAllocation = 2;  // cudaErrorMemoryAllocation

template <class T>
T arg(const void* const* args, int i) {
  T v;
  std::memcpy(&v, args[i], sizeof v);
  return v;
}
}  // namespace

const DeviceCallInfo* find_device_call(std::string_view name) {
  for (const DeviceCallInfo& c : kCalls)
    if (name == c.name) return &c;
  return nullptr;
}

const DeviceCallInfo& device_call_info(DeviceCall call) { return kCalls[static_cast<size_t>(call)]; }

extern "C" void cucpu_rt_device_call(BlockEnv* env, uint32_t call, const void* const* args, void* result) {
  const auto which = static_cast<DeviceCall>(call);
  const DeviceCallInfo& info = kCalls[call];
  auto answer = [&](int32_t e) {
    if (info.result_bytes == 4) std::memcpy(result, &e, 4);
  };
  if (which == DeviceCall::kMalloc) {
    void* p = std::malloc(arg<uint64_t>(args, 1) ? arg<uint64_t>(args, 1) : 1);
    void** out = arg<void**>(args, 0);
    if (out) *out = p;
    return answer(p ? 0 : kErrorMemoryAllocation);
  }
  if (which == DeviceCall::kFree) {
    std::free(arg<void*>(args, 0));
    return answer(0);
  }
  if (!env->device_runtime) {
    if (info.result_bytes == 8) std::memset(result, 0, 8);
    return answer(kErrorNotSupported);
  }
  const uint32_t tid = env->current_tid;
  const Dim3 thread{tid % env->ntid[0], tid / env->ntid[0] % env->ntid[1], tid / (env->ntid[0] * env->ntid[1])};
  const Dim3 block{env->ctaid[0], env->ctaid[1], env->ctaid[2]};
  env->device_runtime->call(which, block, thread, args, result);
}

}  // namespace cucpu::devrt
