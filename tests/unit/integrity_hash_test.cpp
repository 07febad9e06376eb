// The integrity answer: MD2 against RFC 1319's test vectors, the fixed
// answers, and one answer NVIDIA's driver 580 gave on the H200 for known
// inputs (tools/darktrace/integrity_probe.c).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/integrity_hash.h"

namespace {

std::string hex(const std::array<uint8_t, 16>& d) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

TEST(IntegrityHash, Md2MatchesTheRfcTestVectors) {
  EXPECT_EQ(hex(cucpu::md2("", 0)), "8350e5a3e24c153df2275c9f80692773");
  EXPECT_EQ(hex(cucpu::md2("a", 1)), "32ec01ec4a6dac72c0ab96fb34c0b5d1");
  EXPECT_EQ(hex(cucpu::md2("abc", 3)), "da853b0d3f88d99b30283a69e6ded6bb");
  EXPECT_EQ(hex(cucpu::md2("message digest", 14)), "ab4f496bfb2a530b219ff33031fe06b0");
  const std::string alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  EXPECT_EQ(hex(cucpu::md2(alnum.data(), alnum.size())), "da33def2a42df13975352846c30338cd");
}

TEST(IntegrityHash, FixedAnswersForVersionsEndingInZeroAndOne) {
  cucpu::IntegrityInputs in{};
  in.version = 13000;
  auto a = cucpu::integrity_answer(in, nullptr, 0);
  EXPECT_EQ(a[0], 0x3341181c03cb675cull);
  EXPECT_EQ(a[1], 0x8ed383aa1f4cd1e8ull);
  in.version = 12081;
  a = cucpu::integrity_answer(in, nullptr, 0);
  EXPECT_EQ(a[0], 0x1841181c03cb675cull);
  EXPECT_EQ(a[1], 0x8ed383aa1f4cd1e8ull);
}

// Driver 580 on the H200: pid 462, pthread_self 0x7fade482c740, one device.
TEST(IntegrityHash, MatchesTheDriverForRecordedInputs) {
  cucpu::IntegrityInputs in{};
  in.driver_version = 13000;
  in.version = 13002;
  in.process = 462;
  in.thread = 0xe482c740u;
  in.cudart_table = 0x7fade444c680ull;
  in.integrity_table = 0x7fade444c660ull;
  in.function = 0x7faddedab350ull;
  in.unix_seconds = 1796140019ull;
  cucpu::DeviceIdentity d{};
  const uint8_t uuid[16] = {0xda, 0xd8, 0xf0, 0x6a, 0x5e, 0xd7, 0x74, 0x78,
                            0xa4, 0x18, 0x23, 0x6c, 0x89, 0x7b, 0xd3, 0xda};
  std::memcpy(d.uuid, uuid, 16);
  d.pci_domain = 0;
  d.pci_bus = 0;
  d.pci_device = 6;
  const auto a = cucpu::integrity_answer(in, &d, 1);
  EXPECT_EQ(a[0], 0xbdcefaa85dcfacbdull);
  EXPECT_EQ(a[1], 0xb8db3d3fa9086982ull);
}

}  // namespace
