// State-space kernels of tests/kernels/memory.cu: parameters (scalars,
// structs by value, the `extra` buffer form), global accesses of every
// width, shared (static and dynamic), local, constant, __device__ and
// __managed__ variables, and generic pointers.
#include <cstring>

#include "kernels_util.h"

namespace {

struct Small {
  char c;
  int i;
  double d;
  short s[3];
};
struct alignas(16) Vec {
  float v[4];
  int tail;
};
struct Big {
  int words[256];
};
static_assert(sizeof(Small) == 24 && sizeof(Vec) == 32 && sizeof(Big) == 1024, "layouts of memory.cu");

std::vector<int32_t> ints(int n, uint64_t seed, int lo, int hi) {
  kt::Rng rng(seed);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = rng.range(lo, hi);
  return v;
}

}  // namespace

CONF_TEST(KernelScalarParametersArriveIntact) {
  kt::for_each_variant("memory", [&](kt::Module& m) {
    kt::Buf<int64_t> out(10);
    signed char c = -5;
    double d = -1.0 / 3;
    short s = -30000;
    long long ll = -0x123456789abcdll;
    unsigned char uc = 250;
    float f = 2.75f;
    unsigned short us = 65000;
    unsigned long long ull = 0xfedcba9876543210ull;
    int i = -123456789;
    unsigned u = 4000000000u;
    kt::run(m.fn("params_scalars"), {1}, {1}, 0, c, d, s, ll, uc, f, us, ull, i, u, out.p);
    std::vector<int64_t> want = {c, (int64_t)kt::bits_of(d), s, ll, uc, (int64_t)kt::bits_of(f), us, (int64_t)ull, i,
                                 u};
    kt::Checker ck("params_scalars");
    ck.ops(out.get(), want, 1,
           {"char", "double", "short", "long long", "uchar", "float", "ushort", "ull", "int", "unsigned"});
    ck.done();
  });
}

CONF_TEST(KernelStructParametersArriveByValue) {
  Small sm{};
  sm.c = 'Z';
  sm.i = -77;
  sm.d = 10.25;
  sm.s[0] = 3;
  sm.s[1] = -4;
  sm.s[2] = 500;
  Vec vec{};
  vec.v[0] = 1;
  vec.v[1] = 2;
  vec.v[2] = 3;
  vec.v[3] = 4;
  vec.tail = 0x5eed;
  Big big;
  for (int j = 0; j < 256; ++j) big.words[j] = j * j - 1000;
  char tag = 'k';
  std::vector<int32_t> want(8 + 256, 0);
  want[0] = sm.c;
  want[1] = sm.i;
  want[2] = 41;
  want[3] = 3 - 12 + 2500;
  want[4] = tag;
  want[5] = 4321;
  want[6] = 0x5eed;
  for (int t = 0; t < 256; ++t) want[8 + t] = big.words[t] * 2 + big.words[255 - t];
  kt::for_each_variant("memory", [&](kt::Module& m) {
    kt::Buf<int32_t> out(8 + 256);
    kt::run(m.fn("params_structs"), {1}, {256}, 0, sm, tag, vec, big, out.p);
    kt::Checker ck("params_structs");
    ck.all(out.get(), want, "fields");
    ck.done();
  });
}

// The same kernel launched through kernelParams and through the `extra`
// buffer (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE) with the parameters laid out
// at their natural alignment.
CONF_TEST(KernelParametersFromAnExtraBufferMatchKernelParams) {
  kt::for_each_variant("memory", [&](kt::Module& m) {
    CUfunction f = m.fn("params_packed");
    kt::Buf<int32_t> a(4), b(4);
    kt::run(f, {1}, {1}, 0, (char)-9, 1234.75, 777, (short)-2222, a.p);
    unsigned char buf[32] = {};
    char c = -9;
    double d = 1234.75;
    int i = 777;
    short s = -2222;
    std::memcpy(buf + 0, &c, 1);
    std::memcpy(buf + 8, &d, 8);
    std::memcpy(buf + 16, &i, 4);
    std::memcpy(buf + 20, &s, 2);
    std::memcpy(buf + 24, &b.p, 8);
    size_t size = sizeof buf;
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    ASSERT_CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra));
    ASSERT_CU(cuCtxSynchronize());
    std::vector<int32_t> want = {-9, 1234, 777, -2222};
    kt::Checker ck("params_packed");
    ck.all(a.get(), want, "kernelParams");
    ck.all(b.get(), want, "extra buffer");
    ck.done();
  });
}

