// FaultAheadMapping: anonymous memory that one writer fills front to back,
// whose pages a background thread faults in ahead of the writer.
//
// A fresh page costs its first write a fault (about 1.6 us a 4 KiB page on
// the machines measured, in a VM: 16 ns for each 40 bytes written). A writer
// on a hot path (the trace's per-thread rings) reports how far it has come
// with reached(); the pager thread keeps the next kLead bytes faulted in,
// with madvise(MADV_POPULATE_WRITE), which leaves present pages as they are
// and races with nothing the writer does (the kernel serializes faults on a
// page). Where the kernel lacks it (before Linux 5.14) the writer takes its
// own faults, as with plain memory.
//
// Thread safety: reached() is for the one writer; the destructor may run on
// any thread once the writer is done, and waits for the pager to leave the
// mapping. The pager thread is started on the first mapping and lives until
// the process exits.
#pragma once

#include <atomic>
#include <cstddef>

namespace cucpu {

class FaultAheadMapping {
 public:
  // How far ahead of the writer pages are faulted in.
  static constexpr size_t kLead = size_t{4} << 20;

  // Maps `bytes` (rounded up to pages) of zeroed memory and asks for the
  // first kLead to be faulted in. data() is null if the mapping failed.
  explicit FaultAheadMapping(size_t bytes);
  ~FaultAheadMapping();
  FaultAheadMapping(const FaultAheadMapping&) = delete;
  FaultAheadMapping& operator=(const FaultAheadMapping&) = delete;

  void* data() const { return base_; }
  size_t size() const { return bytes_; }

  // The writer has written everything below `offset`: keep what lies in the
  // next kLead faulted in. Cheap while the pager is ahead (one relaxed load);
  // else it wakes the pager. The writer wraps to offset 0 only after it has
  // covered the whole mapping, which is then all faulted in.
  void reached(size_t offset) {
    const size_t asked = asked_.load(std::memory_order_relaxed);
    if (asked >= bytes_ || offset + kLead / 2 <= asked) return;
    ask(offset + kLead);
  }

 private:
  friend struct FaultAheadPager;
  void ask(size_t end);

  void* base_ = nullptr;
  size_t bytes_ = 0;
  // The end of what the writer has asked for (capped at bytes_). Written
  // under the pager's lock (by the writer, or by the pager when it finds the
  // kernel unable), read by the writer without it.
  std::atomic<size_t> asked_{0};
  size_t faulted_ = 0;  // the end of what the pager has faulted in; the pager's (under its lock)
};

}  // namespace cucpu
