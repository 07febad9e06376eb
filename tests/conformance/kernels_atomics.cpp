// Atomic kernels of tests/kernels/atomics.cu: every slot's final value is
// order independent, and the old values returned by add, exchange and inc
// are checked as multisets.
#include <algorithm>
#include <map>

#include "kernels_util.h"

namespace {

uint32_t and_mask(int i) { return i % 3 == 0 ? ~(1u << ((i * 13) % 32)) : ~0u; }
uint32_t or_bits(int i) { return i % 4 == 0 ? 1u << ((i * 5) % 32) : 0u; }
int minmax_val(int i) { return (i * 7919) % 1000 - 500; }
uint32_t uminmax_val(int i) { return (uint32_t)i * 2654435761u; }
uint64_t u64_val(int i) { return (uint64_t)i * 0x9e3779b97f4a7c15ull; }

uint32_t inc_wrap(uint32_t old, uint32_t lim) { return old >= lim ? 0 : old + 1; }
uint32_t dec_wrap(uint32_t old, uint32_t lim) { return (old == 0 || old > lim) ? lim : old - 1; }

uint16_t half_bits(float f) {  // exact for the small integers and halves used here
  if (f == 0) return 0;
  int e;
  float m = std::frexp(f, &e);  // f = m * 2^e, m in [0.5, 1)
  return (uint16_t)((e - 1 + 15) << 10 | ((uint32_t)(m * 2048) - 1024));
}

}  // namespace

