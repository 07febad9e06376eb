// Launch API behaviour (tests/kernels/module_api.cu): configuration limits,
// dynamic shared memory, malformed launches, cuLaunchKernelEx, launches
// captured into graphs or added as kernel nodes, and kernels ordered across
// streams by events.
#include <cstring>

#include "kernels_util.h"

namespace {
const char* kModulePtx = "ptx/module_api.sm90.ptx";

CUresult launch_add_one(CUfunction f, kt::Dim grid, kt::Dim block, CUdeviceptr p, int n, unsigned shmem = 0) {
  return kt::launch(f, grid, block, shmem, nullptr, p, n);
}

int device_attr(CUdevice_attribute a) {
  CUdevice d;
  int v = -1;
  ASSERT_CU(cuDeviceGet(&d, 0));
  ASSERT_CU(cuDeviceGetAttribute(&v, a, d));
  return v;
}
}  // namespace

CONF_TEST(LaunchShapesPastTheLimitsAreRefusedWithoutStickyError) {
  kt::Module m(kModulePtx);
  CUfunction f = m.fn("add_one");
  kt::Buf<int32_t> buf(4096);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch_add_one(f, {1}, {1025}, buf.p, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch_add_one(f, {1}, {32, 32, 2}, buf.p, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch_add_one(f, {1}, {1, 1, 65}, buf.p, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch_add_one(f, {0}, {32}, buf.p, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch_add_one(f, {1, 0}, {32}, buf.p, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch_add_one(f, {1, 1, 0}, {32}, buf.p, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch_add_one(f, {1}, {0}, buf.p, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch_add_one(f, {1, 65536}, {32}, buf.p, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch_add_one(f, {1, 1, 65536}, {32}, buf.p, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, launch_add_one(f, {0x80000000u}, {32}, buf.p, 4096));
  // The largest legal shapes run, and the failed launches above left no
  // sticky error behind.
  ASSERT_CU(launch_add_one(f, {4}, {1024}, buf.p, 4096));
  ASSERT_CU(launch_add_one(f, {1, 65535}, {1}, buf.p, 0));
  ASSERT_CU(launch_add_one(f, {1, 2, 65535}, {1}, buf.p, 0));
  ASSERT_CU(launch_add_one(f, {1}, {1, 1, 64}, buf.p, 0));
  ASSERT_CU(launch_add_one(f, {1}, {1, 1024, 1}, buf.p, 0));
  ASSERT_CU(cuCtxSynchronize());
  std::vector<int32_t> got = buf.get();
  EXPECT_TRUE(got[0] == 1 && got[1] == 1 && got[4095] == 1);
}

CONF_TEST(LaunchAboveTheLaunchBoundsIsRefused) {
  kt::Module m(kModulePtx);
  CUfunction f = m.fn("bounded");
  kt::Buf<int32_t> buf(256);
  CUresult r = kt::launch(f, {1}, {256}, 0, nullptr, buf.p);
  conf::info("launch_above_launch_bounds", r);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, r);
  ASSERT_CU(kt::launch(f, {2}, {128}, 0, nullptr, buf.p));
  ASSERT_CU(cuCtxSynchronize());
  std::vector<int32_t> got = buf.get();
  EXPECT_TRUE(got[0] == 17 && got[255] == 127 + 17);
}

CONF_TEST(LaunchDynamicSharedMemoryWorksUpToTheSetLimit) {
  kt::Module m(kModulePtx);
  CUfunction f = m.fn("dyn_smem");
  const int n = 25000;  // 100000 bytes
  kt::Buf<int32_t> out(n);
  CUresult r = kt::launch(f, {1}, {256}, 48 * 1024 + 4, nullptr, out.p, 12289);
  conf::info("launch_dynamic_shared_above_48k_without_attribute", r);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, r);
  ASSERT_CU(kt::launch(f, {1}, {256}, 48 * 1024, nullptr, out.p, 12288));
  ASSERT_CU(cuCtxSynchronize());
  ASSERT_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, n * 4));
  EXPECT_CU(CUDA_SUCCESS, kt::launch(f, {2}, {256}, n * 4, nullptr, out.p, n));
  ASSERT_CU(cuCtxSynchronize());
  std::vector<int32_t> got = out.get(), want(n);
  for (int j = 0; j < n; ++j) want[j] = (n - 1 - j) * 3 + 1;
  kt::Checker ck("dyn_smem 100000 bytes");
  ck.all(got, want, "reversed");
  ck.done();
  r = kt::launch(f, {1}, {256}, n * 4 + 4, nullptr, out.p, n);
  conf::info("launch_dynamic_shared_above_attribute", r);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, r);
  const int optin = device_attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  r = kt::launch(f, {1}, {256}, (unsigned)optin + 1024, nullptr, out.p, 1);
  conf::info("launch_dynamic_shared_above_device_optin", r);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, r);
  ASSERT_CU(cuCtxSynchronize());
}

CONF_TEST(LaunchMalformedArgumentsAreRefusedWithoutStickyError) {
  kt::Module m(kModulePtx);
  CUfunction f = m.fn("add_one");
  kt::Buf<int32_t> buf(32);
  int n = 32;
  void* params[] = {&buf.p, &n};
  CUresult r = cuLaunchKernel(nullptr, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
  conf::info("launch_null_function", r);
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, r);
  r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
  conf::info("launch_null_params_for_kernel_with_params", r);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, r);
  unsigned char packed[16];
  std::memcpy(packed, &buf.p, 8);
  std::memcpy(packed + 8, &n, 4);
  size_t size = 12;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, extra);
  conf::info("launch_params_and_extra", r);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, r);
  ASSERT_CU(cuCtxSynchronize());
  // A kernel without parameters needs no parameter array.
  ASSERT_CU(cuLaunchKernel(m.fn("no_params"), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
  // The extra form with the right size works, and nothing above was sticky.
  buf.zero();
  ASSERT_CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, extra));
  ASSERT_CU(cuCtxSynchronize());
  std::vector<int32_t> got = buf.get();
  EXPECT_TRUE(got[0] == 1 && got[31] == 1);
}

