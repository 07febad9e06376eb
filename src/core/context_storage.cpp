#include "core/context_storage.h"

#include <algorithm>
#include <utility>

namespace cucpu {

void ContextStorage::put(void* key, void* value, LocalStorageDestructor destructor) {
  std::lock_guard<std::mutex> g(mu_);
  for (Entry& e : entries_) {
    if (e.key == key) {
      e.value = value;
      e.destructor = destructor;
      return;
    }
  }
  entries_.push_back({key, value, destructor});
}

bool ContextStorage::get(void* key, void** value) const {
  std::lock_guard<std::mutex> g(mu_);
  for (const Entry& e : entries_) {
    if (e.key == key) {
      *value = e.value;
      return true;
    }
  }
  return false;
}

bool ContextStorage::remove(void* key) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == key; });
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

std::vector<ContextStorage::Entry> ContextStorage::take_all() {
  std::lock_guard<std::mutex> g(mu_);
  return std::exchange(entries_, {});
}

}  // namespace cucpu
