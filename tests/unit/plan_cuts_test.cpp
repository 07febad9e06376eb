// The first stage of lowering a kernel (ptx/lower.h, plan_cuts): where its
// body is cut, read off the PTX alone.
#include <gtest/gtest.h>

#include <string>

#include "ptx/ast.h"
#include "ptx/lower.h"

using namespace cucpu::ptx;

namespace {

// A grid-stride loop before a barrier.
const char* kGridStrideThenBarrier = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 n)
{
.reg .pred %p<4>;
.reg .b32 %r<12>;
.reg .f32 %f<2>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [p];
ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
mov.u32 %r3, %ntid.x;
mov.u32 %r4, %ctaid.x;
mov.u32 %r5, %nctaid.x;
mad.lo.s32 %r6, %r4, %r3, %r2;
mul.lo.s32 %r7, %r5, %r3;
setp.ge.s32 %p1, %r6, %r1;
@%p1 bra DONE;
LOOP:
mul.wide.s32 %rd2, %r6, 4;
add.s64 %rd3, %rd1, %rd2;
cvt.rn.f32.s32 %f1, %r6;
st.global.f32 [%rd3], %f1;
add.s32 %r6, %r6, %r7;
setp.lt.s32 %p2, %r6, %r1;
@%p2 bra LOOP;
DONE:
bar.sync 0;
ret;
}
)";

size_t index_of(const Function& f, Op op, bool last = false) {
  size_t found = f.body.size();
  for (size_t i = 0; i < f.body.size(); ++i)
    if (f.body[i].op == op && (last || found == f.body.size())) found = i;
  return found;
}

}  // namespace

TEST(PlanCuts, BarrierAndGridStrideBackEdgeAreCutsAndNothingElse) {
  Module m;
  std::string error;
  ASSERT_TRUE(parse_module(kGridStrideThenBarrier, &m, &error)) << error;
  const Function& k = m.funcs.at(static_cast<size_t>(m.func_index.at("k")));
  const CutPlan plan = plan_cuts(k, {{"p", 0}, {"n", 8}});
  ASSERT_EQ(plan.is_cut.size(), k.body.size());
  EXPECT_TRUE(plan.any);
  const size_t bar = index_of(k, Op::kBar), back = index_of(k, Op::kBra, true);
  ASSERT_LT(bar, k.body.size());
  EXPECT_TRUE(plan.is_cut[bar]);
  EXPECT_FALSE(plan.is_round[bar]);
  EXPECT_TRUE(plan.is_cut[back]) << "the grid-stride loop's back edge is a round cut";
  EXPECT_TRUE(plan.is_round[back]);
  EXPECT_EQ(plan.round_edges.count(back), 1u);
  EXPECT_EQ(plan.round_heads.size(), 1u);
  for (size_t i = 0; i < k.body.size(); ++i) {
    EXPECT_FALSE(plan.is_yield[i]) << i;  // no spin loop
    if (i != bar && i != back) EXPECT_FALSE(plan.is_cut[i]) << i;
  }
}

TEST(PlanCuts, AKernelWithoutCollectivesOrLoopsHasNoCuts) {
  Module m;
  std::string error;
  ASSERT_TRUE(parse_module(R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .b32 %r<2>;
.reg .b64 %rd<2>;
ld.param.u64 %rd1, [p];
mov.u32 %r1, %tid.x;
st.global.u32 [%rd1], %r1;
ret;
}
)", &m, &error)) << error;
  const CutPlan plan = plan_cuts(m.funcs.at(0), {{"p", 0}});
  EXPECT_FALSE(plan.any);
  for (bool c : plan.is_cut) EXPECT_FALSE(c);
}
