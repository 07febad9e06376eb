// OpPool: fixed-size blocks for ops. Ops are allocated on API threads and
// freed on workers; with plain malloc that pattern keeps handing fresh
// pages to the allocating thread (page clearing showed as the largest cost
// of an enqueue). Each thread keeps a small cache of free blocks; caches
// trade batches through one global list.
//
// Contract: any thread may allocate or free any block. Blocks go back to
// the system only from a thread that exits holding less than a batch.
#pragma once

#include <cstddef>

namespace cucpu {

class OpPool {
 public:
  static constexpr size_t kBlockSize = 256;
  static void* allocate(size_t n);
  static void deallocate(void* p, size_t n) noexcept;
};

}  // namespace cucpu
