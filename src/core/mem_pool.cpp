#include "core/mem_pool.h"

#include <cstring>

#include "core/runtime.h"

namespace cucpu {

void MemPool::on_alloc(size_t n) {
  std::lock_guard<std::mutex> g(mu_);
  used_ += n;
  if (used_ > used_high_) used_high_ = used_;
}

void MemPool::on_free(size_t n) {
  std::lock_guard<std::mutex> g(mu_);
  used_ -= n;
}

CUresult MemPool::get_attribute(int attr, void* value) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> g(mu_);
  auto put_int = [&](int v) { std::memcpy(value, &v, sizeof v); };
  auto put_u64 = [&](uint64_t v) { std::memcpy(value, &v, sizeof v); };
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: put_int(reuse_follow_event_); break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: put_int(reuse_opportunistic_); break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: put_int(reuse_internal_); break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: put_u64(release_threshold_); break;
    // Nothing is cached: what is reserved is what is in use.
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: put_u64(used_); break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: put_u64(used_high_); break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult MemPool::set_attribute(int attr, const void* value) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> g(mu_);
  int i;
  uint64_t u;
  std::memcpy(&i, value, sizeof i);
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: reuse_follow_event_ = i != 0; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: reuse_opportunistic_ = i != 0; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: reuse_internal_ = i != 0; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      std::memcpy(&release_threshold_, value, sizeof release_threshold_);
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      // The high-water marks can only be reset, to the current usage.
      std::memcpy(&u, value, sizeof u);
      if (u != 0) return CUDA_ERROR_INVALID_VALUE;
      used_high_ = used_;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;  // the current values are read-only
  }
}

CUmemAccess_flags MemPool::access_of(int dev) {
  if (dev == device->ordinal) return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [d, f] : peers_)
    if (d == dev) return f;
  return CU_MEM_ACCESS_FLAGS_PROT_NONE;
}

CUresult MemPool::set_access(int dev, CUmemAccess_flags flags) {
  if (dev == device->ordinal) {
    // The owning device's access cannot be lowered.
    return flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
  }
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [d, f] : peers_)
    if (d == dev) {
      f = flags;
      return CUDA_SUCCESS;
    }
  peers_.emplace_back(dev, flags);
  return CUDA_SUCCESS;
}

}  // namespace cucpu
