// The fault-ahead mapping (base/fault_ahead.h): zeroed memory that keeps
// what is written to it; the pager faults in the lead without touching
// what the writer wrote; mappings may be destroyed while the pager works.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "base/fault_ahead.h"

namespace {

using cucpu::FaultAheadMapping;

// Resident pages among the first `bytes` of m (mincore).
size_t resident_pages(const FaultAheadMapping& m, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((bytes + page - 1) / page);
  if (mincore(m.data(), bytes, in.data()) != 0) return 0;
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

TEST(FaultAhead, WrittenBytesSurviveThePagerAndTheRestIsZero) {
  constexpr size_t kBytes = size_t{24} << 20;
  FaultAheadMapping m(kBytes);
  ASSERT_NE(m.data(), nullptr);
  ASSERT_GE(m.size(), kBytes);
  auto* words = static_cast<uint64_t*>(m.data());
  const size_t n = kBytes / 8;
  // Write front to back in steps, reporting progress, while the pager works ahead.
  constexpr size_t kStepWords = 20480;
  for (size_t i = 0; i < n / 2; ++i) {
    words[i] = i * 0x9e3779b97f4a7c15ull + 1;
    if (i % kStepWords == 0) m.reached(i * 8);
  }
  m.reached(n / 2 * 8);
  for (size_t i = 0; i < n / 2; ++i) ASSERT_EQ(words[i], i * 0x9e3779b97f4a7c15ull + 1) << i;
  for (size_t i = n / 2; i < n; ++i) ASSERT_EQ(words[i], 0u) << i;
}

TEST(FaultAhead, ThePagerFaultsInTheLead) {
  FaultAheadMapping m(size_t{16} << 20);
  ASSERT_NE(m.data(), nullptr);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t lead_pages = FaultAheadMapping::kLead / page;
  // The pager works on its own thread: wait (bounded) for it to get there.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  size_t resident = 0;
  while ((resident = resident_pages(m, FaultAheadMapping::kLead)) < lead_pages &&
         std::chrono::steady_clock::now() < give_up)
    std::this_thread::yield();
  if (resident < lead_pages && resident_pages(m, page) == 0)
    GTEST_SKIP() << "the kernel does not populate ahead (MADV_POPULATE_WRITE)";
  EXPECT_EQ(resident, lead_pages);
  // Nothing beyond the lead was asked for yet.
  EXPECT_LT(resident_pages(m, m.size()), m.size() / page);
}

TEST(FaultAhead, MappingsComeAndGoFromManyThreadsWhileThePagerWorks) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int round = 0; round < 8; ++round) {
        FaultAheadMapping m((size_t{8} + static_cast<size_t>(t)) << 20);
        ASSERT_NE(m.data(), nullptr);
        auto* bytes = static_cast<unsigned char*>(m.data());
        for (size_t off = 0; off < m.size(); off += 1 << 16) {
          bytes[off] = static_cast<unsigned char>(round + 1);
          m.reached(off);
        }
        for (size_t off = 0; off < m.size(); off += 1 << 16) ASSERT_EQ(bytes[off], round + 1);
      }  // destroyed with the pager perhaps still on it
    });
  for (auto& th : threads) th.join();
}

TEST(FaultAhead, ASmallMappingIsAllOfIt) {
  FaultAheadMapping m(100);
  ASSERT_NE(m.data(), nullptr);
  EXPECT_EQ(m.size(), static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  static_cast<char*>(m.data())[99] = 7;
  m.reached(100);
  EXPECT_EQ(static_cast<char*>(m.data())[99], 7);
}

}  // namespace