CONF_TEST(LaunchKernelExRunsOnItsStreamAndRefusesBadShapes) {
  kt::Module m(kModulePtx);
  CUfunction f = m.fn("scale_copy");
  const int n = 300;
  std::vector<int32_t> in(n);
  for (int i = 0; i < n; ++i) in[i] = i - 150;
  kt::Buf<int32_t> src(in), dst(n);
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUlaunchConfig cfg{};
  cfg.gridDimX = 3;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = s;
  int k = -7, count = n;
  void* params[] = {&src.p, &dst.p, &k, &count};
  ASSERT_CU(cuLaunchKernelEx(&cfg, f, params, nullptr));
  ASSERT_CU(cuStreamSynchronize(s));
  std::vector<int32_t> got = dst.get();
  for (int i = 0; i < n; ++i)
    if (got[i] != in[i] * -7) throw conf::Failure{"cuLaunchKernelEx: element " + std::to_string(i)};
  cfg.blockDimX = 2048;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernelEx(&cfg, f, params, nullptr));
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(LaunchCapturedIntoAGraphRunsOnlyWhenTheGraphDoes) {
  kt::Module m(kModulePtx);
  CUfunction add = m.fn("add_one"), scale = m.fn("scale_copy");
  const int n = 1000;
  kt::Buf<int32_t> a(n), b(n);
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  int count = n, k = 3;
  ASSERT_CU(kt::launch(add, {(n + 255) / 256}, {256}, 0, s, a.p, count));
  ASSERT_CU(kt::launch(add, {(n + 255) / 256}, {256}, 0, s, a.p, count));
  ASSERT_CU(kt::launch(scale, {(n + 255) / 256}, {256}, 0, s, a.p, b.p, k, count));
  CUgraph g = nullptr;
  ASSERT_CU(cuStreamEndCapture(s, &g));
  size_t nodes = 0;
  ASSERT_CU(cuGraphGetNodes(g, nullptr, &nodes));
  EXPECT_TRUE(nodes == 3);
  std::vector<CUgraphNode> list(nodes);
  ASSERT_CU(cuGraphGetNodes(g, list.data(), &nodes));
  for (CUgraphNode node : list) {
    CUgraphNodeType t;
    ASSERT_CU(cuGraphNodeGetType(node, &t));
    EXPECT_TRUE(t == CU_GRAPH_NODE_TYPE_KERNEL);
  }
  // Launching the captured kernels did not run them.
  EXPECT_TRUE(a.get()[0] == 0);
  CUgraphExec e = nullptr;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  for (int round = 1; round <= 3; ++round) {
    ASSERT_CU(cuGraphLaunch(e, s));
    ASSERT_CU(cuStreamSynchronize(s));
    std::vector<int32_t> ga = a.get(), gb = b.get();
    for (int i = 0; i < n; ++i)
      if (ga[i] != 2 * round || gb[i] != 6 * round)
        throw conf::Failure{"graph round " + std::to_string(round) + " element " + std::to_string(i) + ": " +
                            std::to_string(ga[i]) + ", " + std::to_string(gb[i])};
  }
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuStreamDestroy(s));
}

