// BiasedLock (exec/biased_lock.h): a thread that takes the lock alone
// becomes its owner and enters without the mutex; any other thread takes
// the ownership back and excludes the owner's sections.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "exec/asymmetric_fence.h"
#include "exec/biased_lock.h"

namespace cucpu {
namespace {

// Takes `lock` as its owner would: entered when owned, else locked.
template <class F>
void section(BiasedLock& lock, F&& f) {
  if (lock.enter_owned()) {
    f();
    lock.leave_owned();
    return;
  }
  std::lock_guard<BiasedLock> g(lock);
  f();
}

TEST(BiasedLock, ALoneThreadBecomesItsOwnerAndAnotherTakesItBack) {
  if (!wait_for_heavy_fence()) GTEST_SKIP() << "no membarrier: the lock is never granted";
  BiasedLock lock;
  EXPECT_FALSE(lock.enter_owned());
  int taken = 0;
  while (!lock.enter_owned()) {
    ASSERT_LT(++taken, 1000) << "never granted";
    std::lock_guard<BiasedLock> g(lock);
  }
  lock.leave_owned();
  std::thread([&] {
    EXPECT_FALSE(lock.enter_owned());
    std::lock_guard<BiasedLock> g(lock);
  }).join();
  EXPECT_FALSE(lock.enter_owned()) << "the other thread's lock() took the ownership back";
}

// The owner holds a section while another thread asks for the lock: the
// other thread's lock() returns only after the section has ended.
TEST(BiasedLock, TakingItBackWaitsOutTheOwnersSection) {
  if (!wait_for_heavy_fence()) GTEST_SKIP() << "no membarrier: the lock is never granted";
  BiasedLock lock;
  while (!lock.enter_owned()) std::lock_guard<BiasedLock> g(lock);
  std::atomic<bool> asking{false};
  bool section_ended = false;  // written in the owner's section, read under the lock
  std::thread other([&] {
    asking.store(true);
    std::lock_guard<BiasedLock> g(lock);
    EXPECT_TRUE(section_ended);
  });
  while (!asking.load()) std::this_thread::yield();
  for (int i = 0; i < 100; ++i) std::this_thread::yield();  // likelier to be waited on; not needed to pass
  section_ended = true;
  lock.leave_owned();
  other.join();
}

// Two threads count through one plain integer: the owner's sections and
// the other's locked ones exclude each other through every hand-over.
TEST(BiasedLock, OwnerAndOtherThreadsExcludeEachOther) {
  BiasedLock lock;
  long count = 0;
  constexpr int kEach = 20000;
  auto work = [&] {
    for (int i = 0; i < kEach; ++i) {
      section(lock, [&] { ++count; });
      if (i % 4096 == 0) std::this_thread::yield();
    }
  };
  std::thread a(work), b(work);
  work();
  a.join();
  b.join();
  std::lock_guard<BiasedLock> g(lock);
  EXPECT_EQ(count, 3L * kEach);
}

}  // namespace
}  // namespace cucpu