CONF_TEST(KernelGlobalAtomicsGiveOrderIndependentResults) {
  const int blocks = 4, bs = 128, N = blocks * bs;
  const std::vector<int32_t> gi0 = {10, 1000000, 1 << 30, -(1 << 30), -1, 0x100, 0x0f0f0f0f, -77, 5};
  const std::vector<uint32_t> gu0 = {0, 5, 0xffffffffu, 0, 0, 0};
  const std::vector<uint64_t> g640 = {0, 0x1234, ~0ull, 0, 0, (uint64_t)INT64_MAX, (uint64_t)INT64_MIN};
  std::vector<int32_t> wi = gi0;
  std::vector<uint32_t> wu = gu0;
  std::vector<uint64_t> w64 = g640;
  float wf = 0;
  double wd = 0;
  for (int i = 0; i < N; ++i) {
    wi[0] += 1;
    wi[1] = (int32_t)((uint32_t)wi[1] - (uint32_t)i);
    wi[2] = std::min(wi[2], minmax_val(i));
    wi[3] = std::max(wi[3], minmax_val(i));
    wi[4] = (int32_t)((uint32_t)wi[4] & and_mask(i));
    wi[5] = (int32_t)((uint32_t)wi[5] | or_bits(i));
    wi[6] = (int32_t)((uint32_t)wi[6] ^ (uint32_t)(i * 0x9e3779b9u));
    wi[8] = (int32_t)((uint32_t)wi[8] + (uint32_t)i);
    wu[0] = inc_wrap(wu[0], 17);
    wu[1] = dec_wrap(wu[1], 9);
    wu[2] = std::min(wu[2], uminmax_val(i));
    wu[3] = std::max(wu[3], uminmax_val(i));
    wu[4] += 1;
    wu[5] += 2;
    w64[0] += ((uint64_t)i << 32) | 1;
    w64[1] ^= u64_val(i);
    w64[2] = std::min(w64[2], u64_val(i));
    w64[3] = std::max(w64[3], u64_val(i));
    w64[4] |= 1ull << (i % 64);
    w64[5] = (uint64_t)std::min((int64_t)w64[5], (int64_t)u64_val(i));
    w64[6] = (uint64_t)std::max((int64_t)w64[6], (int64_t)u64_val(i));
    wf += (i % 8) * 0.25f;
    wd += i * 0.5;
  }
  kt::for_each_variant("atomics", [&](kt::Module& m) {
    kt::Buf<int32_t> gi(gi0), old_add(N), old_exch(N);
    kt::Buf<uint32_t> gu(gu0), old_inc(N);
    kt::Buf<uint64_t> g64(g640);
    kt::Buf<float> gf(1);
    kt::Buf<double> gd(1);
    kt::Buf<uint16_t> gh(4);
    kt::run(m.fn("atomics_global"), {blocks}, {bs}, 0, gi.p, gu.p, g64.p, gf.p, gd.p, gh.p, old_add.p, old_exch.p,
            old_inc.p);
    std::vector<int32_t> got_i = gi.get();
    kt::Checker ck("atomics_global");
    std::vector<int32_t> exch_final = {got_i[7]};
    got_i[7] = wi[7] = 0;  // exchange: checked below as a multiset
    ck.ops(got_i, wi, 1, {"add", "sub", "min", "max", "and", "or", "xor", "exch", "cas-add"});
    ck.ops(gu.get(), wu, 1, {"inc", "dec", "umin", "umax", "add_block", "add_system"});
    ck.ops(g64.get(), w64, 1, {"add.u64", "cas-xor.u64", "min.u64", "max.u64", "or.u64", "min.s64", "max.s64"});
    ck.all(gf.get(), std::vector<float>{wf}, "add.f32");
    ck.all(gd.get(), std::vector<double>{wd}, "add.f64");
    ck.all(gh.get(), std::vector<uint16_t>{half_bits((float)N), 0, half_bits(N * 1.5f), half_bits(N * 0.5f)},
           "add.f16 / add.f16x2");
    // add returns each of 10 .. 10 + N - 1 once.
    std::vector<int32_t> adds = old_add.get();
    std::sort(adds.begin(), adds.end());
    std::vector<int32_t> seq(N);
    for (int i = 0; i < N; ++i) seq[i] = 10 + i;
    ck.all(adds, seq, "add old values (sorted)");
    // exch: the old values plus the final value are the initial value plus
    // every thread's id, once each.
    std::vector<int32_t> ex = old_exch.get();
    ex.push_back(exch_final[0]);
    std::sort(ex.begin(), ex.end());
    std::vector<int32_t> ids = {-77};
    for (int i = 0; i < N; ++i) ids.push_back(i);
    std::sort(ids.begin(), ids.end());
    ck.all(ex, ids, "exch chain (sorted)");
    // inc from 0 with limit 17 hands out 0..17 cyclically.
    std::vector<uint32_t> inc = old_inc.get(), winc(N);
    std::sort(inc.begin(), inc.end());
    for (int i = 0; i < N; ++i) winc[i] = (uint32_t)(i % 18);
    std::sort(winc.begin(), winc.end());
    ck.all(inc, winc, "inc old values (sorted)");
    ck.done();
  });
}

