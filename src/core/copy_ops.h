// Copies as stream work: small work becomes one op; larger work is cut
// (copy/copy_plan.h) into one part per worker, enqueued as a stream group:
// the parts run in parallel after the stream's earlier work, and a join op
// completes the group. Each op re-checks the memory its copies name when
// it runs, and faults the context when that memory is gone.
#pragma once

#include <memory>
#include <vector>

#include "copy/copy_plan.h"
#include "core/allocation.h"  // MemCheck
#include "exec/op.h"

namespace cucpu {

class Stream;

struct CopyTask {
  Copy3D copy;
  MemCheck checks[2];  // src, dst: re-checked when the copy runs
  // Owns a snapshot of the source when it had to be read during the API
  // call (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL); copy.src points into it.
  std::shared_ptr<unsigned char[]> staging;
};

// The tasks' copies, as the planner sees them.
inline CopyList copy_list(const std::vector<CopyTask>& tasks) {
  return {tasks.empty() ? nullptr : reinterpret_cast<const unsigned char*>(&tasks[0].copy), sizeof(CopyTask),
          tasks.size()};
}

// Reads the task's source now into a packed staging buffer and points the
// task at it, so the caller's source may die when the API call returns.
// CUDA_ERROR_OUT_OF_MEMORY when the packed size does not fit size_t.
CUresult stage_source(CopyTask& t);

// Enqueues the tasks on `s` (which may run them in any order relative to
// each other, in stream order as a whole; with `in_order`, one after
// another in list order). Returns the op that completes them, with a reference.
OpRef enqueue_copies(Stream* s, std::vector<CopyTask> tasks, bool in_order = false);
// One copy, without the list's allocations: an op of its own when it is
// small (below the size split across workers), else enqueue_copies. With
// `want_done`, returns the op that completes it, with a reference (the sync
// forms wait for it); else an empty OpRef (taking a reference would cost
// the enqueue a transfer of the op's cache line to and from the worker).
OpRef enqueue_copy(Stream* s, CopyTask task, bool want_done);
// An asynchronous device-to-device copy of n contiguous bytes whose ranges
// were checked (`checks`: src, dst): the smallest op (no walk, no
// reference), or enqueue_copy when it is large enough to split.
void enqueue_linear_copy(Stream* s, unsigned char* dst, const unsigned char* src, size_t n, const MemCheck checks[2]);

}  // namespace cucpu
