#include "exec/op_pool.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace cucpu {
namespace {

constexpr size_t kBatch = 64;          // blocks moved between a cache and the global list
constexpr size_t kCacheLimit = 2 * kBatch;

struct Block {
  Block* next;
};

// The global list: batches of blocks, each batch a linked chain.
struct Global {
  std::mutex mu;
  std::vector<Block*> batches;  // guarded by mu; each entry heads kBatch blocks
};
Global& global() {
  static Global* g = new Global();  // outlives thread caches flushed at exit
  return *g;
}

struct Cache {
  Block* head = nullptr;
  size_t count = 0;
  ~Cache() {
    // Hand everything back so other threads can reuse it.
    while (count >= kBatch) give_batch();
    if (head) {
      std::lock_guard<std::mutex> g(global().mu);
      global().batches.push_back(head);  // a short chain is fine: it is only walked
      head = nullptr;
      count = 0;
    }
  }
  void give_batch() {
    Block* first = head;
    Block* last = head;
    for (size_t i = 1; i < kBatch; ++i) last = last->next;
    head = last->next;
    last->next = nullptr;
    count -= kBatch;
    std::lock_guard<std::mutex> g(global().mu);
    global().batches.push_back(first);
  }
  bool take_batch() {
    Block* b;
    {
      std::lock_guard<std::mutex> g(global().mu);
      if (global().batches.empty()) return false;
      b = global().batches.back();
      global().batches.pop_back();
    }
    while (b) {
      Block* n = b->next;
      b->next = head;
      head = b;
      ++count;
      b = n;
    }
    return true;
  }
};
thread_local Cache t_cache;

}  // namespace

void* OpPool::allocate(size_t n) {
  if (n > kBlockSize) return ::operator new(n);
  Cache& c = t_cache;
  if (!c.head && !c.take_batch()) {
    void* p = std::aligned_alloc(64, kBlockSize);
    if (!p) throw std::bad_alloc();
    return p;
  }
  Block* b = c.head;
  c.head = b->next;
  --c.count;
  // The next block was most likely freed by a worker on another core: start
  // taking its cache line for writing now, while this op is being built.
  if (c.head) __builtin_prefetch(c.head, 1, 3);
  return b;
}

void OpPool::deallocate(void* p, size_t n) noexcept {
  if (n > kBlockSize) {
    ::operator delete(p);
    return;
  }
  Cache& c = t_cache;
  auto* b = static_cast<Block*>(p);
  b->next = c.head;
  c.head = b;
  if (++c.count > kCacheLimit) c.give_batch();
}

}  // namespace cucpu