CONF_TEST(KernelSharedAtomicsGiveOrderIndependentResults) {
  const int blocks = 3, bs = 256, N = blocks * bs;
  std::vector<uint64_t> want(16 * blocks);
  for (int b = 0; b < blocks; ++b) {
    int32_t si[8] = {0, 1000000, 1 << 30, -(1 << 30), -1, 0, 0x12345678, 0};
    uint32_t su[3] = {0, 5, 0};
    uint64_t s64[3] = {0, 0, ~0ull};
    float sf = 0;
    double sd = 0;
    for (int t = 0; t < bs; ++t) {
      int i = b * bs + t;
      si[0] += 1;
      si[1] -= t;
      si[2] = std::min(si[2], minmax_val(i));
      si[3] = std::max(si[3], minmax_val(i));
      si[4] = (int32_t)((uint32_t)si[4] & and_mask(i));
      si[5] = (int32_t)((uint32_t)si[5] | or_bits(i));
      si[6] = (int32_t)((uint32_t)si[6] ^ (uint32_t)(i * 0x9e3779b9u));
      si[7] += t;
      su[0] = inc_wrap(su[0], 17);
      su[1] = dec_wrap(su[1], 9);
      su[2] = std::max(su[2], uminmax_val(i));
      s64[0] += (uint64_t)t << 33;
      s64[1] += u64_val(i);
      s64[2] = std::min(s64[2], u64_val(i));
      sf += (t % 4) * 0.5f;
      sd += t * 0.25;
    }
    uint64_t* o = &want[b * 16];
    for (int j = 0; j < 8; ++j) o[j] = (uint32_t)si[j];
    for (int j = 0; j < 3; ++j) o[8 + j] = su[j];
    for (int j = 0; j < 3; ++j) o[11 + j] = s64[j];
    o[14] = kt::bits_of(sf);
    o[15] = kt::bits_of(sd);
  }
  kt::for_each_variant("atomics", [&](kt::Module& m) {
    kt::Buf<uint64_t> out(16 * blocks);
    kt::Buf<int32_t> old_add(N);
    kt::run(m.fn("atomics_shared"), {blocks}, {bs}, 0, out.p, old_add.p);
    kt::Checker ck("atomics_shared");
    std::vector<uint64_t> got = out.get();
    // Compare per slot across blocks: op k of block b at [b * 16 + k].
    std::vector<uint64_t> g2(16 * blocks), w2(16 * blocks);
    for (int b = 0; b < blocks; ++b)
      for (int k = 0; k < 16; ++k) {
        g2[k * blocks + b] = got[b * 16 + k];
        w2[k * blocks + b] = want[b * 16 + k];
      }
    ck.ops(g2, w2, blocks,
           {"add", "sub", "min", "max", "and", "or", "xor", "cas-add", "inc", "dec", "umax", "add.u64", "cas-add.u64",
            "min.u64", "add.f32", "add.f64"});
    std::vector<int32_t> adds = old_add.get(), seq(N);
    for (int b = 0; b < blocks; ++b) std::sort(adds.begin() + b * bs, adds.begin() + (b + 1) * bs);
    for (int i = 0; i < N; ++i) seq[i] = i % bs;
    ck.all(adds, seq, "shared add old values per block (sorted)");
    ck.done();
  });
}

CONF_TEST(KernelHistogramCountsEveryByte) {
  const int n = 1 << 16;
  std::vector<uint8_t> data(n);
  kt::Rng rng(401);
  for (int i = 0; i < n; ++i) data[i] = (uint8_t)(i % 7 == 0 ? 42 : (rng.u32() % 97) * (rng.u32() % 3));
  std::vector<uint32_t> want(256, 0);
  for (uint8_t v : data) ++want[v];
  kt::for_each_variant("atomics", [&](kt::Module& m) {
    kt::Buf<uint8_t> dd(data);
    kt::Buf<uint32_t> bins(256);
    kt::run(m.fn("histogram"), {20}, {256}, 0, dd.p, bins.p, n);
    kt::Checker ck("histogram", [](size_t i) { return "bin " + std::to_string(i); });
    ck.all(bins.get(), want, "bins");
    ck.done();
  });
}

CONF_TEST(KernelThreadfenceLetsTheLastBlockSeeEveryPartial) {
  const int blocks = 37;
  std::vector<int32_t> in(blocks * 256);
  kt::Rng rng(411);
  long long total = 0;
  for (auto& v : in) total += (v = rng.range(-1000, 1000));
  kt::for_each_variant("atomics", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in), partial(blocks), result(1);
    kt::Buf<uint32_t> last(1);
    for (int round = 0; round < 3; ++round) {  // the ticket counter resets itself
      result.zero();
      kt::run(m.fn("fence_reduce"), {blocks}, {256}, 0, din.p, partial.p, result.p, last.p);
      std::vector<int32_t> r = result.get();
      uint32_t lb = last.get()[0];
      if (r[0] != (int32_t)total || lb >= (uint32_t)blocks)
        throw conf::Failure{"fence_reduce round " + std::to_string(round) + ": got " + std::to_string(r[0]) +
                            " from block " + std::to_string(lb) + ", want " + std::to_string(total)};
    }
  });
}