CONF_TEST(LaunchGraphKernelNodeCopiesParamsAndTakesExecUpdates) {
  kt::Module m(kModulePtx);
  CUfunction scale = m.fn("scale_copy");
  const int n = 64;
  std::vector<int32_t> in(n);
  for (int i = 0; i < n; ++i) in[i] = i;
  kt::Buf<int32_t> src(in), dst(n);
  int k = 5, count = n;
  void* params[] = {&src.p, &dst.p, &k, &count};
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = scale;
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = 64;
  p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = params;
  CUgraph g = nullptr;
  ASSERT_CU(cuGraphCreate(&g, 0));
  CUgraphNode node = nullptr;
  ASSERT_CU(cuGraphAddKernelNode(&node, g, nullptr, 0, &p));
  k = 1000;  // the node copied its parameters when it was added
  CUDA_KERNEL_NODE_PARAMS back{};
  ASSERT_CU(cuGraphKernelNodeGetParams(node, &back));
  EXPECT_TRUE(back.func == scale && back.blockDimX == 64 && back.gridDimX == 1);
  CUgraphExec e = nullptr;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  ASSERT_CU(cuGraphLaunch(e, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  std::vector<int32_t> got = dst.get();
  for (int i = 0; i < n; ++i)
    if (got[i] != i * 5)
      throw conf::Failure{"kernel node element " + std::to_string(i) + ": " + std::to_string(got[i])};
  // Updated parameters in the executable graph take effect at its next launch.
  int k2 = -2;
  void* params2[] = {&src.p, &dst.p, &k2, &count};
  p.kernelParams = params2;
  ASSERT_CU(cuGraphExecKernelNodeSetParams(e, node, &p));
  ASSERT_CU(cuGraphLaunch(e, nullptr));
  ASSERT_CU(cuCtxSynchronize());
  got = dst.get();
  EXPECT_TRUE(got[7] == -14 && got[63] == -126);
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuGraphDestroy(g));
}

CONF_TEST(LaunchStreamsOrderedByEvents) {
  kt::Module m(kModulePtx);
  CUfunction slow = m.fn("delayed_store"), scale = m.fn("scale_copy");
  CUstream a, b;
  ASSERT_CU(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
  CUevent ev;
  ASSERT_CU(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
  kt::Buf<int32_t> p(1), q(1);
  for (int round = 0; round < 3; ++round) {
    int v = 40 + round, k = 3, one = 1;
    unsigned long long ns = 2000000;  // 2 ms, long enough for b to overtake a without the event
    ASSERT_CU(kt::launch(slow, {1}, {1}, 0, a, p.p, v, ns));
    ASSERT_CU(cuEventRecord(ev, a));
    ASSERT_CU(cuStreamWaitEvent(b, ev, 0));
    ASSERT_CU(kt::launch(scale, {1}, {1}, 0, b, p.p, q.p, k, one));
    ASSERT_CU(cuStreamSynchronize(b));
    int got = q.get()[0];
    if (got != 3 * v) throw conf::Failure{"round " + std::to_string(round) + ": b read " + std::to_string(got)};
    ASSERT_CU(cuStreamSynchronize(a));
  }
  // Kernels in one stream run in order too.
  ASSERT_CU(kt::launch(slow, {1}, {1}, 0, a, p.p, 7, 1000000ull));
  int k = 2, one = 1;
  ASSERT_CU(kt::launch(scale, {1}, {1}, 0, a, p.p, q.p, k, one));
  ASSERT_CU(cuStreamSynchronize(a));
  EXPECT_TRUE(q.get()[0] == 14);
  ASSERT_CU(cuEventDestroy(ev));
  ASSERT_CU(cuStreamDestroy(a));
  ASSERT_CU(cuStreamDestroy(b));
}

CONF_TEST(LaunchOccupancyQueriesGivePositiveAnswers) {
  kt::Module m(kModulePtx);
  int blocks = -1;
  ASSERT_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, m.fn("bounded"), 128, 0));
  conf::info_value("occupancy_bounded_128", blocks);
  EXPECT_TRUE(blocks > 0);
  ASSERT_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, m.fn("static_smem"), 256, 0));
  conf::info_value("occupancy_static_smem_256", blocks);
  EXPECT_TRUE(blocks > 0);
  int min_grid = 0, block = 0;
  ASSERT_CU(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, m.fn("add_one"), nullptr, 0, 0));
  conf::info_value("occupancy_potential_block_add_one", block);
  EXPECT_TRUE(block > 0 && block <= 1024 && min_grid > 0);
}

