// Mapping the runtime's own machine code at cuInit (see code_prefault.h).
#include "api/code_prefault.h"

#include <link.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

#include "api/proc_table.h"
#include "copy/copy3d.h"
#include "exec/scheduler.h"
#include "devrt/block_runner.h"

namespace cucpu::api {
namespace {

constexpr uintptr_t kPage = 4096;
constexpr uintptr_t kMaxBytes = uintptr_t{16} << 20;  // never the whole of a statically linked LLVM

struct Segment {
  uintptr_t probe;  // an address inside the library
  uintptr_t lo = 0, hi = 0;
};

// The executable load segment that holds `probe`.
int find_segment(dl_phdr_info* info, size_t, void* arg) {
  auto* seg = static_cast<Segment*>(arg);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    if (seg->probe >= lo && seg->probe < hi) {
      seg->lo = lo;
      seg->hi = hi;
      return 1;
    }
  }
  return 0;
}

}  // namespace

void prefault_own_code() {
  // The runtime's objects come first in the library's text, the kernel
  // compiler's after them, and LLVM's (when linked in) last: the highest
  // of these addresses bounds what API calls and the engine run.
  uintptr_t top = 0;
  for (unsigned i = 0; i < kProcEntryCount; ++i) top = std::max(top, reinterpret_cast<uintptr_t>(kProcEntries[i].fn));
  for (uintptr_t a : {reinterpret_cast<uintptr_t>(&run_copy), reinterpret_cast<uintptr_t>(&run_memset),
                      reinterpret_cast<uintptr_t>(&Scheduler::instance), reinterpret_cast<uintptr_t>(&devrt::run_blocks)})
    top = std::max(top, a);
  Segment seg{reinterpret_cast<uintptr_t>(&prefault_own_code)};
  if (!dl_iterate_phdr(find_segment, &seg)) return;
  const uintptr_t lo = seg.lo & ~(kPage - 1);
  const uintptr_t hi = std::min({(top + 64 * 1024 + kPage - 1) & ~(kPage - 1), seg.hi, lo + kMaxBytes});
  if (hi <= lo) return;
#ifdef MADV_POPULATE_READ
  if (madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_READ) == 0) return;
#endif
  // Kernels before 5.14: a read per 64 KiB, the window the kernel maps around a fault.
  for (uintptr_t a = lo; a < hi; a += 64 * 1024) (void)*reinterpret_cast<const volatile unsigned char*>(a);
}

}  // namespace cucpu::api
