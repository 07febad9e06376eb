#include "exec/partition.h"

#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

#include "exec/scheduler.h"

namespace cucpu {

WorkerSet workers_of(const SmSet& sms, size_t sm_count) {
  const size_t workers = Scheduler::instance().worker_count();
  WorkerSet out;
  for (size_t i = 0; i < sm_count && i < sms.size(); ++i)
    if (sms.test(i)) out.set(worker_of_sm(i, sm_count, workers));
  return out;
}

Scheduler& partition_pool(const WorkerSet& set) {
  // The pools are leaked on purpose, as the shared one is: their workers
  // may still finish ops while static destructors run.
  static std::mutex mu;
  static std::vector<std::pair<WorkerSet, Scheduler*>> pools;  // guarded by mu
  std::lock_guard<std::mutex> g(mu);
  for (auto& [s, pool] : pools)
    if (s == set) return *pool;
  if (pools.size() == kMaxPartitions) {
    static bool said = false;
    if (!said)
      std::fprintf(stderr, "cucpu: more than %zu distinct green-context partitions; further ones share the device's pool\n",
                   kMaxPartitions);
    said = true;
    return Scheduler::instance();
  }
  auto* pool = new Scheduler(set.count());
  pools.emplace_back(set, pool);
  return *pool;
}

}  // namespace cucpu
