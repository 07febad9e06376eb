// The kernel-side checks of `cucpu check` (core/check_internal.h): every
// access an instrumented kernel makes comes here (devrt/check_rt.h) on the
// thread that runs it, without a lock. Memcheck looks the address up among
// live allocations; initcheck asks whether its bytes were written; the
// ranges touched are kept per thread and handed to the race checker when
// the thread's run of blocks ends (KernelRun).
#include <sys/mman.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "base/thread_heap.h"
#include "core/check.h"
#include "core/check_internal.h"
#include "exec/scheduler.h"
#include "devrt/check_rt.h"
#include "symbols/names.h"

namespace cucpu::check {
namespace detail {

KernelCounts& kernel_counts() {
  static KernelCounts* k = new KernelCounts();  // never destroyed: workers may report during exit
  return *k;
}

namespace {

// Initcheck's bits: one per byte of an allocation of device memory, set
// once the byte is written. The words are accessed atomically (kernels
// mark and test them from many threads, std::atomic_ref); the pages are
// mapped lazily, so an allocation's shadow costs what its written part
// covers.
class WrittenBits {
 public:
  WrittenBits(uintptr_t base, size_t size) : base_(base), size_(size), words_((size + 63) / 64) {
    void* p = mmap(nullptr, bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    bits_ = p == MAP_FAILED ? nullptr : static_cast<uint64_t*>(p);
  }
  ~WrittenBits() {
    if (bits_) munmap(bits_, bytes());
  }
  WrittenBits(const WrittenBits&) = delete;
  WrittenBits& operator=(const WrittenBits&) = delete;
  uintptr_t base() const { return base_; }
  size_t size() const { return size_; }

  // Marks [lo, hi) (clipped to the allocation) written.
  void mark(uintptr_t lo, uintptr_t hi) {
    for_words(lo, hi, [](std::atomic_ref<uint64_t> w, uint64_t mask) {
      if (mask == ~uint64_t{0}) w.store(mask, std::memory_order_relaxed);  // idempotent with a racing fetch_or
      else if ((w.load(std::memory_order_relaxed) & mask) != mask) w.fetch_or(mask, std::memory_order_relaxed);
      return true;
    });
  }
  // The first byte of [lo, hi) never written, or 0 when all were.
  uintptr_t first_unwritten(uintptr_t lo, uintptr_t hi) const {
    uintptr_t found = 0;
    const_cast<WrittenBits*>(this)->for_words(lo, hi, [&](std::atomic_ref<uint64_t> w, uint64_t mask, uintptr_t word) {
      const uint64_t missing = mask & ~w.load(std::memory_order_relaxed);
      if (!missing) return true;
      found = base_ + word * 64 + static_cast<uintptr_t>(__builtin_ctzll(missing));
      return false;
    });
    return found;
  }

 private:
  size_t bytes() const { return std::max<size_t>(words_, 1) * sizeof(uint64_t); }
  template <class F>
  void for_words(uintptr_t lo, uintptr_t hi, F&& f) {
    if (!bits_) return;
    lo = std::max(lo, base_);
    hi = std::min(hi, base_ + size_);
    for (uintptr_t at = lo; at < hi;) {
      const uintptr_t off = at - base_, word = off / 64, bit = off % 64;
      const uintptr_t n = std::min<uintptr_t>(64 - bit, hi - at);
      const uint64_t mask = (n == 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1)) << bit;
      bool go;
      if constexpr (std::is_invocable_v<F, std::atomic_ref<uint64_t>, uint64_t, uintptr_t>)
        go = f(std::atomic_ref<uint64_t>(bits_[word]), mask, word);
      else
        go = f(std::atomic_ref<uint64_t>(bits_[word]), mask);
      if (!go) return;
      at += n;
    }
  }
  uintptr_t base_;
  size_t size_, words_;
  uint64_t* bits_;
};

struct InitTracking {
  std::atomic<bool> on{false};
  std::shared_mutex mu;  // guards by_base; the bits themselves are atomic
  std::unordered_map<uintptr_t, std::shared_ptr<WrittenBits>> by_base;
  // The bits of the allocation based at `base` (null: not tracked).
  std::shared_ptr<WrittenBits> of(uintptr_t base) {
    std::shared_lock<std::shared_mutex> g(mu);
    auto it = by_base.find(base);
    return it == by_base.end() ? nullptr : it->second;
  }
  std::shared_ptr<WrittenBits> at(uintptr_t p) {
    std::optional<Allocation> a = Registry::instance().find(p);
    return a ? of(a->base) : nullptr;
  }
};
InitTracking& init_tracking() {
  static InitTracking* t = new InitTracking();  // never destroyed: workers may check during exit
  return *t;
}

// A thread's run of kernel blocks (KernelRun): the kernel's name, what its
// accesses touched, and the allocation the last one fell in.
struct KernelTouch {
  std::string kernel;      // as reports name it (demangled)
  std::string kernel_raw;  // as the module names it
  const Op* key = nullptr;
  bool last = false;
  std::vector<MemAccess> ranges;
  uint32_t part = 0;
  uintptr_t alloc_lo = 0, alloc_hi = 0;
  std::shared_ptr<WrittenBits> written;  // initcheck's bits of [alloc_lo, alloc_hi), when tracked
};
thread_local ThreadHeap<KernelTouch> t_touch_heap;  // base/thread_heap.h
KernelTouch& touch() { return t_touch_heap.get(); }

constexpr size_t kMaxRanges = 4096;  // beyond this, ranges merge per allocation (may over-report)

void note_range(uintptr_t lo, uintptr_t hi, bool write, bool atomic) {
  std::vector<MemAccess>& v = touch().ranges;
  for (size_t k = v.size(), n = 0; k > 0 && n < 8; --k, ++n) {
    MemAccess& m = v[k - 1];
    if (m.write == write && m.atomic == atomic && lo <= m.hi && hi >= m.lo) {
      m.lo = std::min(m.lo, lo);
      m.hi = std::max(m.hi, hi);
      return;
    }
  }
  v.push_back({lo, hi, write, atomic});
  if (v.size() <= kMaxRanges) return;
  std::sort(v.begin(), v.end(), [](const MemAccess& a, const MemAccess& b) {
    return std::tie(a.write, a.atomic, a.lo) < std::tie(b.write, b.atomic, b.lo);
  });
  std::vector<MemAccess> merged;
  for (const MemAccess& m : v) {
    std::optional<Allocation> a;
    if (!merged.empty() && merged.back().write == m.write && merged.back().atomic == m.atomic &&
        bucket_of(merged.back().lo, &a) == bucket_of(m.lo, &a))
      merged.back().hi = std::max(merged.back().hi, m.hi);
    else
      merged.push_back(m);
  }
  v = std::move(merged);
}

// A thread's index in its block, from its linear one.
struct Thread3 {
  uint32_t x, y, z;
};
Thread3 thread_of(const devrt::BlockEnv* env, uint32_t tid) {
  return {tid % env->ntid[0], tid / env->ntid[0] % env->ntid[1], tid / (env->ntid[0] * env->ntid[1])};
}

void report_invalid(const devrt::BlockEnv* env, uint64_t addr, uint32_t bytes, uint32_t flags, uint32_t line, uint32_t tid,
                    const std::optional<Allocation>& within) {
  const uint64_t n = kernel_counts().invalid.fetch_add(1) + 1;
  if (n > kPrintedReports) return;
  const Thread3 t = thread_of(env, tid);
  const char* what = flags & devrt::kAccessAtomic ? "atomic" : flags & devrt::kAccessWrite ? "write" : "read";
  std::fprintf(stderr,
               "cucpu check: invalid global %s of %u bytes at 0x%" PRIx64 " in kernel %s, block (%u,%u,%u), thread (%u,%u,%u), PTX line %u\n",
               what, bytes, addr, touch().kernel.c_str(), env->ctaid[0], env->ctaid[1], env->ctaid[2], t.x, t.y, t.z, line);
  const std::optional<Allocation> near = within ? within : Registry::instance().nearest(addr);
  if (near && addr + bytes > near->base + near->size && addr >= near->base)
    std::fprintf(stderr, "  the access runs %" PRIu64 " bytes past the end of %s at 0x%" PRIxPTR " (%zu bytes)\n",
                 addr + bytes - (near->base + near->size), memory_kind_name(near->kind), near->base, near->size);
  else if (near && addr < near->base)
    std::fprintf(stderr, "  the access lies %" PRIu64 " bytes before %s at 0x%" PRIxPTR " (%zu bytes)\n",
                 near->base - addr, memory_kind_name(near->kind), near->base, near->size);
  else
    std::fprintf(stderr, "  the address lies in no live allocation (never allocated, or freed)\n");
}

// An access not aligned to its size: reported here with its thread and
// line; the compiled code's own check then faults the kernel with
// CUDA_ERROR_MISALIGNED_ADDRESS, as without the checker.
void report_misaligned(const devrt::BlockEnv* env, uint64_t addr, uint32_t bytes, uint32_t flags, uint32_t line,
                       uint32_t tid) {
  const uint64_t n = kernel_counts().invalid.fetch_add(1) + 1;
  if (n > kPrintedReports) return;
  const Thread3 t = thread_of(env, tid);
  const char* what = flags & devrt::kAccessAtomic ? "atomic" : flags & devrt::kAccessWrite ? "write" : "read";
  std::fprintf(stderr,
               "cucpu check: misaligned global %s of %u bytes at 0x%" PRIx64 " in kernel %s, block (%u,%u,%u), thread "
               "(%u,%u,%u), PTX line %u\n",
               what, bytes, addr, touch().kernel.c_str(), env->ctaid[0], env->ctaid[1], env->ctaid[2], t.x, t.y, t.z, line);
}

// Racecheck, synccheck and initcheck report a kernel's pair of PTX lines once: true
// (and counted in `count`) the first time, while reports are still printed.
bool first_of_kernel_lines(std::atomic<uint64_t>& count, uint32_t line_a, uint32_t line_b) {
  static std::mutex mu;
  static std::set<std::tuple<const void*, std::string, uint32_t, uint32_t>> seen;  // by the kind's counter
  {
    std::lock_guard<std::mutex> g(mu);
    if (!seen.insert({&count, touch().kernel, std::min(line_a, line_b), std::max(line_a, line_b)}).second) return false;
  }
  return count.fetch_add(1) + 1 <= kPrintedReports;
}


// Initcheck: a kernel read bytes of device memory nothing has written.
void report_uninitialized(const devrt::BlockEnv* env, uint64_t addr, uint32_t bytes, uint32_t line, uint32_t tid,
                          const WrittenBits& bits, uintptr_t first) {
  if (!first_of_kernel_lines(kernel_counts().uninitialized, line, line)) return;
  const Thread3 t = thread_of(env, tid);
  std::fprintf(stderr,
               "cucpu check: uninitialized global read of %u bytes at 0x%" PRIx64 " in kernel %s, block (%u,%u,%u), thread "
               "(%u,%u,%u), PTX line %u\n"
               "  byte 0x%" PRIxPTR " (device memory at 0x%" PRIxPTR " + %zu, %zu bytes) was never written by a copy, a set "
               "or a kernel since it was allocated\n",
               bytes, addr, touch().kernel.c_str(), env->ctaid[0], env->ctaid[1], env->ctaid[2], t.x, t.y, t.z, line, first,
               bits.base(), static_cast<size_t>(first - bits.base()), bits.size());
}

// The compiled code's check of each global or generic access (devrt/check_rt.h).
bool kernel_access(const devrt::BlockEnv* env, uint64_t addr, uint32_t bytes, uint32_t flags, uint32_t line, uint32_t tid) {
  const uintptr_t lo = addr, hi = addr + bytes;
  if (lo < touch().alloc_lo || hi > touch().alloc_hi) {
    if (flags & devrt::kAccessGeneric) {
      const auto shared = reinterpret_cast<uintptr_t>(env->shared);
      if (lo >= shared && hi <= shared + env->total_shared_bytes) return true;  // the block's shared memory
    }
    std::optional<Allocation> a = Registry::instance().find(lo);
    if (!a) {
      // A generic address outside every allocation is the thread's local
      // memory (or another space the checker does not see): not checked.
      if (flags & devrt::kAccessGeneric) return true;
      report_invalid(env, addr, bytes, flags, line, tid, a);
      return false;
    }
    if (hi > a->base + a->size) {
      report_invalid(env, addr, bytes, flags, line, tid, a);
      return false;
    }
    touch().alloc_lo = a->base;
    touch().alloc_hi = a->base + a->size;
    if (init_tracking().on.load(std::memory_order_relaxed)) touch().written = init_tracking().of(a->base);
  }
  const uint32_t align = bytes < 16 ? bytes : 16;
  if (align && (addr & (align - 1)) != 0) report_misaligned(env, addr, bytes, flags, line, tid);  // the kernel then faults
  if (WrittenBits* bits = touch().written.get()) {
    // Atomics count as writes: a read-modify-write of fresh memory is
    // how some programs initialize it.
    if (flags & (devrt::kAccessWrite | devrt::kAccessAtomic)) bits->mark(lo, hi);
    else if (const uintptr_t first = bits->first_unwritten(lo, hi)) report_uninitialized(env, addr, bytes, line, tid, *bits, first);
  }
  note_range(lo, hi, (flags & devrt::kAccessWrite) != 0, (flags & devrt::kAccessAtomic) != 0);
  return true;
}

// Racecheck (devrt/check_rt.h): one report per kernel and pair of PTX lines.
void shared_race(const devrt::BlockEnv* env, uint32_t offset, const devrt::SharedAccess& a, const devrt::SharedAccess& b) {
  if (!first_of_kernel_lines(kernel_counts().shared_races, a.line, b.line)) return;
  const Thread3 ta = thread_of(env, a.tid), tb = thread_of(env, b.tid);
  std::fprintf(stderr,
               "cucpu check: shared-memory race in kernel %s, block (%u,%u,%u), at shared offset %u: thread (%u,%u,%u) %s "
               "it at PTX line %u, then thread (%u,%u,%u) of another warp %s it at PTX line %u, with no barrier between\n",
               touch().kernel.c_str(), env->ctaid[0], env->ctaid[1], env->ctaid[2], offset, ta.x, ta.y, ta.z,
               a.write ? "writes" : "reads", a.line, tb.x, tb.y, tb.z, b.write ? "writes" : "reads", b.line);
}

// Synccheck (devrt/check_rt.h): one report per kernel and pair of lines.
void divergent_barrier(const devrt::BlockEnv* env, const devrt::SharedAccess& a, const devrt::SharedAccess& b) {
  if (!first_of_kernel_lines(kernel_counts().barriers, a.line, b.line)) return;
  const Thread3 ta = thread_of(env, a.tid), tb = thread_of(env, b.tid);
  std::fprintf(stderr,
               "cucpu check: divergent barrier in kernel %s, block (%u,%u,%u): thread (%u,%u,%u) waits at the barrier of PTX "
               "line %u, thread (%u,%u,%u) at PTX line %u (bar.sync, __syncthreads(), must be reached by every thread at "
               "one instruction)\n",
               touch().kernel.c_str(), env->ctaid[0], env->ctaid[1], env->ctaid[2], ta.x, ta.y, ta.z, a.line, tb.x, tb.y,
               tb.z, b.line);
}

}  // namespace

// What an op wrote counts as written once it has run (exec/scheduler.h's
// hook, set for initcheck).
void op_wrote(const Op* op) {
  if (op->marks_writes_as_run()) return;
  std::vector<MemAccess> ranges;
  op->accesses(ranges);
  for (const MemAccess& m : ranges)
    if (m.write && !m.frees) mark_written(m.lo, m.hi);
}

void install_kernel_hooks(bool initcheck) {
  init_tracking().on.store(initcheck, std::memory_order_relaxed);
  if (initcheck) {
    g_op_ran_hook.store(&op_wrote, std::memory_order_relaxed);
    g_op_hooks.store(true, std::memory_order_relaxed);
  }
  devrt::set_access_hook(&kernel_access);
  devrt::set_shared_race_hook(&shared_race);
  devrt::set_divergent_barrier_hook(&divergent_barrier);
}

void init_tracking_starts(const Allocation& a) {
  InitTracking& t = init_tracking();
  if (!t.on.load(std::memory_order_relaxed) || a.kind != MemKind::kDevice) return;
  auto bits = std::make_shared<WrittenBits>(a.base, a.size);
  std::unique_lock<std::shared_mutex> g(t.mu);
  t.by_base[a.base] = std::move(bits);
}

void init_tracking_ends(uintptr_t base) {
  InitTracking& t = init_tracking();
  if (!t.on.load(std::memory_order_relaxed)) return;
  std::unique_lock<std::shared_mutex> g(t.mu);
  t.by_base.erase(base);  // a kernel still holding the bits keeps them alive
}

void mark_written(uintptr_t lo, uintptr_t hi) {
  if (hi <= lo || !init_tracking().on.load(std::memory_order_relaxed)) return;
  if (std::shared_ptr<WrittenBits> bits = init_tracking().at(lo)) bits->mark(lo, hi);
}

}  // namespace detail

using detail::touch;

void node_wrote(const std::vector<MemAccess>& ranges) {
  for (const MemAccess& m : ranges)
    if (m.write) detail::mark_written(m.lo, m.hi);
}

void KernelRun::begin(const Op* key, const std::string& kernel, bool last, uint32_t part) {
  if (kernel != touch().kernel_raw) {  // demangled once for a run of one kernel's parts
    touch().kernel_raw = kernel;
    touch().kernel = symbols::readable_name(kernel);
  }
  touch().key = key;
  touch().last = last;
  touch().part = part;
  touch().ranges.clear();
  touch().alloc_lo = touch().alloc_hi = 0;  // memory may have been freed since the last kernel
  touch().written.reset();
}

void KernelRun::end() {
  ran(touch().key, touch().ranges, touch().last, touch().part);
  touch().ranges.clear();
  touch().alloc_lo = touch().alloc_hi = 0;
  touch().written.reset();
}

}  // namespace cucpu::check