CONF_TEST(KernelGlobalAccessesOfEveryWidthMoveTheRightBytes) {
  const int n = 1024;
  kt::Rng rng(301);
  std::vector<uint8_t> b8(n);
  std::vector<uint16_t> b16(n);
  std::vector<uint32_t> b32(n);
  std::vector<uint64_t> b64(n);
  std::vector<float> v4(4 * n);
  std::vector<int32_t> v2(2 * n);
  std::vector<double> d2(2 * n);
  for (int i = 0; i < n; ++i) {
    b8[i] = (uint8_t)rng.u32();
    b16[i] = (uint16_t)rng.u32();
    b32[i] = rng.u32();
    b64[i] = rng.u64();
    for (int j = 0; j < 4; ++j) v4[4 * i + j] = (float)rng.range(-1000, 1000) * 0.5f;
    v2[2 * i] = (int32_t)rng.u32() >> 2;
    v2[2 * i + 1] = (int32_t)rng.u32() >> 2;
    d2[2 * i] = rng.range(-100000, 100000) * 0.25;
    d2[2 * i + 1] = rng.range(-100000, 100000) * 0.25;
  }
  std::vector<uint8_t> w8(n);
  std::vector<uint16_t> w16(n);
  std::vector<uint32_t> w32(n);
  std::vector<uint64_t> w64(n);
  std::vector<float> wv4(4 * n);
  std::vector<int32_t> wv2(2 * n);
  std::vector<double> wd2(2 * n);
  for (int i = 0; i < n; ++i) {
    w8[i] = (uint8_t)(b8[i] * 3 + 1);
    w16[i] = (uint16_t)(b16[i] ^ 0xa5a5);
    w32[i] = b32[i] + 0x01010101u + 1;
    w64[i] = b64[i] * 0x100000001ull;
    for (int j = 0; j < 4; ++j) wv4[4 * i + j] = v4[4 * i + 3 - j];
    wv2[2 * i] = v2[2 * i] + v2[2 * i + 1];
    wv2[2 * i + 1] = v2[2 * i] - v2[2 * i + 1];
    wd2[2 * i] = d2[2 * i + 1] * 2.0;
    wd2[2 * i + 1] = d2[2 * i] * 0.5;
  }
  kt::for_each_variant("memory", [&](kt::Module& m) {
    kt::Buf<uint8_t> i8(b8), o8(n);
    kt::Buf<uint16_t> i16(b16), o16(n);
    kt::Buf<uint32_t> i32(b32), o32(n);
    kt::Buf<uint64_t> i64(b64), o64(n);
    kt::Buf<float> iv4(v4), ov4(4 * n);
    kt::Buf<int32_t> iv2(v2), ov2(2 * n);
    kt::Buf<double> id2(d2), od2(2 * n);
    kt::run(m.fn("global_widths"), {n / 256}, {256}, 0, i8.p, i16.p, i32.p, i64.p, iv4.p, iv2.p, id2.p, o8.p, o16.p,
            o32.p, o64.p, ov4.p, ov2.p, od2.p, n);
    kt::Checker ck("global_widths");
    ck.all(o8.get(), w8, "u8");
    ck.all(o16.get(), w16, "u16");
    ck.all(o32.get(), w32, "u32 (__ldg, then volatile)");
    ck.all(o64.get(), w64, "u64");
    ck.all(ov4.get(), wv4, "float4");
    ck.all(ov2.get(), wv2, "int2 (__ldg)");
    ck.all(od2.get(), wd2, "double2");
    ck.done();
  });
}

CONF_TEST(KernelStaticSharedMemoryIsSharedByTheBlock) {
  const int blocks = 4, n = blocks * 256;
  std::vector<int32_t> in = ints(n, 311, -1000000, 1000000), want(n);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < 256; ++t) want[b * 256 + t] = in[b * 256 + 255 - t] + in[b * 256 + ((t + 1) & 255)];
  kt::for_each_variant("memory", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in), out(n);
    kt::run(m.fn("shared_static"), {blocks}, {256}, 0, din.p, out.p);
    kt::Checker ck("shared_static");
    ck.all(out.get(), want);
    ck.done();
  });
}

