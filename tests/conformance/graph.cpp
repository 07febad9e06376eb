// The graph API: nodes, edges, parameters, instantiation, launch, update, DOT.
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "harness.h"

namespace {
std::atomic<int> g_host_runs{0};
void CUDA_CB bump(void*) { g_host_runs++; }
}  // namespace

CONF_TEST(GraphNodesAndEdgesAreAddedQueriedClonedAndRemoved) {
  CUgraph g;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphCreate(&g, 1));
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUgraphNode a, b, c;
  ASSERT_CU(cuGraphAddEmptyNode(&a, g, nullptr, 0));
  CUDA_HOST_NODE_PARAMS hp{bump, nullptr};
  ASSERT_CU(cuGraphAddHostNode(&b, g, &a, 1, &hp));
  CUgraphNode ab[2] = {a, b};
  ASSERT_CU(cuGraphAddEmptyNode(&c, g, ab, 2));
  CUgraphNode dup[2] = {a, a};
  CUgraphNode x;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddEmptyNode(&x, g, dup, 2));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddEmptyNode(&x, g, nullptr, 1));
  CUDA_HOST_NODE_PARAMS nofn{nullptr, nullptr};
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddHostNode(&x, g, nullptr, 0, &nofn));
  size_t n = 0;
  ASSERT_CU(cuGraphGetNodes(g, nullptr, &n));
  EXPECT_TRUE(n == 3);
  CUgraphNode from[4], to[4];
  size_t e = 4;
  ASSERT_CU(cuGraphGetEdges(g, from, to, nullptr, &e));
  EXPECT_TRUE(e == 3 && to[3] == nullptr);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddDependencies(g, &a, &b, nullptr, 1));  // exists
  ASSERT_CU(cuGraphRemoveDependencies(g, &a, &b, nullptr, 1));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphRemoveDependencies(g, &a, &b, nullptr, 1));
  size_t roots = 0;
  ASSERT_CU(cuGraphGetRootNodes(g, nullptr, &roots));
  EXPECT_TRUE(roots == 2);
  ASSERT_CU(cuGraphAddDependencies(g, &a, &b, nullptr, 1));
  size_t nd = 0;
  ASSERT_CU(cuGraphNodeGetDependencies(c, nullptr, nullptr, &nd));
  EXPECT_TRUE(nd == 2);
  ASSERT_CU(cuGraphNodeGetDependentNodes(a, nullptr, nullptr, &nd));
  EXPECT_TRUE(nd == 2);
  CUgraphNodeType t;
  ASSERT_CU(cuGraphNodeGetType(b, &t));
  EXPECT_TRUE(t == CU_GRAPH_NODE_TYPE_HOST);
  CUDA_HOST_NODE_PARAMS got{};
  ASSERT_CU(cuGraphHostNodeGetParams(b, &got));
  EXPECT_TRUE(got.fn == bump);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphHostNodeGetParams(a, &got));  // wrong node type
  CUgraph clone;
  ASSERT_CU(cuGraphClone(&clone, g));
  CUgraphNode in_clone;
  ASSERT_CU(cuGraphNodeFindInClone(&in_clone, b, clone));
  ASSERT_CU(cuGraphNodeGetType(in_clone, &t));
  EXPECT_TRUE(t == CU_GRAPH_NODE_TYPE_HOST);
  ASSERT_CU(cuGraphDestroyNode(c));
  ASSERT_CU(cuGraphGetNodes(g, nullptr, &n));
  EXPECT_TRUE(n == 2);
  ASSERT_CU(cuGraphDestroy(clone));
  ASSERT_CU(cuGraphDestroy(g));
}

