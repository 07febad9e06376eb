#include "core/user_object.h"

#include "base/deferred_calls.h"
#include "core/runtime.h"

namespace cucpu {

UserObject* new_user_object(void* ptr, CUhostFn destroy, unsigned refs) {
  return rt().user_objects.create(ptr, destroy, refs);
}

bool UserObject::release(uint64_t n) {
  uint64_t left = refs_.load(std::memory_order_relaxed);
  do {
    if (left < n) return false;
  } while (!refs_.compare_exchange_weak(left, left - n, std::memory_order_acq_rel, std::memory_order_relaxed));
  if (left != n) return true;
  rt().user_objects.kill(this);
  defer_call(
      [](void* p) {
        auto* u = static_cast<UserObject*>(p);
        u->destroy_(u->ptr_);
        rt().user_objects.release(u);
      },
      this);
  return true;
}

bool UserObjectRefs::release(UserObject* u, uint64_t n) {
  auto it = refs_.find(u);
  if (it == refs_.end() || it->second < n) return false;
  if ((it->second -= n) == 0) refs_.erase(it);
  u->release(n);
  return true;
}

}  // namespace cucpu