// Cluster occupancy. cucpu runs clusters of one block only, so its largest
// potential cluster is 1 and larger clusters have no occupancy
// (docs/conformance.md); the driver's figures are recorded.
CONF_TEST(ClusterOccupancyQueries) {
  kt::Module m(kModulePtx);
  CUfunction f = m.fn("add_one");
  CUlaunchAttribute at{};
  at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  at.value.clusterDim.x = 1;
  at.value.clusterDim.y = 1;
  at.value.clusterDim.z = 1;
  CUlaunchConfig cfg{};
  cfg.gridDimX = 16;
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.attrs = &at;
  cfg.numAttrs = 1;
  int size = -1, clusters = -1;
  ASSERT_CU(cuOccupancyMaxPotentialClusterSize(&size, f, &cfg));
  conf::info_value("potential_cluster_size", size);
  EXPECT_TRUE(conf::on_cucpu() ? size == 1 : size >= 1);
  ASSERT_CU(cuOccupancyMaxActiveClusters(&clusters, f, &cfg));
  conf::info_value("active_clusters_of_1", clusters);
  EXPECT_TRUE(clusters > 0);
  at.value.clusterDim.x = 2;
  ASSERT_CU(cuOccupancyMaxActiveClusters(&clusters, f, &cfg));
  conf::info_value("active_clusters_of_2", clusters);
  EXPECT_TRUE(conf::on_cucpu() ? clusters == 0 : clusters > 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveClusters(nullptr, f, &cfg));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveClusters(&clusters, f, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxPotentialClusterSize(nullptr, f, &cfg));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxPotentialClusterSize(&size, f, nullptr));
  CUresult r = cuOccupancyMaxActiveClusters(&clusters, nullptr, &cfg);
  conf::info("active_clusters_null_function", r);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, r);
  // No cluster size in the config and none required by the function:
  // answered as for clusters of one block (driver 580).
  cfg.numAttrs = 0;
  int unsized = -1;
  r = cuOccupancyMaxActiveClusters(&unsized, f, &cfg);
  conf::info("active_clusters_without_a_size", r);
  ASSERT_CU(r);
  at.value.clusterDim.x = 1;
  cfg.numAttrs = 1;
  ASSERT_CU(cuOccupancyMaxActiveClusters(&clusters, f, &cfg));
  EXPECT_TRUE(unsized == clusters);
  // A zero-sized block.
  cfg.numAttrs = 1;
  cfg.blockDimX = 0;
  r = cuOccupancyMaxActiveClusters(&clusters, f, &cfg);
  conf::info("active_clusters_empty_block", r);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, r);
}

// cuLaunchCooperativeKernel: every block resident at once, so grid.sync()
// (tests/kernels/cooperative.cu) orders the whole grid's writes and reads.
CONF_TEST(KernelCooperativeGridSyncOrdersTheWholeGrid) {
  kt::Module m("ptx/cooperative.sm90.ptx");
  CUfunction f = m.fn("grid_exchange");
  const unsigned blocks = 4, threads = 64, n = blocks * threads;
  kt::Buf<uint32_t> ranks(n), neighbours(n);
  void* args[] = {&ranks.p, &neighbours.p};
  EXPECT_CU(CUDA_SUCCESS, cuLaunchCooperativeKernel(f, blocks, 1, 1, threads, 1, 1, 0, nullptr, args));
  ASSERT_CU(cuCtxSynchronize());
  const std::vector<uint32_t> r = ranks.get(), nb = neighbours.get();
  for (unsigned i = 0; i < n; ++i) {
    EXPECT_TRUE(nb[i] == ((i + 1) % n) * 3 + 1);
    EXPECT_TRUE(r[i] == i * 3 + 1);
  }
}

