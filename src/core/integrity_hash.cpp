#include "core/integrity_hash.h"

#include <cstring>

namespace cucpu {
namespace {

// RFC 1319's substitution table (digits of pi).
constexpr uint8_t kPi[256] = {
    41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  98,  167, 5,   243,
    192, 199, 115, 140, 152, 147, 43,  217, 188, 76,  130, 202, 30,  155, 87,  60,  253, 212, 224, 22,
    103, 66,  111, 24,  138, 23,  229, 18,  190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142,
    187, 47,  238, 122, 169, 104, 121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,
    128, 127, 93,  154, 90,  144, 50,  39,  53,  62,  204, 231, 191, 247, 151, 3,   255, 25,  48,  179,
    72,  165, 181, 209, 215, 94,  146, 42,  172, 86,  170, 198, 79,  184, 56,  210, 150, 164, 125, 182,
    118, 252, 107, 226, 156, 116, 4,   241, 69,  157, 112, 89,  100, 113, 135, 32,  134, 91,  207, 101,
    230, 45,  168, 2,   27,  96,  37,  173, 174, 176, 185, 246, 28,  70,  97,  105, 52,  64,  126, 15,
    85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,  44,  83,  13,  110,
    133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,  106, 220, 55,  200, 108, 193, 171, 250,
    36,  225, 123, 8,   12,  189, 177, 74,  120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254,
    59,  0,   29,  57,  242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,
    49,  68,  80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20};

class Md2 {
 public:
  void update(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < size; ++i) {
      pending_[fill_++] = p[i];
      if (fill_ == 16) {
        compress(pending_);
        fill_ = 0;
      }
    }
  }
  std::array<uint8_t, 16> finish() {
    uint8_t pad[16];
    const auto n = static_cast<uint8_t>(16 - fill_);
    std::memset(pad, n, sizeof pad);
    update(pad, n);
    uint8_t sum[16];
    std::memcpy(sum, checksum_, sizeof sum);
    compress(sum);
    std::array<uint8_t, 16> out;
    std::memcpy(out.data(), state_, out.size());
    return out;
  }

 private:
  void compress(const uint8_t* block) {
    uint8_t last = checksum_[15];
    for (int j = 0; j < 16; ++j) {
      state_[16 + j] = block[j];
      state_[32 + j] = static_cast<uint8_t>(block[j] ^ state_[j]);
      last = checksum_[j] ^= kPi[block[j] ^ last];
    }
    uint8_t t = 0;
    for (int round = 0; round < 18; ++round) {
      for (uint8_t& x : state_) t = x ^= kPi[t];
      t = static_cast<uint8_t>(t + round);
    }
  }
  uint8_t state_[48] = {};
  uint8_t checksum_[16] = {};
  uint8_t pending_[16] = {};
  size_t fill_ = 0;
};

// The HMAC key, and the two fixed answers, as NVIDIA's driver 580 gives them.
constexpr uint8_t kKey[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
                              0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f};
constexpr std::array<uint64_t, 2> kAnswerForDigit0 = {0x3341181c03cb675cull, 0x8ed383aa1f4cd1e8ull};
constexpr std::array<uint64_t, 2> kAnswerForDigit1 = {0x1841181c03cb675cull, 0x8ed383aa1f4cd1e8ull};

void keyed(Md2& h, uint8_t pad) {
  uint8_t k[16];
  for (int i = 0; i < 16; ++i) k[i] = kKey[i] ^ pad;
  h.update(k, sizeof k);
}

}  // namespace

std::array<uint8_t, 16> md2(const void* data, size_t size) {
  Md2 h;
  h.update(data, size);
  return h.finish();
}

std::array<uint64_t, 2> integrity_answer(const IntegrityInputs& in, const DeviceIdentity* devices,
                                         size_t device_count) {
  if (in.version % 10 == 0) return kAnswerForDigit0;
  if (in.version % 10 == 1) return kAnswerForDigit1;
  Md2 inner;
  keyed(inner, 0x36);
  inner.update(&in, sizeof in);
  for (size_t i = 0; i < device_count; ++i) inner.update(&devices[i], sizeof devices[i]);
  const std::array<uint8_t, 16> first = inner.finish();
  Md2 outer;
  keyed(outer, 0x5c);
  outer.update(first.data(), first.size());
  const std::array<uint8_t, 16> digest = outer.finish();
  std::array<uint64_t, 2> out;
  std::memcpy(out.data(), digest.data(), sizeof out);
  return out;
}

}  // namespace cucpu