CONF_TEST(KernelDynamicSharedMemoryIsSharedByTheBlock) {
  for (unsigned bs : {64u, 256u, 1024u}) {
    const int blocks = 3, n = blocks * (int)bs;
    std::vector<int32_t> in = ints(n, 321 + bs, -100000, 100000), want(n);
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < (int)bs; ++t) want[b * bs + t] = in[b * bs + bs - 1 - t] + in[b * bs + (t + 3) % bs] * 3;
    kt::for_each_variant("memory", [&](kt::Module& m) {
      kt::Buf<int32_t> din(in), out(n);
      kt::run(m.fn("shared_dynamic"), {blocks}, {bs}, bs * 12, din.p, out.p);
      kt::Checker ck("shared_dynamic, block " + std::to_string(bs));
      ck.all(out.get(), want);
      ck.done();
    });
  }
}

CONF_TEST(KernelLocalArraysKeepEachThreadsValues) {
  const int n = 500;
  std::vector<int32_t> in = ints(n, 331, -50000, 50000), want(n);
  for (int i = 0; i < n; ++i) {
    int x = in[i];
    unsigned arr[32];
    for (int j = 0; j < 32; ++j) arr[j] = (unsigned)x * j + (unsigned)(j ^ i);
    for (int j = 0; j < 8; ++j) arr[(x + j * 5) & 31] += j;
    int64_t big[16];
    for (int j = 0; j < 16; ++j) big[j] = (int64_t)((uint64_t)(int64_t)(int32_t)arr[(j * 7 + x) & 31] << (j & 3));
    want[i] = (int32_t)(arr[x & 31] + arr[(i * 7) & 31] + (uint32_t)big[(x >> 5) & 15]);
  }
  kt::for_each_variant("memory", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in), out(n);
    kt::run(m.fn("local_array"), {(n + 127) / 128}, {128}, 0, din.p, out.p, n);
    kt::Checker ck("local_array", [&](size_t i) { return std::to_string(in[i]); });
    ck.all(out.get(), want);
    ck.done();
  });
}

CONF_TEST(KernelConstantDataIsSetByTheHostAndReadByKernels) {
  const int n = 1024;
  std::vector<int32_t> in = ints(n, 341, -100000, 100000), lut(256);
  for (int j = 0; j < 256; ++j) lut[j] = (j * 7) % 100 - 50;
  kt::for_each_variant("memory", [&](kt::Module& m) {
    size_t lut_bytes = 0, coef_bytes = 0;
    CUdeviceptr dl = m.global("c_lut", &lut_bytes), dc = m.global("c_coef", &coef_bytes);
    EXPECT_TRUE(lut_bytes == 1024 && coef_bytes == 16);
    float coef[4] = {0};
    ASSERT_CU(cuMemcpyDtoH(coef, dc, sizeof coef));
    EXPECT_TRUE(coef[0] == 0.5f && coef[1] == 1.5f && coef[2] == -2.0f && coef[3] == 4.0f);
    ASSERT_CU(cuMemcpyHtoD(dl, lut.data(), 1024));
    kt::Buf<int32_t> din(in);
    kt::Buf<float> out(n);
    for (int round = 0; round < 2; ++round) {
      if (round == 1) {
        const float c2[4] = {-1.0f, 0.25f, 8.0f, 3.0f};
        ASSERT_CU(cuMemcpyHtoD(dc, c2, sizeof c2));
        std::memcpy(coef, c2, sizeof c2);
      }
      kt::run(m.fn("const_data"), {n / 256}, {256}, 0, din.p, out.p, n);
      std::vector<float> want(n);
      for (int i = 0; i < n; ++i) {
        int x = in[i];
        want[i] = lut[x & 255] * coef[x & 3] + coef[(x >> 2) & 3];
      }
      kt::Checker ck("const_data round " + std::to_string(round), [&](size_t i) { return std::to_string(in[i]); });
      ck.all(out.get(), want);
      ck.done();
    }
  });
}