// Many blocks reduce into the same few words with atomics whose results
// are unused (on cucpu, combined per worker before they reach memory): each
// word ends as every order of the updates would leave it.
CONF_TEST(KernelGridReductionsIntoFewWordsLoseNoUpdate) {
  const int blocks = 300, n = blocks * 128;
  std::vector<int32_t> in(n);
  kt::Rng rng(421);
  for (auto& v : in) v = rng.range(-50, 50);
  std::vector<int32_t> doubled(n);
  float fsum = 0;
  uint32_t usum = 0, bits = 0;
  uint64_t umax64 = 0;
  int32_t smin = INT32_MAX;
  double dsum = 0;
  for (int b = 0; b < blocks; ++b) {
    int32_t s = 0;
    for (int t = 0; t < 128; ++t) {
      s += in[b * 128 + t];
      doubled[b * 128 + t] = 2 * in[b * 128 + t];
    }
    fsum += static_cast<float>(s);  // integers below 2^24: exact in every order
    usum += static_cast<uint32_t>(s);
    umax64 = std::max<uint64_t>(umax64, static_cast<uint64_t>(b) * 1000 + static_cast<uint32_t>(s & 255));
    smin = std::min(smin, s - b);
    bits |= 1u << (b % 32);
    dsum += s * 0.5;
  }
  kt::for_each_variant("atomics", [&](kt::Module& m) {
    kt::Buf<int32_t> din(in), dd(n), dsmin(std::vector<int32_t>{INT32_MAX});
    kt::Buf<float> dfsum(1);
    kt::Buf<uint32_t> dusum(1), dbits(1);
    kt::Buf<uint64_t> dumax(1);
    kt::Buf<double> ddsum(1);
    kt::run(m.fn("grid_reductions"), {blocks}, {128}, 0, din.p, dd.p, dfsum.p, dusum.p, dumax.p, dsmin.p, dbits.p,
            ddsum.p);
    kt::Checker ck("grid_reductions");
    ck.all(dd.get(), doubled, "plain stores before the reductions");
    ck.all(dfsum.get(), std::vector<float>{fsum}, "f32 add");
    ck.all(dusum.get(), std::vector<uint32_t>{usum}, "u32 add");
    ck.all(dumax.get(), std::vector<uint64_t>{umax64}, "u64 max");
    ck.all(dsmin.get(), std::vector<int32_t>{smin}, "s32 min");
    ck.all(dbits.get(), std::vector<uint32_t>{bits}, "b32 or");
    ck.all(ddsum.get(), std::vector<double>{dsum}, "f64 add");
    ck.done();
  });
}

// An atomic that returns the old value, after the thread's own reduction
// to the same word, sees that reduction; nothing is lost.
CONF_TEST(KernelAtomicReadAfterReductionSeesIt) {
  const int blocks = 500;
  kt::for_each_variant("atomics", [&](kt::Module& m) {
    kt::Buf<uint32_t> counter(1), min_seen(std::vector<uint32_t>{UINT32_MAX});
    kt::run(m.fn("reduce_then_read"), {blocks}, {64}, 0, counter.p, min_seen.p);
    const uint32_t total = counter.get()[0], seen = min_seen.get()[0];
    conf::info_value("reduce_then_read.total", total);
    if (total != 2 * blocks || seen < 1)
      throw conf::Failure{"reduce_then_read: counter " + std::to_string(total) + " (want " +
                          std::to_string(2 * blocks) + "), least old value " + std::to_string(seen) + " (want >= 1)"};
  });
}

// A plain store after a reduction to the same word, in one thread: the
// word ends as the store wrote it.
CONF_TEST(KernelStoreAfterReductionWins) {
  kt::for_each_variant("atomics", [&](kt::Module& m) {
    kt::Buf<uint32_t> word(1);
    kt::run(m.fn("reduce_then_store"), {1}, {32}, 0, word.p);
    const uint32_t w = word.get()[0];
    conf::info_value("reduce_then_store.word", w);
    if (w != 7) throw conf::Failure{"reduce_then_store: word " + std::to_string(w) + ", want 7"};
  });
}
