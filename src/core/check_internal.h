// What the two halves of the checker share: check.cpp orders the
// program's operations (the stream-order race checker); check_kernel.cpp
// checks each access a kernel makes (memcheck, initcheck, racecheck,
// synccheck) and collects the ranges kernels touched for check.cpp.
// Internal to core/check*.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "core/allocation.h"

namespace cucpu::check::detail {

constexpr uint64_t kPrintedReports = 50;  // of each kind; the rest are counted

// The shadow bucket of an address: its allocation's base, or the MiB of
// host memory it lies in (with the top bit set).
inline uintptr_t bucket_of(uintptr_t p, std::optional<Allocation>* alloc) {
  *alloc = Registry::instance().find(p);
  if (*alloc) return (*alloc)->base;
  return (p >> 20) | (uintptr_t{1} << 63);
}

// Reports made by the kernel-side checks, by kind.
struct KernelCounts {
  std::atomic<uint64_t> invalid{0}, shared_races{0}, barriers{0}, uninitialized{0};
};
KernelCounts& kernel_counts();

// Installs the kernel-side hooks (devrt/check_rt.h); `initcheck`: also
// report reads of device memory that nothing has written.
void install_kernel_hooks(bool initcheck);

// Initcheck's record of which bytes of device memory have been written.
// A new allocation of device memory starts unwritten; copies, sets and
// kernels mark what they write. Thread-safe; no-ops unless initcheck is on.
void init_tracking_starts(const Allocation& a);
void init_tracking_ends(uintptr_t base);
void mark_written(uintptr_t lo, uintptr_t hi);

}  // namespace cucpu::check::detail
