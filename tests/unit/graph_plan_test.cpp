// Instantiation cuts the node DAG into segments (chains run by one op).
#include <gtest/gtest.h>

#include "core/graph_exec.h"

namespace cucpu {
namespace {

ExecPlan plan_with(size_t n, std::vector<std::pair<uint32_t, uint32_t>> edges,
                   std::vector<NodeKind> kinds = {}) {
  ExecPlan p;
  p.nodes.resize(n);
  for (size_t i = 0; i < kinds.size(); ++i) p.nodes[i].kind = kinds[i];
  for (auto [a, b] : edges) p.nodes[a].dependents.push_back(b);
  p.segment();
  return p;
}

TEST(GraphPlan, ChainsBecomeOneSegment) {
  auto p = plan_with(4, {{0, 1}, {1, 2}, {2, 3}});
  ASSERT_EQ(p.segments.size(), 1u);
  EXPECT_EQ(p.segments[0], (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST(GraphPlan, ForkAndJoinSplitSegments) {
  // 0 -> {1, 2} -> 3: the fork ends 0's chain, the join starts a new one.
  auto p = plan_with(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  ASSERT_EQ(p.segments.size(), 4u);
  size_t roots = 0, sinks = 0;
  for (bool r : p.seg_roots) roots += r;
  for (bool s : p.seg_sinks) sinks += s;
  EXPECT_EQ(roots, 1u);
  EXPECT_EQ(sinks, 1u);
}

TEST(GraphPlan, IndependentChainsRunInParallel) {
  auto p = plan_with(6, {{0, 1}, {1, 2}, {3, 4}, {4, 5}});
  ASSERT_EQ(p.segments.size(), 2u);
  EXPECT_TRUE(p.seg_roots[0] && p.seg_roots[1]);
}

TEST(GraphPlan, EventNodesStandAlone) {
  auto p = plan_with(3, {{0, 1}, {1, 2}}, {NodeKind::kHost, NodeKind::kEventRecord, NodeKind::kHost});
  EXPECT_EQ(p.segments.size(), 3u);
}

}  // namespace
}  // namespace cucpu
