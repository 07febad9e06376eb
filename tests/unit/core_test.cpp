// Unit tests of the core pieces, below the C API.
#include <gtest/gtest.h>

#include "core/allocation.h"
#include "core/handle_pool.h"

namespace cucpu {
namespace {

struct Thing {
  explicit Thing(int v) : v(v) {}
  int v;
};

TEST(HandlePool, ValidatesLiveDeadAndForeignHandles) {
  HandlePool<Thing> pool(64);
  Thing* a = pool.create(7);
  EXPECT_EQ(pool.state(a), HandleState::kLive);
  EXPECT_EQ(pool.live(a)->v, 7);
  int on_stack = 0;
  EXPECT_EQ(pool.state(&on_stack), HandleState::kInvalid);
  EXPECT_EQ(pool.state(nullptr), HandleState::kInvalid);
  EXPECT_EQ(pool.state(reinterpret_cast<char*>(a) + 1), HandleState::kInvalid);
  pool.kill(a);
  EXPECT_EQ(pool.state(a), HandleState::kDead);
  EXPECT_EQ(pool.live(a), nullptr);
  pool.release(a);
  EXPECT_EQ(pool.state(a), HandleState::kDead);
}

TEST(HandlePool, ReusesSlotsOldestFirst) {
  HandlePool<Thing> pool(4);
  Thing* a = pool.create(1);
  Thing* b = pool.create(2);
  pool.release(a);
  pool.release(b);
  Thing* c = pool.create(3);
  EXPECT_EQ(c, a);  // FIFO: the slot freed first comes back first
  pool.release(c);
}

TEST(HandlePool, AQuarantinedSlotWaitsForLaterFreesAndKeepsItsEpitaph) {
  HandlePool<Thing> pool(8, 0, 2);
  Thing* a = pool.create(1);
  pool.set_epitaph(a, 42);
  EXPECT_EQ(pool.epitaph(a), 0u);  // live: no epitaph yet
  pool.kill(a);
  pool.release(a);
  EXPECT_EQ(pool.epitaph(a), 42u);
  Thing* b = pool.create(2);
  Thing* c = pool.create(3);
  EXPECT_NE(b, a);
  EXPECT_NE(c, a);
  pool.release(b);
  EXPECT_NE(pool.create(4), a);  // two wait: still quarantined
  pool.release(c);
  EXPECT_EQ(pool.epitaph(a), 42u);
  Thing* d = pool.create(5);  // three wait: the oldest comes back
  EXPECT_EQ(d, a);
  EXPECT_EQ(pool.epitaph(d), 0u);
  pool.release(d);
}

TEST(HandlePool, AFullPoolReusesQuarantinedSlots) {
  HandlePool<Thing> pool(2, 0, 100);
  Thing* a = pool.create(1);
  Thing* b = pool.create(2);
  pool.release(a);
  EXPECT_EQ(pool.create(3), a);
  pool.release(a);
  pool.release(b);
}

TEST(HandlePool, ThrowsWhenFull) {
  HandlePool<Thing> pool(1);
  Thing* a = pool.create(1);
  EXPECT_THROW(pool.create(2), std::bad_alloc);
  pool.release(a);
}

TEST(Registry, FindsContainingAllocation) {
  Registry& r = Registry::instance();
  alignas(64) static char buf[1000];
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(buf);
  a.size = 1000;
  uint64_t id = r.add(a);
  auto f = r.find(a.base + 999);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->id, id);
  EXPECT_FALSE(r.find(a.base + 1000).has_value());
  EXPECT_TRUE(r.still_valid(id, a.base + 10, 990));
  EXPECT_FALSE(r.still_valid(id, a.base + 10, 991));
  ASSERT_TRUE(r.remove(a.base).has_value());
  EXPECT_FALSE(r.still_valid(id, a.base, 1));
}

}  // namespace
}  // namespace cucpu
