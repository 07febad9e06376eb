#include "core/allocation.h"

#include <iterator>
#include <mutex>
#include <vector>

#include "base/thread_heap.h"

namespace cucpu {

namespace {
// Whether an allocation's bytes count as the device's (cuMemGetInfo, the
// allocator's out-of-memory check): a mapping's count where its physical
// allocation was made.
bool counts_as_device(const Allocation& a) {
  return (a.kind == MemKind::kDevice || a.kind == MemKind::kManaged) && !a.vmm && !a.ipc_import;
}
}  // namespace

const char* memory_kind_name(MemKind k) {
  switch (k) {
    case MemKind::kDevice: return "device memory";
    case MemKind::kHost: return "pinned host memory";
    case MemKind::kRegistered: return "registered host memory";
    case MemKind::kManaged: return "managed memory";
  }
  return "memory";
}

uint64_t Registry::add(Allocation a) {
  std::unique_lock lock(mu_);
  a.id = next_id_++;
  if (counts_as_device(a)) device_bytes_ += a.size;
  by_base_[a.base] = a;
  return a.id;
}

uint64_t Registry::add_unless_overlapping(Allocation a) {
  std::unique_lock lock(mu_);
  auto next = by_base_.lower_bound(a.base);  // the first allocation based at or after a.base
  if (next != by_base_.end() && next->first - a.base < a.size) return 0;
  if (next != by_base_.begin()) {
    const Allocation& prev = std::prev(next)->second;
    if (a.base - prev.base < (prev.size ? prev.size : 1)) return 0;
  }
  a.id = next_id_++;
  if (counts_as_device(a)) device_bytes_ += a.size;
  by_base_[a.base] = a;
  return a.id;
}

std::optional<Allocation> Registry::remove(uintptr_t base) {
  std::unique_lock lock(mu_);
  auto it = by_base_.find(base);
  if (it == by_base_.end()) return std::nullopt;
  Allocation a = it->second;
  if (counts_as_device(a)) device_bytes_ -= a.size;
  by_base_.erase(it);
  removals_.fetch_add(1, std::memory_order_release);
  return a;
}

bool Registry::remove_id(uintptr_t base, uint64_t id) {
  std::unique_lock lock(mu_);
  auto it = by_base_.find(base);
  if (it == by_base_.end() || it->second.id != id) return false;
  const Allocation& a = it->second;
  if (counts_as_device(a)) device_bytes_ -= a.size;
  by_base_.erase(it);
  removals_.fetch_add(1, std::memory_order_release);
  return true;
}

std::optional<Allocation> Registry::nearest(uintptr_t p) const {
  std::shared_lock lock(mu_);
  auto above = by_base_.upper_bound(p);
  if (above == by_base_.begin()) return above == by_base_.end() ? std::nullopt : std::optional(above->second);
  auto below = std::prev(above);
  const Allocation& b = below->second;
  if (p - b.base < (b.size ? b.size : 1) || above == by_base_.end()) return b;
  // Between two allocations: the one whose edge is closer.
  return p - (b.base + b.size) <= above->first - p ? b : above->second;
}

std::optional<Allocation> Registry::begin_async_free(uintptr_t base) {
  std::unique_lock lock(mu_);
  auto it = by_base_.find(base);
  if (it == by_base_.end() || !it->second.pool || it->second.free_pending) return std::nullopt;
  it->second.free_pending = true;
  return it->second;
}

std::optional<Allocation> Registry::find(uintptr_t p) const {
  std::shared_lock lock(mu_);
  auto it = by_base_.upper_bound(p);
  if (it == by_base_.begin()) return std::nullopt;
  --it;
  const Allocation& a = it->second;
  if (p - a.base < (a.size ? a.size : 1)) return a;
  return std::nullopt;
}

namespace {
struct SpanCache {
  uint64_t epoch = UINT64_MAX;
  Registry::Span spans[4];
  unsigned next = 0;
};
thread_local ThreadHeap<SpanCache> t_span_cache;  // base/thread_heap.h
}  // namespace

void Registry::find_spans(const uintptr_t* ps, int count, std::optional<Span>* out, uint64_t* epoch_out) const {
  SpanCache& cache = t_span_cache.get();
  const uint64_t epoch = removals();
  *epoch_out = epoch;
  if (cache.epoch != epoch) {
    cache = SpanCache{};
    cache.epoch = epoch;
  }
  for (int k = 0; k < count; ++k) {
    const uintptr_t p = ps[k];
    out[k].reset();
    for (const Span& s : cache.spans)
      if (s.id != 0 && p - s.base < (s.size ? s.size : 1)) {
        out[k] = s;
        break;
      }
    if (out[k]) continue;
    std::optional<Allocation> a = find(p);
    if (!a) continue;
    out[k] = Span{a->base, a->size, a->id, a->kind, a->access, a->vmm};
    // Kept only if nothing was removed during the lookup.
    if (removals() == epoch) cache.spans[cache.next++ % 4] = *out[k];
  }
}

std::optional<Registry::Span> Registry::find_span(uintptr_t p) const {
  std::optional<Span> s;
  uint64_t epoch;
  find_spans(&p, 1, &s, &epoch);
  return s;
}

bool Registry::still_valid(uint64_t id, uintptr_t p, size_t n) const {
  std::shared_lock lock(mu_);
  auto it = by_base_.upper_bound(p);
  if (it == by_base_.begin()) return false;
  --it;
  return it->second.id == id && it->second.contains(p, n);
}

bool Registry::set_attachment(uintptr_t base, unsigned flags, uint64_t stream_id) {
  std::unique_lock lock(mu_);
  auto it = by_base_.find(base);
  if (it == by_base_.end()) return false;
  it->second.attach_flags = flags;
  it->second.attach_stream_id = stream_id;
  return true;
}

bool Registry::set_sync_memops(uintptr_t base, bool on) {
  std::unique_lock lock(mu_);
  auto it = by_base_.find(base);
  if (it == by_base_.end()) return false;
  it->second.sync_memops = on;
  return true;
}

size_t Registry::detach_stream(uint64_t stream_id) {
  std::unique_lock lock(mu_);
  size_t n = 0;
  for (auto& [base, a] : by_base_)
    if (a.attach_stream_id == stream_id) {
      a.attach_stream_id = 0;
      a.attach_flags = CU_MEM_ATTACH_GLOBAL;
      ++n;
    }
  return n;
}

bool Registry::set_access(uintptr_t base, uint8_t access) {
  std::unique_lock lock(mu_);
  auto it = by_base_.find(base);
  if (it == by_base_.end()) return false;
  it->second.access = access;
  removals_.fetch_add(1, std::memory_order_release);
  return true;
}

void Registry::add_device_bytes(size_t n) {
  std::unique_lock lock(mu_);
  device_bytes_ += n;
}

void Registry::remove_device_bytes(size_t n) {
  std::unique_lock lock(mu_);
  device_bytes_ -= n;
}

size_t Registry::device_bytes() const {
  std::shared_lock lock(mu_);
  return device_bytes_;
}

std::vector<Allocation> Registry::remove_context(Context* ctx) {
  std::unique_lock lock(mu_);
  std::vector<Allocation> out;
  for (auto it = by_base_.begin(); it != by_base_.end();) {
    if (it->second.ctx == ctx && !it->second.module_owned && !it->second.graph_owned) {
      if (counts_as_device(it->second)) device_bytes_ -= it->second.size;
      out.push_back(it->second);
      it = by_base_.erase(it);
      removals_.fetch_add(1, std::memory_order_release);
    } else {
      ++it;
    }
  }
  return out;
}

}  // namespace cucpu
