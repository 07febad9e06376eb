#include "core/user_object.h"

#include "base/deferred_calls.h"
#include "core/runtime.h"

namespace cucpu {

UserObject* new_user_object(void* ptr, CUhostFn destroy, unsigned refs) {
  return rt().user_objects.create(ptr, destroy, refs);
}

void UserObject::release(uint64_t n) {
  if (refs_.fetch_sub(n, std::memory_order_acq_rel) != n) return;
  rt().user_objects.kill(this);
  defer_call(
      [](void* p) {
        auto* u = static_cast<UserObject*>(p);
        u->destroy_(u->ptr_);
        rt().user_objects.release(u);
      },
      this);
}

bool UserObjectRefs::release(UserObject* u, uint64_t n) {
  auto it = refs_.find(u);
  if (it == refs_.end() || it->second < n) return false;
  if ((it->second -= n) == 0) refs_.erase(it);
  u->release(n);
  return true;
}

}  // namespace cucpu