CONF_TEST(KernelDeviceGlobalsKeepTheirValuesAcrossLaunches) {
  kt::for_each_variant("memory", [&](kt::Module& m) {
    size_t s_scale, s_table, s_out, s_counter;
    CUdeviceptr scale = m.global("d_scale", &s_scale), table = m.global("d_table", &s_table),
                outp = m.global("d_out", &s_out), counter = m.global("d_counter", &s_counter);
    EXPECT_TRUE(s_scale == 4 && s_table == 256 && s_out == 1024 && s_counter == 8);
    int sc = 0;
    ASSERT_CU(cuMemcpyDtoH(&sc, scale, 4));
    EXPECT_TRUE(sc == 3);
    std::vector<float> tab(64);
    for (int j = 0; j < 64; ++j) tab[j] = j * 0.5f - 7.0f;
    ASSERT_CU(cuMemcpyHtoD(table, tab.data(), 256));
    unsigned long long c0 = 5;
    ASSERT_CU(cuMemcpyHtoD(counter, &c0, 8));
    for (int round = 0; round < 2; ++round) {
      int s = round ? -2 : 3;
      if (round) ASSERT_CU(cuMemcpyHtoD(scale, &s, 4));
      kt::run(m.fn("device_globals"), {1}, {256}, 0);
      std::vector<int32_t> got(256), want(256);
      ASSERT_CU(cuMemcpyDtoH(got.data(), outp, 1024));
      for (int t = 0; t < 256; ++t) want[t] = (int)(tab[t & 63] * s) + t;
      kt::Checker ck("device_globals round " + std::to_string(round));
      ck.all(got, want, "d_out");
      unsigned long long c = 0;
      ASSERT_CU(cuMemcpyDtoH(&c, counter, 8));
      ck.all(std::vector<uint64_t>{c}, std::vector<uint64_t>{5ull + 32640ull * (round + 1)}, "d_counter");
      ck.done();
    }
  });
}

CONF_TEST(KernelManagedVariablesAreSharedWithTheHost) {
  kt::for_each_variant("memory", [&](kt::Module& m) {
    size_t sv = 0, sa = 0;
    CUdeviceptr v = m.global("m_value", &sv), arr = m.global("m_array", &sa);
    EXPECT_TRUE(sv == 4 && sa == 256);
    unsigned managed = 0;
    CUresult r = cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, arr);
    conf::info("managed_global_is_managed_query", r);
    conf::info_value("managed_global_is_managed", managed);
    std::vector<int32_t> init(64);
    for (int t = 0; t < 64; ++t) init[t] = t * 10 - 100;
    int v0 = 7;
    ASSERT_CU(cuMemcpyHtoD(arr, init.data(), 256));
    ASSERT_CU(cuMemcpyHtoD(v, &v0, 4));
    kt::run(m.fn("managed_vars"), {1}, {64}, 0);
    std::vector<int32_t> got(64), want(64);
    ASSERT_CU(cuMemcpyDtoH(got.data(), arr, 256));
    for (int t = 0; t < 64; ++t) want[t] = init[t] * 2 + t;
    int vv = 0;
    ASSERT_CU(cuMemcpyDtoH(&vv, v, 4));
    kt::Checker ck("managed_vars");
    ck.all(got, want, "m_array");
    ck.all(std::vector<int32_t>{vv}, std::vector<int32_t>{1007}, "m_value");
    // Managed memory is also readable from the host through the same address.
    if (r == CUDA_SUCCESS && managed) {
      const int32_t* host = reinterpret_cast<const int32_t*>(static_cast<uintptr_t>(arr));
      ck.all(std::vector<int32_t>(host, host + 64), want, "m_array read on the host");
    }
    ck.done();
  });
}

CONF_TEST(KernelGenericPointersReachEachSpaceAndIsspacepNamesIt) {
  std::vector<int32_t> in = ints(64, 351, -1000, 1000), want(128);
  for (int t = 0; t < 32; ++t) {
    auto p0 = [&](int j) { return in[t + j]; };
    auto p1 = [&](int j) { return in[(t & 7) + j] * 2; };
    auto p2 = [&](int j) { return in[(t + j) & 31] - j; };
    int s0 = 0, s1 = 0, s2 = 0;
    for (int j = 0; j < 8 - (t & 7); ++j) s0 += p0(j) * (j + 1);
    for (int j = 0; j < 8; ++j) s1 += p1(j) * (j + 1);
    for (int j = 0; j < 4; ++j) s2 += (t % 3 == 0 ? p0(j) : t % 3 == 1 ? p1(j) : p2(j)) * (j + 1);
    want[t * 4 + 0] = s0;
    want[t * 4 + 1] = s1;
    want[t * 4 + 2] = s2;
    want[t * 4 + 3] = 7;
  }
  kt::for_each_variant("memory", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in), out(128);
    kt::run(m.fn("generic_ptrs"), {1}, {32}, 0, din.p, out.p);
    kt::Checker ck("generic_ptrs");
    ck.all(out.get(), want, "sums through generic pointers; isspacep bits");
    ck.done();
  });
}
