#include "devrt/check_rt.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/thread_heap.h"
#include "devrt/block_runner.h"
#include "devrt/launch.h"

namespace cucpu::devrt {

namespace {
std::atomic<AccessHook> g_hook{nullptr};
std::atomic<SharedRaceHook> g_race_hook{nullptr};
std::atomic<DivergentBarrierHook> g_barrier_hook{nullptr};

// The last plain write and the last other access (a read, or an atomic)
// of one 4-byte word of shared memory in the current barrier interval
// (`stamp`: the block and interval they belong to; another stamp means none).
struct Word {
  uint64_t stamp = 0;
  int32_t writer = -1, reader = -1;
  uint32_t write_line = 0, read_line = 0;
  bool reader_wrote = false;  // the other access was an atomic
};
struct SharedShadow {
  std::vector<Word> words;
  uint64_t block = 0;     // blocks run by this thread so far
  uint32_t interval = 0;  // block barriers passed in this block
  uint64_t stamp() const { return (block << 24) ^ interval; }
};
thread_local ThreadHeap<SharedShadow> t_shadow;  // base/thread_heap.h

}  // namespace

bool instrument_accesses() {
  static const bool on = [] {
    const char* v = std::getenv("CUCPU_CHECK");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

void set_access_hook(AccessHook hook) { g_hook.store(hook, std::memory_order_release); }
void set_shared_race_hook(SharedRaceHook hook) { g_race_hook.store(hook, std::memory_order_release); }

void set_divergent_barrier_hook(DivergentBarrierHook hook) { g_barrier_hook.store(hook, std::memory_order_release); }
void report_divergent_barrier(const BlockEnv* env, uint32_t tid_a, uint32_t line_a, uint32_t tid_b, uint32_t line_b) {
  if (DivergentBarrierHook h = g_barrier_hook.load(std::memory_order_acquire)) h(env, {tid_a, line_a, false}, {tid_b, line_b, false});
}

void check_block_begins() {
  SharedShadow& sh = t_shadow.get();
  ++sh.block;
  sh.interval = 0;
}
void check_barrier_passed() { ++t_shadow.get().interval; }

}  // namespace cucpu::devrt

void cucpu_rt_check_shared(cucpu::devrt::BlockEnv* env, void* addr, uint32_t bytes, uint32_t flags, uint32_t line,
                           uint32_t tid) {
  using namespace cucpu::devrt;
  const uint64_t off = reinterpret_cast<uint64_t>(addr) - reinterpret_cast<uint64_t>(env->shared);
  if (off >= env->total_shared_bytes || bytes > env->total_shared_bytes - off) return;  // the runner faults it
  SharedShadow& sh = t_shadow.get();
  const size_t need = (env->total_shared_bytes + 3) / 4;
  if (sh.words.size() < need) sh.words.resize(need);
  const uint64_t stamp = sh.stamp();
  // A race needs a plain write: atomics among themselves, and a plain read
  // of what atomics change (a compare-and-swap loop's first guess), are not.
  const bool write = flags & kAccessWrite, atomic = flags & kAccessAtomic;
  const bool plain_write = write && !atomic;
  const SharedRaceHook report = g_race_hook.load(std::memory_order_acquire);
  const auto warp = [](int32_t t) { return static_cast<uint32_t>(t) / 32; };
  const uint32_t mine = warp(static_cast<int32_t>(tid));
  for (uint64_t w = off / 4; w < (off + bytes + 3) / 4; ++w) {
    Word& word = sh.words[w];
    if (word.stamp != stamp) word = Word{stamp};
    const SharedAccess now{tid, line, write};
    if (word.writer >= 0 && warp(word.writer) != mine && report)
      report(env, static_cast<uint32_t>(w * 4), {static_cast<uint32_t>(word.writer), word.write_line, true}, now);
    else if (plain_write && word.reader >= 0 && warp(word.reader) != mine && report)
      report(env, static_cast<uint32_t>(w * 4), {static_cast<uint32_t>(word.reader), word.read_line, word.reader_wrote}, now);
    if (plain_write) {
      word.writer = static_cast<int32_t>(tid);
      word.write_line = line;
    } else {
      word.reader = static_cast<int32_t>(tid);
      word.read_line = line;
      word.reader_wrote = write;
    }
  }
}

void cucpu_rt_check_access(cucpu::devrt::BlockEnv* env, void* addr, uint32_t bytes, uint32_t flags, uint32_t line,
                           uint32_t tid) {
  using namespace cucpu::devrt;
  const auto a = reinterpret_cast<uint64_t>(addr);
  if (flags & kAccessGeneric) {  // a generic address in the block's shared memory is a shared access
    const auto shared = reinterpret_cast<uint64_t>(env->shared);
    if (a >= shared && a - shared < env->total_shared_bytes) return cucpu_rt_check_shared(env, addr, bytes, flags, line, tid);
  }
  const AccessHook hook = g_hook.load(std::memory_order_acquire);
  if (hook && !hook(env, a, bytes, flags, line, tid)) raise_fault(FaultKind::kIllegalAddress, a, std::string());
}
