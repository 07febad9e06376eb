// The fault trap (base/fault_trap.h): a fault inside a trapped access comes
// back as false with its address; traps nest; a clean access returns true.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstdint>

#include "base/fault_trap.h"

namespace {

struct UnmappedPage {
  volatile unsigned char* p;
  UnmappedPage() {
    void* m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(m, 4096);
    p = static_cast<volatile unsigned char*>(m);
  }
};

TEST(FaultTrap, AFaultInsideComesBackWithItsAddress) {
  UnmappedPage page;
  uintptr_t at = 0;
  EXPECT_FALSE(cucpu::run_trapped([&] { page.p[12] = 1; }, &at));
  EXPECT_EQ(at, reinterpret_cast<uintptr_t>(page.p + 12));
  EXPECT_EQ(cucpu::t_fault_trap, nullptr);
}

TEST(FaultTrap, ACleanAccessReturnsTrue) {
  int x = 0;
  EXPECT_TRUE(cucpu::run_trapped([&] { x = 5; }));
  EXPECT_EQ(x, 5);
}

TEST(FaultTrap, TrapsNest) {
  UnmappedPage page;
  bool inner_caught = false, after_inner = false;
  const bool outer = cucpu::run_trapped([&] {
    inner_caught = !cucpu::run_trapped([&] { (void)page.p[0]; });
    after_inner = true;
    (void)page.p[1];  // the outer trap is armed again
  });
  EXPECT_FALSE(outer);
  EXPECT_TRUE(inner_caught);
  EXPECT_TRUE(after_inner);
}

}  // namespace