CONF_TEST(GraphWithACycleIsRefusedByInstantiateUntilTheCycleIsBroken) {
  CUgraph g;
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUDA_HOST_NODE_PARAMS hp{bump, nullptr};
  CUgraphNode a, b, c;
  ASSERT_CU(cuGraphAddHostNode(&a, g, nullptr, 0, &hp));
  ASSERT_CU(cuGraphAddHostNode(&b, g, &a, 1, &hp));
  ASSERT_CU(cuGraphAddHostNode(&c, g, &b, 1, &hp));
  ASSERT_CU(cuGraphAddDependencies(g, &c, &a, nullptr, 1));  // a -> b -> c -> a
  CUgraphExec e = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphInstantiate(&e, g, 0));
  CUgraph clone;
  ASSERT_CU(cuGraphClone(&clone, g));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphInstantiate(&e, clone, 0));
  ASSERT_CU(cuGraphRemoveDependencies(g, &c, &a, nullptr, 1));
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  const int before = g_host_runs.load();
  ASSERT_CU(cuGraphLaunch(e, s));
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(g_host_runs.load() - before == 3);
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuGraphDestroy(clone));
  ASSERT_CU(cuGraphDestroy(g));
}

CONF_TEST(GraphOfSetCopyAndChildRunsAndTakesParameterUpdates) {
  CUdeviceptr d;
  ASSERT_CU(cuMemAlloc(&d, 1024));
  unsigned char* host = nullptr;
  ASSERT_CU(cuMemAllocHost(reinterpret_cast<void**>(&host), 1024));
  CUgraph g;
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = d;
  ms.value = 0x3c;
  ms.elementSize = 1;
  ms.width = 1024;
  ms.height = 1;
  CUgraphNode set, copy, host_node, child;
  ASSERT_CU(cuGraphAddMemsetNode(&set, g, nullptr, 0, &ms, conf::primary()));
  CUDA_MEMCPY3D cp{};
  cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  cp.srcDevice = d;
  cp.dstMemoryType = CU_MEMORYTYPE_HOST;
  cp.dstHost = host;
  cp.WidthInBytes = 1024;
  cp.Height = 1;
  cp.Depth = 1;
  ASSERT_CU(cuGraphAddMemcpyNode(&copy, g, &set, 1, &cp, conf::primary()));
  CUgraph sub;
  ASSERT_CU(cuGraphCreate(&sub, 0));
  CUDA_HOST_NODE_PARAMS hp{bump, nullptr};
  ASSERT_CU(cuGraphAddHostNode(&host_node, sub, nullptr, 0, &hp));
  ASSERT_CU(cuGraphAddChildGraphNode(&child, g, &copy, 1, sub));
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  g_host_runs = 0;
  ASSERT_CU(cuGraphLaunch(e, s));
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(host[0] == 0x3c && host[1023] == 0x3c && g_host_runs == 1);
  // Update the exec's memset value in place, then through cuGraphExecUpdate.
  ms.value = 0x5d;
  ASSERT_CU(cuGraphExecMemsetNodeSetParams(e, set, &ms, conf::primary()));
  ASSERT_CU(cuGraphLaunch(e, s));
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(host[0] == 0x5d);
  ms.value = 0x6e;
  ASSERT_CU(cuGraphMemsetNodeSetParams(set, &ms));
  CUgraphExecUpdateResultInfo info{};
  ASSERT_CU(cuGraphExecUpdate(e, g, &info));
  EXPECT_TRUE(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
  ASSERT_CU(cuGraphLaunch(e, s));
  ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_TRUE(host[0] == 0x6e && g_host_runs == 3);
  ms.elementSize = 3;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphMemsetNodeSetParams(set, &ms));
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuGraphDestroy(sub));
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuMemFreeHost(host));
  ASSERT_CU(cuMemFree(d));
}

