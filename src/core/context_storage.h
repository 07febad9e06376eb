// Context-local storage: values a client library (cudart) keeps per context,
// keyed by an opaque pointer, each with a destructor the context runs when it
// is destroyed or (a primary context) reset.
//
// Contract: every member may be called from any thread. Destructors are
// never run under the storage's lock: take_all() hands the entries out and
// the caller runs them, with no runtime lock held.
#pragma once
#include <mutex>
#include <vector>

#include "cuda.h"

namespace cucpu {

using LocalStorageDestructor = void (*)(CUcontext ctx, void* key, void* value);

class ContextStorage {
 public:
  struct Entry {
    void* key;
    void* value;
    LocalStorageDestructor destructor;
  };
  // Sets (or replaces) the value under key.
  void put(void* key, void* value, LocalStorageDestructor destructor);
  // False when key holds nothing.
  bool get(void* key, void** value) const;
  bool remove(void* key);
  std::vector<Entry> take_all();

 private:
  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // guarded by mu_; few (one per client library)
};

}  // namespace cucpu
