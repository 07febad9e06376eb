#include "exec/producer_slot.h"

#include <mutex>
#include <vector>

namespace cucpu {
namespace {

struct SlotList {
  std::mutex mu;
  std::vector<ProducerSlot*> free;  // guarded by mu: slots of exited threads
};
SlotList& slot_list() {
  static SlotList* l = new SlotList();  // outlives thread-exit returns
  return *l;
}

struct SlotReturn {
  ~SlotReturn() { ProducerSlot::thread_exits(); }
};
thread_local SlotReturn t_slot_return;

}  // namespace

void ProducerSlot::thread_exits() {
  if (!t_slot) return;
  std::lock_guard<std::mutex> g(slot_list().mu);
  slot_list().free.push_back(t_slot);
  t_slot = nullptr;
}

ProducerSlot* ProducerSlot::mine() {
  if (ProducerSlot* s = t_slot) return s;
  ProducerSlot* s = nullptr;
  {
    std::lock_guard<std::mutex> g(slot_list().mu);
    if (!slot_list().free.empty()) {
      s = slot_list().free.back();
      slot_list().free.pop_back();
    }
  }
  if (!s) s = new ProducerSlot();
  (void)&t_slot_return;  // constructs it: the slot goes back when the thread exits
  t_slot = s;
  return s;
}

}  // namespace cucpu