CONF_TEST(GraphEventNodesRunAndDotPrintWritesADigraph) {
  CUgraph g;
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUevent ev;
  ASSERT_CU(cuEventCreate(&ev, 0));
  CUgraphNode rec, wait;
  ASSERT_CU(cuGraphAddEventRecordNode(&rec, g, nullptr, 0, ev));
  ASSERT_CU(cuGraphAddEventWaitNode(&wait, g, &rec, 1, ev));
  CUevent got = nullptr;
  ASSERT_CU(cuGraphEventRecordNodeGetEvent(rec, &got));
  EXPECT_TRUE(got == ev);
  CUgraphNode bad;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphAddEventRecordNode(&bad, g, nullptr, 0, nullptr));
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuGraphLaunch(e, s));
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuEventQuery(ev));
  const char* path = "/tmp/cucpu_conformance_graph.dot";
  ASSERT_CU(cuGraphDebugDotPrint(g, path, CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(text.str().find("digraph") != std::string::npos);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphDebugDotPrint(g, nullptr, 0));
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuEventDestroy(ev));
  ASSERT_CU(cuGraphDestroy(g));
}

CONF_TEST(GraphGenericNodeCallsAddSetAndUpdateNodes) {
  CUgraph g;
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUdeviceptr d;
  ASSERT_CU(cuMemAlloc(&d, 256));
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEMSET;
  p.memset.dst = d;
  p.memset.value = 0x42;
  p.memset.elementSize = 1;
  p.memset.width = 256;
  p.memset.height = 1;
  p.memset.ctx = conf::primary();
  CUgraphNode set, host;
  ASSERT_CU(cuGraphAddNode(&set, g, nullptr, nullptr, 0, &p));
  CUgraphNodeParams h{};
  h.type = CU_GRAPH_NODE_TYPE_HOST;
  h.host.fn = bump;
  ASSERT_CU(cuGraphAddNode(&host, g, &set, nullptr, 1, &h));
  CUgraphNodeType t;
  ASSERT_CU(cuGraphNodeGetType(set, &t));
  EXPECT_TRUE(t == CU_GRAPH_NODE_TYPE_MEMSET);
  p.memset.value = 0x43;
  ASSERT_CU(cuGraphNodeSetParams(set, &p));
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  p.memset.value = 0x44;
  ASSERT_CU(cuGraphExecNodeSetParams(e, set, &p));
  g_host_runs = 0;
  ASSERT_CU(cuGraphLaunch(e, nullptr));
  ASSERT_CU(cuStreamSynchronize(nullptr));
  unsigned char v = 0;
  ASSERT_CU(cuMemcpyDtoH(&v, d + 255, 1));
  EXPECT_TRUE(v == 0x44 && g_host_runs == 1);
  CUgraphNodeParams k{};
  k.type = CU_GRAPH_NODE_TYPE_KERNEL;  // no function: no kernel node anywhere
  CUgraphNode kn;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuGraphAddNode(&kn, g, nullptr, nullptr, 0, &k));  // as driver 580
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuMemFree(d));
}

