#include "core/primary_context.h"

#include <mutex>

#include "core/allocation.h"
#include "core/allocator.h"
#include "core/context.h"
#include "core/module.h"
#include "core/runtime.h"

namespace cucpu {

namespace {
// rt().primary_mu held.
Context* primary_locked(Device& d) {
  if (!d.primary) d.primary = rt().contexts.create(&d, 0u, true);
  return d.primary;
}
}  // namespace

Context* primary_context(Device& d) {
  std::lock_guard<std::mutex> g(rt().primary_mu);
  return primary_locked(d);
}

Context* primary_retain(Device& d) {
  std::lock_guard<std::mutex> g(rt().primary_mu);
  Context* c = primary_locked(d);
  if (d.primary_refs++ == 0) {
    d.primary_active = true;
    c->flags.store(d.primary_flags);
    c->sticky.store(CUDA_SUCCESS);
  }
  return c;
}

CUresult primary_release(Device& d) {
  Context* empty_it = nullptr;
  {
    std::lock_guard<std::mutex> g(rt().primary_mu);
    if (d.primary_refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (--d.primary_refs == 0) {
      d.primary_active = false;
      empty_it = d.primary;
    }
  }
  if (empty_it) tear_down(empty_it);
  return CUDA_SUCCESS;
}

void primary_reset(Device& d) {
  Context* c;
  {
    std::lock_guard<std::mutex> g(rt().primary_mu);
    c = d.primary;
    d.primary_refs = 0;
    d.primary_active = false;
    d.primary_flags = 0;
  }
  if (c) {
    tear_down(c);
    c->reset_limits();
  }
}

void primary_set_flags(Device& d, unsigned flags) {
  std::lock_guard<std::mutex> g(rt().primary_mu);
  d.primary_flags = flags;
  if (d.primary) d.primary->flags.store(flags);
}

void primary_state(Device& d, unsigned* flags, bool* active) {
  std::lock_guard<std::mutex> g(rt().primary_mu);
  *flags = d.primary_flags;
  *active = d.primary_active;
}

void tear_down(Context* c) {
  for (const ContextStorage::Entry& e : c->local_storage.take_all())
    if (e.destructor) e.destructor(reinterpret_cast<CUcontext>(c), e.key, e.value);
  c->shut_down();
  synchronize_all_contexts();
  unload_context_modules(c);  // their memory goes with the context; the objects with their last reference
  for (const Allocation& a : Registry::instance().remove_context(c))
    if (a.kind != MemKind::kRegistered) release_backing(a);  // registered memory is the caller's
}

}  // namespace cucpu
