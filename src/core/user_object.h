// User objects (cuUserObjectCreate): a caller's pointer and destructor, and
// a count of the references the caller, graphs and executable graphs hold.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>

#include "cuda.h"

namespace cucpu {

// When the count reaches zero the handle dies at once and the destructor
// runs later on the deferred-call thread (base/deferred_calls.h), as the
// driver runs it on an internal thread: never inside the call that dropped
// the last reference, never under a runtime lock.
class UserObject {
 public:
  UserObject(void* ptr, CUhostFn destroy, unsigned refs) : ptr_(ptr), destroy_(destroy), refs_(refs) {}
  void retain(uint64_t n) { refs_.fetch_add(n, std::memory_order_relaxed); }
  // Drops n references; false (nothing dropped) when fewer than n remain,
  // so that an over-release never wraps the count. acq_rel: every holder's
  // use of the object happens before the destructor.
  bool release(uint64_t n);

 private:
  void* const ptr_;
  const CUhostFn destroy_;
  std::atomic<uint64_t> refs_;
};

UserObject* new_user_object(void* ptr, CUhostFn destroy, unsigned refs);

// The references a graph or an executable graph holds, released when it
// goes. Contract: as its graph's, not safe to change from several threads
// at once.
class UserObjectRefs {
 public:
  UserObjectRefs() = default;
  // A copy holds references of its own.
  UserObjectRefs(const UserObjectRefs& other) : refs_(other.refs_) {
    for (auto& [u, n] : refs_) u->retain(n);
  }
  UserObjectRefs& operator=(const UserObjectRefs&) = delete;
  ~UserObjectRefs() {
    for (auto& [u, n] : refs_) u->release(n);
  }
  // Takes over n references the caller made or moved.
  void take(UserObject* u, uint64_t n) { refs_[u] += n; }
  // Releases n of the references held to u; false (nothing released) when
  // fewer are held.
  bool release(UserObject* u, uint64_t n);
  // `out` takes references of its own to everything held here.
  void add_to(UserObjectRefs& out) const {
    for (auto& [u, n] : refs_) {
      u->retain(n);
      out.take(u, n);
    }
  }

 private:
  std::map<UserObject*, uint64_t> refs_;
};

}  // namespace cucpu
