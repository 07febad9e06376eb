// Kernels of tests/kernels/rdc.cu, built with -rdc=true: module-scope
// shared memory declared before the module's data, kernels whose shared
// memory together exceeds one kernel's limit, and libm's argument
// reduction, which reads a __constant__ table.
#include <cmath>
#include <cstring>

#include "kernels_util.h"

CONF_TEST(KernelRdcSharedBeforeDataFindsEachVariable) {
  kt::for_each_variant("rdc", [&](kt::Module& m) {
    const int threads = 64, blocks = 3;
    kt::Buf<int32_t> out(threads * blocks);
    kt::run(m.fn("tables"), {blocks}, {threads}, 0, out.p);
    const int dev_table[4] = {3, 5, 7, 11}, const_table[4] = {100, 200, 300, 400};
    std::vector<int32_t> want(threads * blocks);
    for (int i = 0; i < threads * blocks; ++i) {
      const int t = i % threads;
      want[i] = threads * 10000 + dev_table[t & 3] + const_table[(t >> 2) & 3];
    }
    kt::Checker ck("tables");
    ck.all(out.get(), want);
    ck.done();
  });
}

CONF_TEST(KernelRdcSharedArenaHoldsWhatTheKernelReaches) {
  kt::for_each_variant("rdc", [&](kt::Module& m) {
    const char* names[] = {"arena_a", "arena_b", "arena_c"};
    for (int k = 0; k < 3; ++k) {
      CUfunction f = m.fn(names[k]);
      int bytes = -1;
      ASSERT_CU(cuFuncGetAttribute(&bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
      EXPECT_TRUE(bytes == 20480);
      const int threads = 128;
      kt::Buf<int32_t> out(threads);
      kt::run(f, {1}, {threads}, 0, out.p);
      std::vector<int32_t> want(threads);
      for (int t = 0; t < threads; ++t) want[t] = (t * 37 % 5120) * (k + 1);
      kt::Checker ck(names[k]);
      ck.all(out.get(), want);
      ck.done();
    }
  });
}

namespace {

uint32_t ulps_apart(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : UINT32_MAX;
  auto ordered = [](float v) {
    int32_t i;
    std::memcpy(&i, &v, 4);
    return i < 0 ? INT32_MIN - i : i;
  };
  const int64_t d = int64_t{ordered(a)} - ordered(b);
  return static_cast<uint32_t>(d < 0 ? -d : d);
}

}  // namespace

// CUDA's documented bounds: sinf and cosf within 2 ulp, tanf within 4, over
// the whole range. The INFO row is a hash of every result's bits, so that
// the two drivers' runs can be compared bit for bit.
CONF_TEST(KernelRdcTrigOfLargeArgumentsIsAccurate) {
  std::vector<float> x;
  kt::Rng rng(42);
  for (int i = 0; i < 2048; ++i) {
    const int e = rng.range(-20, 127);  // magnitudes from 1e-6 to the largest finite
    const float mant = 1.0f + static_cast<float>(rng.u32() >> 9) / 8388608.0f;
    const float v = std::ldexp(mant, e);
    x.push_back(rng.u32() & 1 ? -v : v);
  }
  for (float v : {0.0f, -0.0f, 1e30f, 3.4028235e38f, 105414350.0f, 6.2831855f, 1.5707964f, 48039.0f})
    x.push_back(v);
  const int n = static_cast<int>(x.size());
  kt::for_each_variant("rdc", [&](kt::Module& m) {
    kt::Buf<float> in(x), out(3 * x.size());
    kt::run(m.fn("trig"), {(n + 255) / 256}, {256}, 0, in.p, out.p, n);
    const std::vector<float> got = out.get();
    uint64_t hash = 1469598103934665603ull;
    int bad = 0;
    std::string first;
    for (int i = 0; i < n; ++i) {
      const double v = x[i];
      const float want[3] = {static_cast<float>(std::sin(v)), static_cast<float>(std::cos(v)),
                             static_cast<float>(std::tan(v))};
      const uint32_t bound[3] = {2, 2, 4};
      for (int k = 0; k < 3; ++k) {
        hash = (hash ^ kt::bits_of(got[3 * i + k])) * 1099511628211ull;
        if (ulps_apart(got[3 * i + k], want[k]) > bound[k] && !bad++)
          first = "x=" + kt::hex(kt::bits_of(x[i])) + " op " + std::to_string(k) + " got " +
                  kt::hex(kt::bits_of(got[3 * i + k])) + " want " + kt::hex(kt::bits_of(want[k]));
      }
    }
    if (m.image.find("sm90") != std::string::npos) conf::info_value("rdc_trig_bits_hash", static_cast<long long>(hash >> 1));
    if (bad) throw conf::Failure{std::to_string(bad) + " results past CUDA's bound; first " + first};
  });
}
