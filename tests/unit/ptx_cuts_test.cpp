// Kernels with cuts (barriers, warp collectives) through each way the
// compiled code runs them: whole warps resolving their shuffles and votes
// in compiled code (blocks whose rows are whole warps), the per-resume-point
// loops with the runner resolving (rows of 16 threads), registers saved in
// the frame or recomputed, and .local memory kept across a barrier.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ptx/program.h"

using namespace cucpu::ptx;

namespace {

const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry shfl_modes(.param .u64 out_p)
{
  .reg .pred %p<4>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out_p];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r14, %ntid.x;
  mad.lo.u32 %r1, %r2, %r14, %r1;
  mul.lo.u32 %r3, %r1, 3;
  add.u32 %r3, %r3, 1;
  mov.u32 %r10, 5;
  mov.u32 %r11, 31;
  mov.u32 %r12, -1;
  shfl.sync.up.b32 %r4|%p1, %r3, %r10, 0, %r12;
  shfl.sync.down.b32 %r5|%p2, %r3, %r10, %r11, %r12;
  shfl.sync.bfly.b32 %r6, %r3, 6, %r11, %r12;
  shfl.sync.idx.b32 %r7, %r3, 3, 6175, %r12;
  vote.sync.ballot.b32 %r8, %p1, %r12;
  selp.u32 %r9, 1, 0, %p2;
  bar.sync 0;
  shfl.sync.bfly.b32 %r13, %r4, 1, 31, -1;
  mul.wide.u32 %rd2, %r1, 28;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  st.global.u32 [%rd3+4], %r5;
  st.global.u32 [%rd3+8], %r6;
  st.global.u32 [%rd3+12], %r7;
  st.global.u32 [%rd3+16], %r8;
  st.global.u32 [%rd3+20], %r9;
  st.global.u32 [%rd3+24], %r13;
  ret;
}

.visible .entry local_bar(.param .u64 out_p)
{
  .local .align 8 .b8 buf[16];
  .reg .pred %p<3>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<12>;
  .reg .f64 %fd<3>;
  ld.param.u64 %rd1, [out_p];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r9, %tid.z;
  mov.u32 %r10, %ntid.y;
  mad.lo.u32 %r11, %r9, %r10, %r2;
  mad.lo.u32 %r4, %r11, %r3, %r1;
  mul.wide.u32 %rd6, %r4, 32;
  add.s64 %rd7, %rd1, %rd6;
  ld.global.u64 %rd8, [%rd7+8];
  cvt.u64.u32 %rd3, %r4;
  mul.lo.u64 %rd4, %rd3, 1000003;
  st.local.u32 [buf], %r4;
  st.local.u32 [buf+4], %r1;
  st.local.u64 [buf+8], %rd4;
  setp.eq.u32 %p1, %r1, 3;
  cvt.rn.f64.u32 %fd1, %r4;
  bar.sync 0;
  ld.local.u32 %r5, [buf];
  ld.local.u32 %r6, [buf+4];
  ld.local.u64 %rd5, [buf+8];
  selp.u32 %r7, 100, 0, %p1;
  add.u32 %r8, %r5, %r6;
  add.u32 %r8, %r8, %r7;
  mul.lo.u64 %rd9, %rd8, 3;
  add.f64 %fd2, %fd1, 0d3FE0000000000000;
  bar.sync 0;
  st.global.u32 [%rd7], %r8;
  st.global.u64 [%rd7+8], %rd9;
  st.global.u64 [%rd7+16], %rd5;
  st.global.f64 [%rd7+24], %fd2;
  ret;
}

.visible .entry split_warp(.param .u64 io_p)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [io_p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r2, [%rd3];
  shfl.sync.bfly.b32 %r3, %r2, 1, 31, -1;
  add.u32 %r4, %r2, %r3;
  and.b32 %r5, %r1, 31;
  setp.lt.u32 %p1, %r5, 16;
  @%p1 bra LOW;
  shfl.sync.bfly.b32 %r6, %r4, 2, 31, 0xffff0000;
  add.u32 %r7, %r6, 1000;
  bra JOIN;
LOW:
  shfl.sync.bfly.b32 %r6, %r4, 4, 31, 0x0000ffff;
  add.u32 %r7, %r6, 2000;
JOIN:
  shfl.sync.bfly.b32 %r8, %r7, 8, 31, -1;
  add.u32 %r9, %r8, %r2;
  vote.sync.ballot.b32 %r10, %p1, -1;
  add.u32 %r9, %r9, %r10;
  st.global.u32 [%rd3], %r9;
  ret;
}

.visible .entry misaligned_between_barriers(.param .u64 p)
{
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  bar.sync 0;
  add.s64 %rd2, %rd1, 2;
  st.global.u32 [%rd2], 7;
  bar.sync 0;
  ret;
}
)";

std::shared_ptr<const Kernel> kernel(const char* entry) {
  std::string log;
  static std::shared_ptr<const Program> p = Program::parse(kPtx, &log);
  EXPECT_TRUE(p) << log;
  if (!p) return nullptr;
  auto k = p->kernel(p->find_entry(entry), &log);
  EXPECT_TRUE(k) << log;
  return k;
}