// cuGraphNodeSetEnabled: a disabled memset or memcpy node does nothing in
// later launches; a host node cannot be disabled.
CONF_TEST(DisabledGraphNodeDoesNothingUntilEnabledAgain) {
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUdeviceptr buf;
  ASSERT_CU(cuMemAlloc(&buf, 64));
  ASSERT_CU(cuMemsetD8(buf, 0, 64));
  CUgraph g;
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUDA_MEMSET_NODE_PARAMS p{};
  p.dst = buf;
  p.value = 0x11;
  p.elementSize = 1;
  p.width = 64;
  p.height = 1;
  CUgraphNode set, host;
  ASSERT_CU(cuGraphAddMemsetNode(&set, g, nullptr, 0, &p, conf::primary()));
  CUDA_HOST_NODE_PARAMS hp{[](void*) {}, nullptr};
  ASSERT_CU(cuGraphAddHostNode(&host, g, &set, 1, &hp));
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  unsigned on = 7;
  ASSERT_CU(cuGraphNodeGetEnabled(e, set, &on));
  EXPECT_TRUE(on == 1);
  ASSERT_CU(cuGraphNodeSetEnabled(e, set, 0));
  ASSERT_CU(cuGraphNodeGetEnabled(e, set, &on));
  EXPECT_TRUE(on == 0);
  ASSERT_CU(cuGraphLaunch(e, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  unsigned char h[64];
  ASSERT_CU(cuMemcpyDtoH(h, buf, 64));
  EXPECT_TRUE(h[0] == 0 && h[63] == 0);
  ASSERT_CU(cuGraphNodeSetEnabled(e, set, 1));
  ASSERT_CU(cuGraphLaunch(e, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  ASSERT_CU(cuMemcpyDtoH(h, buf, 64));
  EXPECT_TRUE(h[0] == 0x11 && h[63] == 0x11);
  conf::info("graph_node_enable.host_node", cuGraphNodeSetEnabled(e, host, 0));
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuMemFree(buf));
}

namespace {
// A graph of one memset node setting 64 bytes at d to `value`, inside
// `depth` levels of child graphs.
CUgraph memset_graph(CUdeviceptr d, unsigned value, int depth) {
  CUgraph g;
  if (cuGraphCreate(&g, 0) != CUDA_SUCCESS) throw conf::Failure{"cuGraphCreate"};
  CUgraphNode n;
  if (depth == 0) {
    CUDA_MEMSET_NODE_PARAMS ms{};
    ms.dst = d;
    ms.value = value;
    ms.elementSize = 1;
    ms.width = 64;
    ms.height = 1;
    if (cuGraphAddMemsetNode(&n, g, nullptr, 0, &ms, conf::primary()) != CUDA_SUCCESS) throw conf::Failure{"memset node"};
  } else {
    CUgraph inner = memset_graph(d, value, depth - 1);
    if (cuGraphAddChildGraphNode(&n, g, nullptr, 0, inner) != CUDA_SUCCESS) throw conf::Failure{"child node"};
    cuGraphDestroy(inner);
  }
  return g;
}
}  // namespace

// An instantiated child graph node takes new parameters from a graph of
// the same shape, child graphs within it included; another shape is refused.
CONF_TEST(GraphExecChildGraphNodeTakesParametersFromAGraphOfItsShape) {
  CUdeviceptr d;
  ASSERT_CU(cuMemAlloc(&d, 64));
  CUgraph g, sub = memset_graph(d, 1, 1);
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUgraphNode child, other;
  ASSERT_CU(cuGraphAddChildGraphNode(&child, g, nullptr, 0, sub));
  CUDA_HOST_NODE_PARAMS hp{[](void*) {}, nullptr};
  ASSERT_CU(cuGraphAddHostNode(&other, g, &child, 1, &hp));
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  unsigned char out[64];
  ASSERT_CU(cuGraphLaunch(e, s));
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuMemcpyDtoH(out, d, 64));
  EXPECT_TRUE(out[0] == 1 && out[63] == 1);
  CUgraph fresh = memset_graph(d, 2, 1);
  ASSERT_CU(cuGraphExecChildGraphNodeSetParams(e, child, fresh));
  ASSERT_CU(cuGraphLaunch(e, s));
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuMemcpyDtoH(out, d, 64));
  EXPECT_TRUE(out[0] == 2 && out[63] == 2);
  CUgraph deeper = memset_graph(d, 3, 2);  // one level more: another shape
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphExecChildGraphNodeSetParams(e, child, deeper));
  CUgraph flat = memset_graph(d, 3, 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphExecChildGraphNodeSetParams(e, child, flat));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphExecChildGraphNodeSetParams(e, other, fresh));  // no child node
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGraphExecChildGraphNodeSetParams(e, child, nullptr));
  ASSERT_CU(cuGraphLaunch(e, s));  // the refused calls changed nothing
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuMemcpyDtoH(out, d, 64));
  EXPECT_TRUE(out[0] == 2);
  for (CUgraph x : {sub, fresh, deeper, flat, g}) ASSERT_CU(cuGraphDestroy(x));
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuMemFree(d));
}
