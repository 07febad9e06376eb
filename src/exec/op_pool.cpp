#include "exec/op_pool.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "base/thread_heap.h"

namespace cucpu {
namespace {

constexpr size_t kBatch = 64;  // blocks moved between a cache and the global list
constexpr size_t kCacheLimit = 2 * kBatch;
// How many allocations ahead a block is prefetched for writing. Blocks come
// back from workers on other cores; their lines must be on the way well
// before the op is built in them (one line transfer takes longer than an
// enqueue on a many-core machine).
constexpr size_t kPrefetchAhead = 8;

struct Batch {
  void* blocks[kBatch];
};

// The global list of full batches.
struct Global {
  std::mutex mu;
  std::vector<Batch*> batches;  // guarded by mu
};
Global& global() {
  static Global* g = new Global();  // outlives thread caches flushed at exit
  return *g;
}

// A thread's cache: a stack of block addresses in thread-local memory, so
// that taking a block reads no line of the block itself (a free list
// threaded through the blocks would load a line a worker just wrote).
struct Cache {
  void* blocks[kCacheLimit];
  size_t count = 0;
  ~Cache() {
    // Hand everything back so other threads can reuse it.
    while (count >= kBatch) give_batch();
    while (count > 0) std::free(blocks[--count]);
  }
  void give_batch() {
    auto* b = new Batch;
    count -= kBatch;
    for (size_t i = 0; i < kBatch; ++i) b->blocks[i] = blocks[count + i];
    std::lock_guard<std::mutex> g(global().mu);
    global().batches.push_back(b);
  }
  bool take_batch() {
    Batch* b;
    {
      std::lock_guard<std::mutex> g(global().mu);
      if (global().batches.empty()) return false;
      b = global().batches.back();
      global().batches.pop_back();
    }
    for (size_t i = 0; i < kBatch; ++i) blocks[count++] = b->blocks[i];
    delete b;
    for (size_t i = 1; i <= kPrefetchAhead && i <= count; ++i)
      for (size_t line = 0; line < OpPool::kBlockSize; line += 64) __builtin_prefetch(static_cast<char*>(blocks[count - i]) + line, 1, 3);
    return true;
  }
};
thread_local ThreadHeap<Cache> t_cache;  // base/thread_heap.h: 1 KiB is too much static TLS

}  // namespace

void* OpPool::allocate(size_t n) {
  if (n > kBlockSize) return ::operator new(n);
  Cache& c = t_cache.get();
  if (c.count == 0 && !c.take_batch()) {
    void* p = std::aligned_alloc(64, kBlockSize);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void* b = c.blocks[--c.count];
  if (c.count >= kPrefetchAhead) {
    // Start taking, for writing, every line of a block a few allocations
    // ahead (an op with its payload spans up to all four).
    char* ahead = static_cast<char*>(c.blocks[c.count - kPrefetchAhead]);
    for (size_t line = 0; line < kBlockSize; line += 64) __builtin_prefetch(ahead + line, 1, 3);
  }
  return b;
}

void OpPool::deallocate(void* p, size_t n) noexcept {
  if (n > kBlockSize) {
    ::operator delete(p);
    return;
  }
  Cache& c = t_cache.get();
  c.blocks[c.count++] = p;
  if (c.count == kCacheLimit) c.give_batch();
}

}  // namespace cucpu