Fault launch(const Kernel& k, Dim3 block, const void* params) {
  LaunchConfig c;
  c.grid = {2, 1, 1};
  c.block = block;
  c.params = params;
  return k.run_blocks(c, 0, 2);
}

// shfl.sync's lane arithmetic for the operands shfl_modes uses, per warp.
void check_shuffles(Dim3 block) {
  auto k = kernel("shfl_modes");
  ASSERT_TRUE(k);
  const uint32_t T = block.x * block.y;
  std::vector<uint32_t> out(T * 7, 0xdeadbeefu);
  uint32_t* p = out.data();
  ASSERT_FALSE(launch(*k, block, &p));
  for (uint32_t t = 0; t < T; ++t) {
    const uint32_t l = t % 32, base = t - l;
    auto v = [&](uint32_t lane) { return 3 * (base + lane) + 1; };
    const uint32_t up = l >= 5 ? v(l - 5) : v(l);
    const uint32_t up_partner = (l ^ 1) >= 5 ? v((l ^ 1) - 5) : v(l ^ 1);
    const uint32_t* o = &out[t * 7];
    EXPECT_EQ(up, o[0]) << t;
    EXPECT_EQ(l + 5 <= 31 ? v(l + 5) : v(l), o[1]) << t;
    EXPECT_EQ(v(l ^ 6), o[2]) << t;
    EXPECT_EQ(v((l & 24) | 3), o[3]) << t;
    EXPECT_EQ(0xffffffe0u, o[4]) << t;
    EXPECT_EQ(l + 5 <= 31 ? 1u : 0u, o[5]) << t;
    EXPECT_EQ(up_partner, o[6]) << t;
  }
}

}  // namespace

TEST(PtxCuts, ShufflesAndVotesOfWholeWarpsReadTheRightLanes) { check_shuffles({64, 2, 1}); }

TEST(PtxCuts, ShufflesAndVotesReadTheRightLanesWhenRowsAreNotWholeWarps) { check_shuffles({16, 8, 1}); }

TEST(PtxCuts, RegistersAndLocalMemorySurviveBarriers) {
  auto k = kernel("local_bar");
  ASSERT_TRUE(k);
  for (Dim3 block : {Dim3{16, 4, 1}, Dim3{7, 5, 3}, Dim3{96, 1, 1}}) {
    const uint32_t T = block.x * block.y * block.z;
    struct Out {
      uint32_t sum, pad;
      uint64_t tripled, product;
      double half;
    };
    std::vector<Out> out(T);
    for (uint32_t t = 0; t < T; ++t) out[t].tripled = 1000 + t;
    Out* p = out.data();
    ASSERT_FALSE(launch(*k, block, &p));
    for (uint32_t t = 0; t < T; ++t) {
      const uint32_t x = t % block.x;
      // The second block ran over the first one's results: tripled twice.
      EXPECT_EQ(t + x + (x == 3 ? 100 : 0), out[t].sum) << t << " of a block " << block.x << "x" << block.y << "x" << block.z;
      EXPECT_EQ((1000 + t) * 9, out[t].tripled) << t;
      EXPECT_EQ(uint64_t{t} * 1000003, out[t].product) << t;
      EXPECT_EQ(t + 0.5, out[t].half) << t;
    }
  }
}

// A warp whose halves stop at different shuffles (the whole warp's rows
// of each cut go to the frames for the lanes stopped there), then meet at
// whole-warp collectives again.
TEST(PtxCuts, WarpSplitBetweenShufflesRejoinsWithTheRightValues) {
  auto k = kernel("split_warp");
  ASSERT_TRUE(k);
  for (Dim3 block : {Dim3{64, 1, 1}, Dim3{128, 1, 1}}) {
    const uint32_t T = block.x;
    std::vector<uint32_t> io(T);
    for (uint32_t t = 0; t < T; ++t) io[t] = 7 * t + 1;
    const std::vector<uint32_t> in = io;
    uint32_t* p = io.data();
    LaunchConfig c;
    c.grid = {1, 1, 1};
    c.block = block;
    c.params = &p;
    ASSERT_FALSE(k->run_blocks(c, 0, 1));
    for (uint32_t t = 0; t < T; ++t) {
      const uint32_t l = t % 32, base = t - l;
      auto r4 = [&](uint32_t lane) { return in[base + lane] + in[base + (lane ^ 1)]; };
      auto r7 = [&](uint32_t lane) { return lane < 16 ? r4(lane ^ 4) + 2000 : r4(lane ^ 2) + 1000; };
      EXPECT_EQ(r7(l ^ 8) + in[t] + 0xffffu, io[t]) << t << " of " << T;
    }
  }
}

TEST(PtxCuts, MisalignmentBetweenBarriersIsAFault) {
  auto k = kernel("misaligned_between_barriers");
  ASSERT_TRUE(k);
  alignas(8) uint32_t buf[4] = {};
  uint32_t* p = buf;
  const Fault f = launch(*k, {64, 1, 1}, &p);
  EXPECT_EQ(FaultKind::kMisalignedAddress, f.kind);
}
