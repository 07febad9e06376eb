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
  ASSERT_EQ(p.segment_count(), 1u);
  auto nodes = p.segment_nodes(0);
  EXPECT_EQ(std::vector<uint32_t>(nodes.begin(), nodes.end()), (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST(GraphPlan, ChainsRunInDependencyOrderWhateverTheNodesIndices) {
  // 3 -> 1 -> 0 -> 2: one chain, run from its head.
  auto p = plan_with(4, {{3, 1}, {1, 0}, {0, 2}});
  ASSERT_EQ(p.segment_count(), 1u);
  auto nodes = p.segment_nodes(0);
  EXPECT_EQ(std::vector<uint32_t>(nodes.begin(), nodes.end()), (std::vector<uint32_t>{3, 1, 0, 2}));
  EXPECT_TRUE(p.seg_roots[0]);
  EXPECT_TRUE(p.seg_sinks[0]);
}

TEST(GraphPlan, ForkAndJoinSplitSegments) {
  // 0 -> {1, 2} -> 3: the fork ends 0's chain, the join starts a new one.
  auto p = plan_with(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  ASSERT_EQ(p.segment_count(), 4u);
  size_t roots = 0, sinks = 0;
  for (bool r : p.seg_roots) roots += r;
  for (bool s : p.seg_sinks) sinks += s;
  EXPECT_EQ(roots, 1u);
  EXPECT_EQ(sinks, 1u);
  // The edges between segments are the fork's and the join's, each once.
  size_t edges = 0;
  for (size_t k = 0; k < p.segment_count(); ++k) {
    auto deps = p.segment_deps(k);
    for (uint32_t d : deps) {
      ++edges;
      EXPECT_NE(d, k);
      EXPECT_FALSE(p.seg_roots[d]);
    }
    EXPECT_EQ(deps.empty(), p.seg_sinks[k]);
  }
  EXPECT_EQ(edges, 4u);
}

TEST(GraphPlan, IndependentChainsRunInParallel) {
  auto p = plan_with(6, {{0, 1}, {1, 2}, {3, 4}, {4, 5}});
  ASSERT_EQ(p.segment_count(), 2u);
  EXPECT_TRUE(p.seg_roots[0] && p.seg_roots[1]);
}

TEST(GraphPlan, EventNodesStandAlone) {
  auto p = plan_with(3, {{0, 1}, {1, 2}}, {NodeKind::kHost, NodeKind::kEventRecord, NodeKind::kHost});
  EXPECT_EQ(p.segment_count(), 3u);
}

}  // namespace
}  // namespace cucpu