// A cooperative launch captured into a graph stays cooperative: the
// replayed grid still synchronizes as a whole, twice.
CONF_TEST(KernelCooperativeLaunchCapturedStaysCooperative) {
  kt::Module m("ptx/cooperative.sm90.ptx");
  CUfunction f = m.fn("grid_exchange");
  const unsigned blocks = 4, threads = 64, n = blocks * threads;
  kt::Buf<uint32_t> ranks(n), neighbours(n);
  void* args[] = {&ranks.p, &neighbours.p};
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU(cuLaunchCooperativeKernel(f, blocks, 1, 1, threads, 1, 1, 0, s, args));
  CUgraph g;
  ASSERT_CU(cuStreamEndCapture(s, &g));
  CUgraphNode node;
  size_t count = 1;
  ASSERT_CU(cuGraphGetNodes(g, &node, &count));
  CUkernelNodeAttrValue v{};
  ASSERT_CU(cuGraphKernelNodeGetAttribute(node, CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, &v));
  conf::info_value("captured_cooperative_attribute", v.cooperative);
  CUgraphExec e;
  ASSERT_CU(cuGraphInstantiate(&e, g, 0));
  ASSERT_CU(cuGraphLaunch(e, s));
  ASSERT_CU(cuGraphLaunch(e, s));
  ASSERT_CU(cuStreamSynchronize(s));
  const std::vector<uint32_t> r = ranks.get(), nb = neighbours.get();
  for (unsigned i = 0; i < n; ++i) {
    EXPECT_TRUE(nb[i] == ((i + 1) % n) * 3 + 1);
    EXPECT_TRUE(r[i] == i * 3 + 1);
  }
  ASSERT_CU(cuGraphExecDestroy(e));
  ASSERT_CU(cuGraphDestroy(g));
  ASSERT_CU(cuStreamDestroy(s));
}

// The pre-4.0 launch API: block shape, shared size and packed parameters
// set on the function, then cuLaunchGrid / cuLaunchGridAsync / cuLaunch.
CONF_TEST(KernelLegacyLaunchApiRunsWithTheFunctionsSettings) {
  const char* ptx =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry fill(.param .u64 p, .param .u32 v)\n{\n.reg .b64 %rd<4>;\n.reg .b32 %r<6>;\n"
      "ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [v];\nmov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\n"
      "mov.u32 %r4, %tid.x;\nmad.lo.s32 %r5, %r2, %r3, %r4;\nmul.wide.s32 %rd2, %r5, 4;\nadd.s64 %rd3, %rd1, %rd2;\n"
      "st.global.u32 [%rd3], %r1;\nret;\n}\n";
  ASSERT_CU(cuCtxSetCurrent(conf::primary()));
  CUmodule m;
  CUfunction f;
  ASSERT_CU(cuModuleLoadData(&m, ptx));
  ASSERT_CU(cuModuleGetFunction(&f, m, "fill"));
  CUdeviceptr buf;
  ASSERT_CU(cuMemAlloc(&buf, 64 * sizeof(unsigned)));
  ASSERT_CU(cuMemsetD32(buf, 0, 64));
  ASSERT_CU(cuFuncSetBlockShape(f, 16, 1, 1));
  ASSERT_CU(cuFuncSetSharedSize(f, 0));
  ASSERT_CU(cuParamSetSize(f, 12));
  ASSERT_CU(cuParamSetv(f, 0, &buf, sizeof buf));
  ASSERT_CU(cuParamSeti(f, 8, 7));
  ASSERT_CU(cuLaunchGrid(f, 2, 1));
  ASSERT_CU(cuCtxSynchronize());
  unsigned out[64];
  ASSERT_CU(cuMemcpyDtoH(out, buf, sizeof out));
  EXPECT_TRUE(out[0] == 7 && out[31] == 7 && out[32] == 0);
  ASSERT_CU(cuParamSeti(f, 8, 9));
  CUstream s;
  ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  ASSERT_CU(cuLaunchGridAsync(f, 4, 1, s));
  ASSERT_CU(cuStreamSynchronize(s));
  ASSERT_CU(cuParamSeti(f, 8, 11));
  ASSERT_CU(cuLaunch(f));
  ASSERT_CU(cuCtxSynchronize());
  ASSERT_CU(cuMemcpyDtoH(out, buf, sizeof out));
  EXPECT_TRUE(out[0] == 11 && out[15] == 11 && out[16] == 9 && out[63] == 9);
  conf::info("legacy.param_past_end", cuParamSeti(f, 12, 1));
  conf::info("legacy.bad_block_shape", cuFuncSetBlockShape(f, 0, 1, 1));
  ASSERT_CU(cuStreamDestroy(s));
  ASSERT_CU(cuMemFree(buf));
  ASSERT_CU(cuModuleUnload(m));
}
