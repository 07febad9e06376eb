// Weak definitions for every symbol in entry_points.inc. An implemented
// entry point (a strong definition in another file of this library)
// replaces its stub at link time; the rest answer CUDA_ERROR_NOT_SUPPORTED
// and say so once in the log.
//
// This file deliberately does not include cuda.h: the stubs take no
// parameters, which is ABI-safe because they never read their arguments,
// and every driver function returns a 32-bit CUresult.
#include <atomic>
#include <cstdio>

#include "api/proc_table.h"

namespace {
constexpr int kNotSupported = 801;  // CUDA_ERROR_NOT_SUPPORTED

int report_stub(const char* name, std::atomic<bool>& said) {
  if (!said.exchange(true, std::memory_order_relaxed))
    std::fprintf(stderr, "[cucpu] %s is not implemented: returning CUDA_ERROR_NOT_SUPPORTED\n", name);
  return kNotSupported;
}
}  // namespace

#define CU_ENTRY(sym, base, d, l, p, ...)                          \
  extern "C" __attribute__((weak, visibility("default"))) int sym() { \
    static std::atomic<bool> said{false};                       \
    return report_stub(#sym, said);                             \
  }
#include "api/entry_points.inc"
#undef CU_ENTRY

// The address of every entry point, for cuGetProcAddress. Taking the
// address here binds to the strong definition when one exists.
namespace cucpu {
extern const RawProcEntry kProcEntries[] = {
#define CU_ENTRY(sym, base, d, l, p, ...) {#base, reinterpret_cast<void*>(&sym), {d, l, p}},
#include "api/entry_points.inc"
#undef CU_ENTRY
};
extern const unsigned kProcEntryCount = sizeof(kProcEntries) / sizeof(kProcEntries[0]);
}  // namespace cucpu
